// Examples as tests (as LanceDB does): every ```ts block and every ```sh block of `tartan` commands in
// README.md and docs/*.md runs against the built package, on the real bundled data, and every ```ts block
// type-checks against the package's types. A block that cannot run here (a GPU, a server, a model or
// data that is not bundled) is fenced ```ts nocheck / ```sh nocheck: counted, type-checked if ts, not run.
// ```sh blocks without a tartan command (`npm ci`) and blocks of other languages (or none) are left alone.
//
// Where the blocks run (write snippets against these paths): a directory standing for a checkout of this
// repository after `npm run quickstart`, built once per test file:
//   ../shared/data/…            the bundled data (the real ../shared)
//   node_modules/tartan         this package, built (imports resolve through package.json "exports")
//   .tartan/quickstart/         the quick start's files (run on 40 test and 200 training questions):
//     pages.jsonl               SQuAD v1.1 dev as 48 KILT pages
//     test-gold.jsonl           KILT records of the held-out questions
//     ks/                       the knowledge-source store of the pages
//     index-bm25/               BM25 over the 2,067 paragraphs
//     reader-model.json         the trained extractive reader
//     test-predictions.jsonl    its KILT predictions for test-gold.jsonl
// Blocks of one file run in order in that directory, so a block may use what an earlier one wrote.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { CLI, REPO, SHARED, installedProject } from "../fixtures/installed.js";

interface Block {
  file: string;
  line: number;
  lang: string;
  nocheck: boolean;
  code: string;
}

/** The fenced blocks of a Markdown file (fences at the start of a line; the info string's first word is the language). */
export function fencedBlocks(file: string, text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})\s*([^\s`]*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^${open[1]}\\s*$`).test(lines[j])) body.push(lines[j++]);
    if (j === lines.length) throw new Error(`${file}:${i + 1}: code block never closed`);
    blocks.push({ file, line: i + 1, lang: open[2], nocheck: /\bnocheck\b/.test(open[3]), code: body.join("\n") });
    i = j;
  }
  return blocks;
}

/** The commands of a shell block, continuation lines joined, comments and blank lines dropped. */
function shellCommands(code: string): string[] {
  return code
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

const isTartanShell = (b: Block) => (b.lang === "sh" || b.lang === "bash") && shellCommands(b.code).some((c) => c.startsWith("tartan "));

const DOC_FILES = ["README.md", ...readdirSync(join(REPO, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];
const BLOCKS = DOC_FILES.flatMap((f) => fencedBlocks(f, readFileSync(join(REPO, f), "utf8")));
const TS = BLOCKS.filter((b) => b.lang === "ts" || b.lang === "typescript");
const SH = BLOCKS.filter(isTartanShell);
const counts = {
  ts: TS.filter((b) => !b.nocheck).length,
  sh: SH.filter((b) => !b.nocheck).length,
  nocheck: [...TS, ...SH].filter((b) => b.nocheck).map((b) => `${b.file}:${b.line}`),
};

const project = installedProject("tartan-docs-");
const root = project.dir; // holds `shared` (→ ../shared) and `work` (the checkout the blocks run in)
const work = join(root, "work");
const snippetDir = join(work, ".snippets");
const name = (b: Block) => `${b.file.replace(/[/.]/g, "_")}_${b.line}`;

beforeAll(() => {
  mkdirSync(join(work, "node_modules"), { recursive: true });
  symlinkSync(join(root, "node_modules", "tartan"), join(work, "node_modules", "tartan"), "dir");
  symlinkSync(SHARED, join(root, "shared"), "dir");
  writeFileSync(join(work, "package.json"), JSON.stringify({ name: "docs-snippets", private: true, type: "module" }));
  mkdirSync(join(root, "bin"));
  writeFileSync(join(root, "bin", "tartan"), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(root, "bin", "tartan"), 0o755);
  const q = spawnSync(process.execPath, [CLI, "quickstart", "--limit", "40", "--train-limit", "200"], { cwd: work, encoding: "utf8" });
  if (q.status !== 0) throw new Error(`tartan quickstart failed: ${q.stderr}`);
  mkdirSync(snippetDir);
  for (const b of TS) writeFileSync(join(snippetDir, `${name(b)}.ts`), `${b.code}\nexport {};\n`);
}, 300_000);

afterAll(() => {
  process.stderr.write(`docs snippets: ${counts.ts} ts and ${counts.sh} sh blocks run; ${counts.nocheck.length} nocheck (${counts.nocheck.join(", ")})\n`);
  project.dispose();
});

function where(b: Block): string {
  return `${b.file}:${b.line}`;
}

describe("docs snippets", () => {
  it("are found, and most of them run", () => {
    expect(counts.ts + counts.sh).toBeGreaterThan(counts.nocheck.length);
  });

  it("type-check against the package's public types (nocheck ones too)", () => {
    const checked = TS;
    const files = checked.map((b) => join(snippetDir, `${name(b)}.ts`));
    const program = ts.createProgram(files, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts"],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ["node"],
      typeRoots: [join(REPO, "node_modules/@types")],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
      if (!d.file || d.start === undefined) return text;
      const b = checked[files.indexOf(d.file.fileName)];
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      return b ? `${b.file}:${b.line + 1 + line}: ${text}` : `${d.file.fileName}: ${text}`;
    });
    expect(problems).toEqual([]);
  });

  for (const b of BLOCKS.filter((x) => (TS.includes(x) || SH.includes(x)) && !x.nocheck)) {
    it(`${where(b)} (${b.lang}) runs`, () => {
      let r;
      if (SH.includes(b)) {
        r = spawnSync("bash", ["-e", "-o", "pipefail", "-c", b.code], {
          cwd: work,
          encoding: "utf8",
          env: { ...process.env, PATH: `${join(root, "bin")}:${process.env.PATH}` },
          timeout: 240_000,
        });
      } else {
        const js = ts.transpileModule(readFileSync(join(snippetDir, `${name(b)}.ts`), "utf8"), {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
        }).outputText;
        const file = join(snippetDir, `${name(b)}.mjs`);
        writeFileSync(file, js);
        r = spawnSync(process.execPath, [file], { cwd: work, encoding: "utf8", timeout: 240_000 });
      }
      if (r.status !== 0) throw new Error(`${where(b)}: exit ${r.status ?? r.signal}\n${r.stderr}\n${r.stdout}`.trim());
    });
  }
});
