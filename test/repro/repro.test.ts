// The reproducibility matrices: `repro squad` on the bundled SQuAD source equals its references (exact
// figures), resumes cell by cell, and writes Markdown, self-contained HTML and JSON with the commands
// and input checksums; `repro kilt` runs its cells on a small synthetic KILT-format source (figures
// exact, Pyserini's references not met there, as expected) and through the CLI.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ingest } from "../../src/knowledge/ingest.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { reproSquad, reproKilt, kiltCells, devFile, checkFigure, cellChecksum, matrixHtml, matrixMarkdown, runMatrix, tally, type CellSpec, type MatrixResult, type StoredCell } from "../../src/repro/index.js";
import { writeSyntheticKilt } from "../fixtures/synthetic-kilt.js";
import { runCli } from "../fixtures/run-cli.js";

const SQUAD = join(__dirname, "../../../shared/data/squad/dev-v1.1.reconstructed.json");
const haveSquad = existsSync(SQUAD);
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "tartan-repro-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const figures = (m: MatrixResult) => m.cells.flatMap((c) => c.figures.map((f) => [c.id, f.level, f.metric, f.value, f.pass]));

describe("checkFigure", () => {
  it("passes within the tolerance, fails outside it, reports without a reference", () => {
    expect(checkFigure({ metric: "Rprec", level: "page", reference: { value: 0.9429, source: "lucene8-squad" }, tolerance: 0.0001 }, 0.9428571428571428)).toMatchObject({ pass: true, difference: 0.9428571428571428 - 0.9429 });
    expect(checkFigure({ metric: "Rprec", level: "page", reference: { value: 0.3821, source: "pyserini-kilt" }, tolerance: 0.01 }, 0.3922).pass).toBe(false);
    expect(checkFigure({ metric: "recall@100", level: "page", tolerance: 0.01 }, 0.5)).toEqual({ metric: "recall@100", level: "page", tolerance: 0.01, value: 0.5 });
  });
});

describe.runIf(haveSquad)("tartan repro squad", () => {
  let first: MatrixResult;
  beforeAll(async () => {
    first = await reproSquad({ squad: SQUAD, work: join(root, "squad") });
  }, 240_000);

  it("equals its references: BM25 paragraphs against Lucene 8, every cell against tartan's own figures", () => {
    expect(figures(first)).toEqual([
      ["bm25-paragraph", "page", "Rprec", 0.9428571428571428, true],
      ["bm25-paragraph", "page", "recall@5", 0.99120151371807, true],
      ["bm25-paragraph", "paragraph", "Rprec", 0.7752128666035951, true],
      ["bm25-paragraph", "paragraph", "recall@5", 0.9304635761589404, true],
      ["bm25-paragraph", "paragraph", "recall@20", 0.9732261116367077, true],
      ["bm25-passage", "page", "Rprec", 0.9387890255439925, true],
      ["bm25-passage", "page", "recall@5", 0.988647114474929, true],
      ["tfidf-page", "page", "Rprec", 0.9286660359508042, true],
      ["tfidf-page", "page", "recall@5", 0.9830652790917691, true],
    ]);
    expect([first.passed, first.failed, first.unchecked]).toEqual([9, 0, 0]);
    expect(first.cells.map((c) => c.records)).toEqual([10_570, 10_570, 10_570]);
  });

  it("records the exact commands and the inputs' checksums", () => {
    const work = join(root, "squad");
    const sum = `sha256:${createHash("sha256").update(readFileSync(SQUAD)).digest("hex")}`;
    expect(first.inputs[SQUAD]).toBe(sum);
    expect(first.cells[0].commands).toEqual([
      `tartan index build --kind bm25 --unit paragraph --ks ${work}/ks --out ${work}/indexes/bm25-paragraph`,
      `tartan retrieve --index ${work}/indexes/bm25-paragraph --input ${work}/gold.jsonl --out ${work}/runs/bm25-paragraph.jsonl --top-k 20 --text none`,
      `tartan eval ${work}/gold.jsonl ${work}/runs/bm25-paragraph.jsonl --mode retrieval --ks 5,20 --json`,
      `tartan eval ${work}/gold.jsonl ${work}/runs/bm25-paragraph.jsonl --mode retrieval --ks 5,20 --rank-keys wikipedia_id,start_paragraph_id --json`,
    ]);
    const md = matrixMarkdown(first);
    expect(md).toContain("| bm25-paragraph | SQuAD v1.1 dev | BM25 over paragraphs (EnglishAnalyzer, k1 0.9, b 0.4) | page R-precision | 0.9429 | 0.9429 | −4.3e-5 | ±0.0001 | ✔ | lucene8-squad |");
    expect(md).toContain(`| ${SQUAD} | \`${sum}\` |`);
    expect(md).toContain("- **lucene8-squad**: Lucene 8.7");
    const html = matrixHtml(first);
    expect(html).toMatch(/^<!doctype html>/u);
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/u); // self-contained
    expect(html).toContain('<td class="ok">✔</td>');
  });

  it("resumes cell by cell: a second run reuses every cell, a changed input runs them again", async () => {
    const again = await reproSquad({ squad: SQUAD, work: join(root, "squad") });
    expect(again.cells.map((c) => c.resumed)).toEqual([true, true, true]);
    expect(figures(again)).toEqual(figures(first));
    // a cell file from another spec is not reused
    const file = join(root, "squad", "cells", "tfidf-page.json");
    const stored = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...stored, key: "other" }));
    const third = await reproSquad({ squad: SQUAD, work: join(root, "squad") });
    expect(third.cells.map((c) => c.resumed)).toEqual([true, true, false]);
    expect(figures(third)).toEqual(figures(first));
  }, 120_000);
});

describe("tartan repro kilt on a synthetic KILT-format source", () => {
  let ks: string;
  let data: string;
  beforeAll(async () => {
    const s = await writeSyntheticKilt(join(root, "kilt"));
    data = s.data;
    ks = join(root, "kilt", "ks");
    await ingest(s.pages, { out: ks, force: true, workers: 0 });
  }, 60_000);

  // a pipeline cell of FEVER dev run by `run` (the quick start's two downstream figures)
  const PIPELINE_RESULT = { values: { "downstream:KILT-em": 0.31965531391054575, "downstream:em": 0.3206 }, records: 4874 };
  const pipelineCell = (id: string, run: (dir: string) => Promise<typeof PIPELINE_RESULT>): CellSpec => ({
    id,
    system: "BM25 + reader",
    dataset: "FEVER dev",
    index: { kind: "bm25", unit: "paragraph" },
    gold: join(data, "fever-dev-kilt.jsonl"),
    topK: 20,
    figures: [
      { metric: "KILT-em", level: "downstream", reference: { value: 0.3197, source: "tartan-quickstart" }, tolerance: 0.00005 },
      { metric: "em", level: "downstream", reference: { value: 0.3205, source: "tartan-quickstart" }, tolerance: 0.00005 },
    ],
    custom: { commands: ["tartan quickstart --work DIR"], run },
  });

  it("finds the dev files (TriviaQA only with its questions) and names missing ones", () => {
    expect(kiltCells(data).cells.map((c) => c.id)).toEqual(["fever/tfidf", "fever/bm25-document", "fever/bm25-passage", "nq/tfidf", "nq/bm25-document", "nq/bm25-passage"]);
    writeFileSync(join(data, "triviaqa-dev_id-kilt.jsonl"), "");
    expect(devFile("triviaqa", data)).toBe(null);
    rmSync(join(data, "triviaqa-dev_id-kilt.jsonl"));
    expect(() => kiltCells(data, { datasets: ["fever", "wow"] })).toThrow(`${data}: no dev file for wow (tartan datasets download wow:dev --out ${data})`);
    expect(() => kiltCells(data, { datasets: ["squad"] })).toThrow(/^unknown KILT dataset "squad"/u);
  });

  it("runs every cell with exact figures; Pyserini's references are not met on this source", async () => {
    const m = await reproKilt({ ks, data, work: join(root, "kilt", "work") });
    // 60 pages: every page is within the top 100, so recall@100 is 1
    expect(figures(m)).toEqual([
      ["fever/tfidf", "page", "Rprec", 0.975, false],
      ["fever/tfidf", "page", "recall@100", 1, false],
      ["fever/bm25-document", "page", "Rprec", 1, false],
      ["fever/bm25-document", "page", "recall@100", 1, false],
      ["fever/bm25-passage", "page", "Rprec", 1, false],
      ["fever/bm25-passage", "page", "recall@100", 1, false],
      ["nq/tfidf", "page", "Rprec", 0.975, false],
      ["nq/tfidf", "page", "recall@100", 1, false],
      ["nq/bm25-document", "page", "Rprec", 0.925, false],
      ["nq/bm25-document", "page", "recall@100", 1, false],
      ["nq/bm25-passage", "page", "Rprec", 0.95, false],
      ["nq/bm25-passage", "page", "recall@100", 1, false],
    ]);
    expect([m.passed, m.failed, m.unchecked]).toEqual([0, 12, 0]);
    expect(m.cells.map((c) => c.records)).toEqual([40, 40, 40, 40, 40, 40]);
    expect(m.cells[0].figures[0].reference).toEqual({ value: 0.5075, source: "pyserini-kilt" });
    expect(m.cells[1].figures[0].reference).toEqual({ value: 0.3821, source: "pyserini-kilt" });
    expect(m.notes[1]).toBe("For context (not checked: test answers are hidden), the KILT paper's TF-IDF R-precision on the test sets (Table 4): FEV 50.85, NQ 28.12.");
  }, 120_000);

  it("adds a cell per dataset for a prebuilt dense index, reported without a reference, its checksum among the inputs", async () => {
    const dense = join(root, "kilt", "dense");
    await buildIndex({ ks, kind: "dense", unit: "page", out: dense }, () => {});
    expect(() => kiltCells(data, { systems: ["dense"] })).toThrow("the dense cells need a prebuilt dense index (--dense DIR)");
    const m = await reproKilt({ ks, data, work: join(root, "kilt", "work-dense"), dense, systems: ["dense"], datasets: ["fever"] });
    expect(m.cells.map((c) => [c.id, c.system])).toEqual([["fever/dense", "dense over page units (use-lite encoder, prebuilt)"]]);
    expect(figures(m)).toEqual([
      ["fever/dense", "page", "Rprec", 0.25, undefined],
      ["fever/dense", "page", "recall@100", 1, undefined],
    ]);
    expect([m.passed, m.failed, m.unchecked]).toEqual([0, 0, 2]);
    expect(m.cells[0].inputs[dense]).toMatch(/^sha256:[0-9a-f]{64}$/u);
    expect(m.cells[0].commands[0]).toBe(`# prebuilt dense index ${dense} (tartan index verify ${dense})`);
    expect(m.notes[2]).toMatch(/^Dense cells \(.*\) are reported without a check; for context, DPR \(KILT's checkpoint\)/u);
  }, 180_000);

  it("runs a pipeline cell through its own runner, checks its downstream figures, and reuses it", async () => {
    const calls: string[] = [];
    const cell = pipelineCell("pipeline/x", async (dir) => {
      calls.push(dir);
      return PIPELINE_RESULT;
    });
    const work = join(root, "kilt", "work-pipeline");
    const [r] = await runMatrix([cell], { work, ks }, "sha256:0");
    expect(calls).toEqual([join(work, "pipelines", "pipeline-x")]);
    expect(r.figures.map((f) => [f.metric, f.value, f.pass])).toEqual([["KILT-em", 0.31965531391054575, true], ["em", 0.3206, false]]);
    expect([r.records, r.commands]).toEqual([4874, ["tartan quickstart --work DIR"]]);
    const [again] = await runMatrix([cell], { work, ks }, "sha256:0");
    expect([again.resumed, calls.length]).toEqual([true, 1]);
  });

  it("reuses a stored cell only while its content is intact: an edited figure is run again, never published as reproduced", async () => {
    let fail = false;
    const calls: string[] = [];
    const cell = pipelineCell("pipeline/y", async (dir) => {
      calls.push(dir);
      if (fail) throw new Error("the reader model is gone");
      return PIPELINE_RESULT;
    });
    const work = join(root, "kilt", "work-tampered");
    const file = join(work, "cells", "pipeline-y.json");
    const [first] = await runMatrix([cell], { work, ks }, "sha256:0");
    const stored = JSON.parse(readFileSync(file, "utf8")) as StoredCell;
    expect(stored.checksum).toBe(cellChecksum(first));
    expect(stored.checksum).toMatch(/^sha256:[0-9a-f]{64}$/u);
    const verdicts = (r: { figures: { metric: string; value: number; pass?: boolean }[] }) => r.figures.map((f) => [f.metric, f.value, f.pass]);
    const measured = [["KILT-em", 0.31965531391054575, true], ["em", 0.3206, false]];
    // the failing figure edited to the reference and marked passed, checksum left as it was
    const edited = { ...stored, figures: stored.figures.map((f) => (f.metric === "em" ? { ...f, value: 0.3205, difference: 0, pass: true } : f)) };
    // the same edit with its checksum made again: the verdict is re-checked from the value, so only the value can be forged
    const flipped = { ...stored, figures: stored.figures.map((f) => (f.metric === "em" ? { ...f, pass: true } : f)) };
    const otherInputs = { ...stored, inputs: { ...stored.inputs, [join(data, "fever-dev-kilt.jsonl")]: "sha256:1" } };
    const cases: [object, string][] = [
      [edited, "does not match its checksum (edited or damaged)"],
      [{ ...flipped, checksum: cellChecksum(flipped as StoredCell) }, "its figure downstream em does not follow from its value and reference"],
      [{ ...otherInputs, checksum: cellChecksum(otherInputs as StoredCell) }, "records other inputs than this run's"],
      [(({ checksum: _, ...rest }) => rest)(stored), "has no checksum of its content (written by an earlier tartan, or edited)"],
    ];
    for (const [content, why] of cases) {
      writeFileSync(file, JSON.stringify(content));
      const before = calls.length;
      const [r] = await runMatrix([cell], { work, ks }, "sha256:0");
      expect([calls.length - before, r.resumed, r.rerun, verdicts(r)]).toEqual([1, false, `its stored result ${file} ${why}`, measured]);
      expect(tally([r])).toEqual({ passed: 1, failed: 1, unchecked: 0 });
      // the report says why the cell was run again
      const m = { title: "t", notes: [], cells: [r], inputs: {}, setup: [], ...tally([r]), created: "now", tartanVersion: "0" } satisfies MatrixResult;
      expect(matrixMarkdown(m)).toContain(`(1 run again: a stored result failed its check)`);
      expect(matrixMarkdown(m)).toContain(` Run again: its stored result ${file} ${why}.`);
      // stored again, whole: the next run reuses it
      const [again] = await runMatrix([cell], { work, ks }, "sha256:0");
      expect([again.resumed, again.rerun, verdicts(again), calls.length - before]).toEqual([true, undefined, measured, 1]);
    }
    // a cell that fails its check and cannot be run again: the error says both
    writeFileSync(file, JSON.stringify(edited));
    fail = true;
    await expect(runMatrix([cell], { work, ks }, "sha256:0")).rejects.toThrow(`pipeline/y: its stored result ${file} does not match its checksum (edited or damaged), and running the cell again failed: the reader model is gone`);
  });

  it("through the CLI: JSON on stdout, pages written, exit 1 when a figure is not reproduced", async () => {
    const out = join(root, "kilt", "cli");
    const r = await runCli(["repro", "kilt", "--ks", ks, "--data", data, "--out", out, "--datasets", "fever", "--systems", "bm25-document", "--json"]);
    expect(r.status).toBe(1);
    const m = JSON.parse(r.stdout) as MatrixResult;
    expect(m.cells.map((c) => c.id)).toEqual(["fever/bm25-document"]);
    for (const f of ["report.md", "report.html", "report.json"]) expect(existsSync(join(out, f))).toBe(true);
    const bad = await runCli(["repro", "kilt", "--ks", ks, "--data", data, "--systems", "bm25"]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('tartan: --systems: unknown retriever "bm25" (tfidf, bm25-document, bm25-passage, dense)\n');
  }, 120_000);
});
