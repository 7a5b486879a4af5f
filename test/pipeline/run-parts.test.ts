// The pipeline's building blocks: queries without entity markers, provenance merging, resuming an
// interrupted output file (torn last line cut, written ids skipped), and the written report.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/eval/evaluate.js";
import { mergeProvenance, queryOf, resumeOutput } from "../../src/pipeline/run.js";
import { headline, headlineTable, htmlReport, markdownReport } from "../../src/pipeline/report.js";

const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-pipeline-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("queryOf", () => {
  it("strips KILT's entity markers for text retrievers and keeps them for entity retrieval", () => {
    const rec = { id: 1, input: "He played for [START_ENT] Arsenal [END_ENT] in 1990.", output: [] };
    expect(queryOf(rec)).toBe("He played for Arsenal in 1990.");
    expect(queryOf(rec, true)).toBe(rec.input);
  });
});

describe("mergeProvenance", () => {
  it("puts the reader's evidence first (as retrieved, with its text), drops repeats, and stops at k", () => {
    const a = { wikipedia_id: "1", start_paragraph_id: 3, start_character: 0, end_character: 10 };
    const b = { wikipedia_id: "2", start_paragraph_id: 1, start_character: 0, end_character: 5 };
    const c = { wikipedia_id: "3", start_paragraph_id: 1 };
    const bRetrieved = { ...b, score: 2, text: "the passage" };
    expect(mergeProvenance([b], [a, bRetrieved, c], 10)).toEqual([bRetrieved, a, c]);
    expect(mergeProvenance([c], [a], 10)).toEqual([c, a]);
    expect(mergeProvenance([], [a, b, c], 2)).toEqual([a, b]);
  });
});

describe("resumeOutput", () => {
  it("returns the ids already written and cuts a torn last line", async () => {
    const out = join(tmp, "out.jsonl");
    writeFileSync(out, '{"id": 7, "output": []}\n{"id": " b ", "output": []}\n{"id": "c", "outp');
    const done = await resumeOutput(out);
    expect([...done].sort()).toEqual(["7", "b"]);
    expect(readFileSync(out, "utf8")).toBe('{"id": 7, "output": []}\n{"id": " b ", "output": []}\n');
    expect([...(await resumeOutput(join(tmp, "missing.jsonl")))]).toEqual([]);
  });
});

describe("report", () => {
  it("renders the KILT table as text, Markdown and HTML with a chart", async () => {
    const result = await evaluate(join(FIX, "real-hotpotqa-dev-0-1499", "gold.jsonl"), join(FIX, "real-hotpotqa-dev-0-1499", "guess.jsonl"));
    const h = headline(result);
    const exp = JSON.parse(readFileSync(join(FIX, "real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    expect(h).toEqual({
      Rprec: exp.eval_retrieval.Rprec,
      "recall@5": exp.eval_retrieval["recall@5"],
      em: exp.eval_downstream.downstream.em,
      f1: exp.eval_downstream.downstream.f1,
      "KILT-em": exp.eval_downstream.kilt["KILT-em"],
      "KILT-f1": exp.eval_downstream.kilt["KILT-f1"],
    });
    const systems = [{ name: "fixture system", result }];
    expect(headlineTable(systems).split("\n")[1]).toBe("fixture system   38.27     42.53  56.67  65.35     7.00     8.45");
    const md = markdownReport({ title: "Run", notes: ["HotpotQA dev, first 1,500"], systems });
    expect(md).toContain("| fixture system | 38.27 | 42.53 | 56.67 | 65.35 | 7.00 | 8.45 |");
    const html = htmlReport({ title: "Run <1>", notes: ["n"], systems });
    expect(html).toContain("<title>Run &lt;1&gt;</title>");
    expect(html).toContain("<svg");
    expect(html.match(/<rect /g)!.length).toBe(6 + 1);
  });
});
