// The public API as a user imports it: every entry point in package.json "exports" loads from the built
// package by name, with its types, and holds the names the docs use; deep imports (`tartan/dist/…`)
// are refused; every src/ folder with an index.ts is an entry point (or named internal here).

import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { REPO, entryPoints, installedProject } from "./fixtures/installed.js";

/** Folders with an index.ts that are not entry points: the CLI is a program, not a library. */
const INTERNAL = new Set(["cli"]);

/** Names each entry point must export: the ones README.md and docs/ use, and the main pieces. */
const REQUIRED: Record<string, string[]> = {
  tartan: ["evaluate", "readJsonl", "validateFile", "formatResult", "officialJson", "evaluateTask", "findDataset", "knowledge", "retrieval", "readers", "pipeline", "mapping", "analysis", "mintaka", "wikireading", "baselines", "compare", "runs", "trec", "artefacts", "repro"],
  "tartan/records": ["readJsonl", "readJsonlAll", "scanJsonl", "writeJsonl", "JsonlWriter", "LineError", "validateFile", "formatReport"],
  "tartan/eval": ["evaluate", "evaluateDirectories", "evaluateTask", "normalizeAnswer", "rougeL", "f1Score", "formatResult", "officialJson"],
  "tartan/datasets": ["DATASETS", "findDataset", "datasetForFile", "readMintakaFile", "mintakaToKilt", "readWikiReading", "wikiReadingToKilt", "DOWNLOADS", "resolveDownloads", "downloadDatasets", "downloadFile"],
  "tartan/artefacts": ["packArtefact", "pullArtefact", "readCatalogue", "loadCatalogue", "findArtefact", "addToCatalogue", "TarReader"],
  "tartan/repro": ["reproSquad", "reproKilt", "runMatrix", "matrixMarkdown", "matrixHtml", "SOURCES"],
  "tartan/knowledge": ["KnowledgeSource", "ingest", "provenanceText", "readSquadFile", "squadToPages", "squadQuestionsToKilt"],
  "tartan/retrieval": [
    "openIndex", "openIndexes", "buildIndex", "buildBm25Index", "openBm25", "buildTfidfIndex", "openTfidf", "buildEntityIndex", "openEntity",
    "buildDenseIndex", "openDense", "buildDenseFromVectors", "HybridRetriever", "SearchPool", "UnitStore", "unitsFromPagesFile", "bm25", "tfidf", "entity", "dense",
  ],
  "tartan/readers": ["ExtractiveReader", "trainReader", "loadSquad", "splitByArticle", "ArticlePassages", "GenerativeReader", "OnnxQaReader", "FactCheckReader", "EntityLinkingReader", "SlotFillingReader", "DialogueReader"],
  "tartan/pipeline": ["runPipeline", "quickstart", "markdownReport", "htmlReport"],
  "tartan/mapping": ["ProvenanceMapper", "mapFile", "kiltBleu"],
  "tartan/analysis": ["analyzeOverlap"],
  "tartan/baselines": ["trainBaseline", "predictAnswer", "saveBaseline", "loadBaseline"],
  "tartan/compare": ["compareRuns", "pairedTTest", "wilcoxonTest", "randomizationTest", "bootstrapMeans", "adjustPValues", "renderComparison", "scorePredictions", "readPerQueryFile"],
  "tartan/runs": ["openRunsStore", "SqliteRunsStore", "makeRun"],
  "tartan/trec": ["readQrels", "readRun", "trecEval", "parseMeasures", "formatTrecEval", "qrelsFromGold", "runToKilt"],
  "tartan/mcp": ["createMcpServer", "serveMcpStdio", "startMcpHttp", "mcpHttpApp", "ToolFiles"],
  "tartan/server": ["startServer", "createApp", "Resources", "isLoopback", "openApiDocument", "DEFAULT_SETTINGS"],
  "tartan/backends": ["openKnowledgeSource", "openRetriever", "openRuns", "backendFor", "registerBackend", "BACKENDS", "ClickHouseKnowledgeSource", "ingestClickHouse", "ClickHouseBm25Retriever", "buildBm25ClickHouse", "startCluster", "stopCluster"],
};

const project = installedProject();
afterAll(() => project.dispose());

/** Runs ES module code in the user's project and returns what it prints as JSON. */
function runInProject(code: string): unknown {
  const file = join(project.dir, `probe-${Math.random().toString(36).slice(2)}.mjs`);
  writeFileSync(file, code);
  const r = spawnSync(process.execPath, [file], { cwd: project.dir, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`node ${file} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

describe("public entry points", () => {
  const points = entryPoints();

  it("are the src/ folders with an index.ts, and the package root", () => {
    const folders = readdirSync(join(REPO, "src"), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(REPO, "src", d.name, "index.ts")) && !INTERNAL.has(d.name))
      .map((d) => `tartan/${d.name}`);
    // A new src/ folder with an index.ts needs its line in package.json "exports" (and in docs/architecture.md).
    expect(points.slice().sort()).toEqual(["tartan", ...folders].sort());
    expect(Object.keys(REQUIRED).sort()).toEqual(points.slice().sort());
  });

  it("load by name from the built package and export the documented names", () => {
    const loaded = runInProject(`
      const out = {};
      for (const name of ${JSON.stringify(points)}) {
        const m = await import(name);
        out[name] = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]));
      }
      const root = await import("tartan");
      out.namespaces = {};
      for (const ns of ["knowledge", "retrieval", "readers", "pipeline", "mapping", "analysis", "baselines", "compare", "runs", "trec"]) {
        const sub = await import("tartan/" + ns);
        out.namespaces[ns] = Object.keys(sub).every((k) => root[ns][k] === sub[k]) && Object.keys(root[ns]).length === Object.keys(sub).length;
      }
      // tartan/retrieval: each kind's classes in its namespace; hashing, top-k and kernels not exported anywhere.
      const r = await import("tartan/retrieval");
      out.kinds = { bm25: typeof r.bm25.Bm25Retriever, tfidf: typeof r.tfidf.TfidfRetriever, entity: typeof r.entity.EntityRetriever, dense: typeof r.dense.DenseRetriever };
      out.internals = ["murmur3", "hashBucket", "topK", "mentionKey", "findMentions", "STOPWORDS", "localRangeSearcher"].filter((k) => [r, r.bm25, r.tfidf, r.entity, r.dense].some((m) => k in m));
      try { await import("tartan/dist/src/retrieval/index.js"); out.deep = "loaded"; } catch (e) { out.deep = e.code; }
      console.log(JSON.stringify(out));
    `) as Record<string, Record<string, string>> & { namespaces: Record<string, boolean>; kinds: Record<string, string>; internals: string[]; deep: string };
    for (const [point, names] of Object.entries(REQUIRED)) {
      const have = loaded[point];
      for (const name of names) expect(have?.[name], `${point} exports ${name}`).toMatch(/^(function|object)$/);
    }
    // `import { retrieval } from "tartan"` and `import * as retrieval from "tartan/retrieval"` are the same module.
    expect(loaded.namespaces).toEqual({ knowledge: true, retrieval: true, readers: true, pipeline: true, mapping: true, analysis: true, baselines: true, compare: true, runs: true, trec: true });
    expect(loaded.kinds).toEqual({ bm25: "function", tfidf: "function", entity: "function", dense: "function" });
    expect(loaded.internals).toEqual([]);
    expect(loaded.deep).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("carry their types: a user's TypeScript (NodeNext) type-checks against them", () => {
    const file = join(project.dir, "check.ts");
    const lines = Object.entries(REQUIRED).map(([point, names], i) => `import { ${names.map((n) => `${n} as n${i}_${n}`).join(", ")} } from "${point}";\nvoid [${names.map((n) => `n${i}_${n}`).join(", ")}];`);
    lines.push(`import type { GenerativeReaderOptions, OnnxQaReaderOptions } from "tartan/readers";`);
    lines.push(`import type { Hit, Retriever, dense } from "tartan/retrieval";`);
    lines.push(`type Encoder = dense.Encoder; type EncoderSpec = dense.EncoderSpec;`);
    lines.push(`import type { KiltRecord, KiltPage, Provenance } from "tartan/records";`);
    lines.push(`import type { ServeOptions, RunningServer, ServerSettings } from "tartan/server";`);
    lines.push(`export type S = [ServeOptions, RunningServer, ServerSettings];`);
    lines.push(`const spec: EncoderSpec = { type: "use-lite" }; const opts: GenerativeReaderOptions = { task: "nq" }; const onnx: OnnxQaReaderOptions = { model: "m" };`);
    lines.push(`export type T = [Encoder, Hit, Retriever, KiltRecord, KiltPage, Provenance, typeof spec, typeof opts, typeof onnx];`);
    writeFileSync(file, `${lines.join("\n")}\n`);
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(REPO, "node_modules/@types")],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(problems).toEqual([]);
  });
});
