// The pipeline's building blocks: queries without entity markers, provenance merging, resuming an
// interrupted output file (torn last line cut, written ids skipped), and the written report.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate } from "../../src/eval/evaluate.js";
import { markRunOutput, mergeProvenance, queryOf, resumeOutput } from "../../src/pipeline/run.js";
import { headline, headlineTable, htmlReport, markdownReport } from "../../src/pipeline/report.js";

const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-pipeline-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("queryOf", () => {
  it("strips KILT's entity markers for text retrievers (by KILT's rule: removed, the ends stripped) and keeps them for entity retrieval", () => {
    const rec = { id: 1, input: "He played for [START_ENT] Arsenal [END_ENT] in 1990.", output: [] };
    expect(queryOf(rec)).toBe("He played for  Arsenal  in 1990.");
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
  it("cuts a torn last line only in an output this run marked, and returns the ids already written", async () => {
    const out = join(tmp, "out.jsonl");
    const input = join(tmp, "in.jsonl");
    expect([...(await resumeOutput(out, input))]).toEqual([]); // creates and marks it
    writeFileSync(out, '{"id": 7, "output": []}\n{"id": " b ", "output": []}\n{"id": "c", "outp'); // as a killed run leaves it
    markRunOutput(out, input);
    const done = await resumeOutput(out, input);
    expect([...done].sort()).toEqual(["7", "b"]);
    expect(readFileSync(out, "utf8")).toBe('{"id": 7, "output": []}\n{"id": " b ", "output": []}\n');
    await expect(resumeOutput(out, join(tmp, "other.jsonl"))).rejects.toThrow(`${out} holds predictions for ${input}, not ${join(tmp, "other.jsonl")}`);
  });

  it("refuses a file it did not write and never cuts its last line (a KILT dev file given as --out)", async () => {
    const copy = join(tmp, "nq-copy.jsonl");
    const text = '{"id": "1", "input": "q1"}\n{"id": "2", "input": "q2"}'; // no final newline
    writeFileSync(copy, text);
    await expect(resumeOutput(copy, join(tmp, "in.jsonl"))).rejects.toThrow(`${copy} exists and was not written by tartan run (no ${copy}.run.json)`);
    expect(readFileSync(copy, "utf8")).toBe(text);
    // A marked output with another file copied over it is refused too.
    const out = join(tmp, "replaced.jsonl");
    await resumeOutput(out, join(tmp, "in.jsonl"));
    writeFileSync(out, '{"id": "mine", "output": []}\n');
    markRunOutput(out, join(tmp, "in.jsonl"));
    writeFileSync(out, text);
    await expect(resumeOutput(out, join(tmp, "in.jsonl"))).rejects.toThrow(`${out} is not the file ${out}.run.json belongs to`);
    expect(readFileSync(out, "utf8")).toBe(text);
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
