// Tests for `validateFile` and `tartan validate`: the real KILT files pass with their real quirks as
// warnings; malformed task files and page files fail with the right problems and line numbers.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeJsonl } from "../../src/records/jsonl.js";
import { formatReport, validateFile, type ValidationReport } from "../../src/records/validate.js";

const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-validate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tempFile(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

/** [severity, problem, records, lines] per problem kind: the part of a report the tests pin down. */
const brief = (r: ValidationReport) => r.problems.map((p) => [p.severity, p.problem, p.records, p.lines]);

function tartan(...args: string[]) {
  const res = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe("validateFile on the real KILT files", () => {
  const samples = readdirSync(join(DATA, "kilt-samples")).sort();
  const all = [1, 2, 3, 4, 5];
  const outputMissing = ["warning", "output missing", 5, all];
  const inputMissing = ["warning", "input missing", 5, all];

  it("passes every kilt-samples file, reporting only their real quirks", async () => {
    const results: Record<string, unknown[]> = {};
    for (const name of samples) {
      const r = await validateFile(join(DATA, "kilt-samples", name));
      expect([name, r.valid, r.kind, r.records, r.errors, r.badLines]).toEqual([name, true, "task", 5, 0, 0]);
      if (r.problems.length > 0) results[name] = brief(r);
    }
    expect(results).toEqual({
      "eli5-test_without_answers-kilt.jsonl": [outputMissing],
      "fever-test_without_answers-kilt.jsonl": [outputMissing],
      "hotpotqa-test_without_answers-kilt.jsonl": [outputMissing],
      // NQ's provenance of "where are the giant redwoods located": paragraph 0, characters 0-0.
      "nq-dev-kilt.jsonl": [["warning", "empty evidence span", 1, [5]]],
      "nq-test_without_answers-kilt.jsonl": [outputMissing],
      "structured_zeroshot-test_without_answers-kilt.jsonl": [outputMissing],
      "trex-test_without_answers-kilt.jsonl": [outputMissing],
      "triviaqa-dev_id-kilt.jsonl": [inputMissing],
      "triviaqa-test_id_without_answers-kilt.jsonl": [inputMissing, outputMissing],
      "triviaqa-train_id-kilt.jsonl": [inputMissing],
      "wned-test_without_answers-kilt.jsonl": [outputMissing],
      "wow-test_without_answers-kilt.jsonl": [outputMissing],
    });
  });

  it("passes the complete HotpotQA and Wizard of Wikipedia dev files without a problem", async () => {
    const hotpot = await validateFile(join(DATA, "kilt-dev", "hotpotqa-dev-kilt.jsonl"));
    const wow = await validateFile(join(DATA, "kilt-dev", "wow-dev-kilt.jsonl"));
    expect([hotpot.records, hotpot.valid, hotpot.warnings, hotpot.problems]).toEqual([5600, true, 0, []]);
    expect([wow.records, wow.valid, wow.warnings, wow.problems]).toEqual([3054, true, 0, []]);
  });

  it("makes a missing output an error outside test files", async () => {
    const r = await validateFile(join(DATA, "kilt-samples", "nq-test_without_answers-kilt.jsonl"), { withoutAnswers: false });
    expect(brief(r)).toEqual([["error", "output missing", 5, all]]);
    expect(r.valid).toBe(false);
  });
});

describe("validateFile on malformed task files", () => {
  const bad = [
    '{"id": "a", "input": "q", "output": [{"answer": "x"}]}',
    '{"id": " a ", "input": "q", "output": [{"answer": "y"}]}',
    '{"id": "b", "input": "q", "output": [{"answer": 5}]',
    '{"id": 7, "input": "q", "output": [{"answer": 5}, {"answer": "  "}]}',
    "[1]",
    '{"id": 7.5, "output": [{"answer": "z"}]}',
    '{"input": 3, "output": []}',
    '{"id": "7", "input": "q", "output": [{"provenance": [{"title": "T"}, {"wikipedia_id": "1", "start_paragraph_id": 3, "end_paragraph_id": 2, "bleu_score": 1.5}]}]}',
    '{"id": "c", "input": "q", "output": [{"provenance": [{"wikipedia_id": "1", "start_paragraph_id": 2, "end_paragraph_id": 2, "start_character": 9, "end_character": 4}, {"wikipedia_id": "1", "start_paragraph_id": "2", "end_paragraph_id": 2, "start_character": -1, "end_character": 4}]}, {}, "x"]}',
    '{"id": "d", "input": "q", "output": {"answer": "x"}}',
    '{"id": "e", "input": "q"}',
    '{"id": "f", "input": " ", "output": [{"answer": "x", "provenance": "p"}, {"provenance": [3, {"wikipedia_id": 1.5, "title": 4}]}]}',
    '{"id": "a", "input": "q", "output": [{"answer": "x"}]}',
  ];

  it("reports every broken rule with its lines, errors before warnings", async () => {
    const r = await validateFile(tempFile("bad.jsonl", bad));
    expect([r.kind, r.records, r.badLines, r.errors, r.warnings, r.valid]).toEqual(["task", 11, 2, 22, 5, false]);
    expect(brief(r)).toEqual([
      ["error", "duplicate id", 3, [2, 8, 13]],
      ["error", "invalid JSON", 1, [3]],
      ["error", "answer not a string", 1, [4]],
      ["error", "not a JSON object", 1, [5]],
      ["error", "id not a string or an int", 1, [6]],
      ["error", "id missing", 1, [7]],
      ["error", "input not a string", 1, [7]],
      ["error", "output empty", 1, [7]],
      ["error", "provenance without wikipedia_id", 1, [8]],
      ["error", "start_paragraph_id > end_paragraph_id", 1, [8]],
      ["error", "bleu_score not a number in [0, 1]", 1, [8]],
      ["error", "start_character > end_character", 1, [9]],
      ["error", "character offset not a non-negative int", 1, [9]],
      ["error", "output element not an object", 1, [9]],
      ["error", "output not a list", 1, [10]],
      ["error", "output missing", 1, [11]],
      ["error", "provenance not a list", 1, [12]],
      ["error", "provenance element not an object", 1, [12]],
      ["error", "wikipedia_id not a string or an int", 1, [12]],
      ["error", "provenance title not a string", 1, [12]],
      ["warning", "empty answer", 1, [4]],
      ["warning", "input missing", 1, [6]],
      ["warning", "paragraph id written as a string", 1, [9]],
      ["warning", "output with neither answer nor provenance", 1, [9]],
      ["warning", "empty input", 1, [12]],
    ]);
    const examples = Object.fromEntries(r.problems.map((p) => [p.problem, p.example]));
    expect(examples["duplicate id"]).toEqual({ line: 2, detail: 'id "a" first seen on line 1' });
    expect(examples["invalid JSON"].detail.startsWith("invalid JSON (")).toBe(true);
    expect(examples["not a JSON object"]).toEqual({ line: 5, detail: "expected a JSON object, found an array" });
    expect(examples["id not a string or an int"].detail).toBe('id 7.5 (Python str: "7.5")');
    expect(examples["start_character > end_character"].detail).toBe("output[0].provenance[0]: paragraph 2, characters 9 > 4");
  });

  it("matches ids as Python's str(id).strip(): 1, \"1\" and \" 1 \" collide, a float spelled 5.0 is not an int", async () => {
    const r = await validateFile(
      tempFile("ids.jsonl", [
        '{"id": 1, "input": "q", "output": [{"answer": "x"}]}',
        '{"id": "1", "input": "q", "output": [{"answer": "x"}]}',
        '{"id": " 1\\u3000", "input": "q", "output": [{"answer": "x"}]}',
        '{"id": 5.0, "input": "q", "output": [{"answer": "x"}]}',
        '{"id": "5", "input": "q", "output": [{"answer": "x"}]}',
        '{"id": -8366545547296627039, "input": "q", "output": [{"answer": "x"}]}',
        '{"id": -8366545547296627040, "input": "q", "output": [{"answer": "x"}]}',
        '{"id": "  ", "input": "q", "output": [{"answer": "x"}]}',
      ]),
    );
    expect(brief(r)).toEqual([
      ["error", "duplicate id", 2, [2, 3]],
      ["error", "id not a string or an int", 1, [4]],
      ["warning", "empty id", 1, [8]],
    ]);
  });

  it("counts a problem once per record and each occurrence separately", async () => {
    const prov = (b: number) => `{"wikipedia_id": "1", "bleu_score": ${b}}`;
    const r = await validateFile(
      tempFile("bleu.jsonl", [
        `{"id": "a", "input": "q", "output": [{"provenance": [${prov(2)}, ${prov(-1)}, ${prov(0.5)}]}]}`,
        `{"id": "b", "input": "q", "output": [{"provenance": [${prov(3)}]}]}`,
      ]),
    );
    expect(r.problems.map((p) => [p.problem, p.records, p.occurrences, p.lines])).toEqual([["bleu_score not a number in [0, 1]", 2, 3, [1, 2]]]);
    expect(r.errors).toBe(2);
  });

  it("keeps only the first maxExamples line numbers", async () => {
    const lines = Array.from({ length: 9 }, () => '{"id": "same", "input": "q", "output": [{"answer": "x"}]}');
    const r = await validateFile(tempFile("dups.jsonl", lines), { maxExamples: 3 });
    expect(brief(r)).toEqual([["error", "duplicate id", 8, [2, 3, 4]]]);
    expect(formatReport(r).split("\n")[1]).toBe("  error    duplicate id (8 records) lines 2, 3, 4, ...");
  });

  it("reads .gz files and warns about a file without records", async () => {
    const gz = join(dir, "guess.jsonl.gz");
    await writeJsonl(gz, [{ id: "a", input: "q", output: [{ answer: "x" }] }, { id: "a", input: "q", output: [{ answer: "" }] }]);
    const r = await validateFile(gz);
    expect([r.records, ...brief(r)]).toEqual([2, ["error", "duplicate id", 1, [2]], ["warning", "empty answer", 1, [2]]]);
    const empty = await validateFile(tempFile("empty.jsonl", [""]));
    expect([empty.records, empty.blankLines, empty.valid, empty.problems.map((p) => p.problem)]).toEqual([0, 1, true, ["no records"]]);
  });
});

describe("validateFile on knowledge-source pages", () => {
  const page = (over: Record<string, unknown>) =>
    JSON.stringify({
      _id: "1101759",
      wikipedia_id: "1101759",
      wikipedia_title: "Email marketing",
      text: ["Email marketing\n", "Email marketing is the act of sending a commercial message.\n"],
      anchors: [{ text: "commercial", href: "Advertising", paragraph_id: 1, start: 40, end: 50 }],
      ...over,
    });

  it("guesses the kind from the first record and accepts a well-formed page", async () => {
    const r = await validateFile(tempFile("pages-ok.jsonl", [page({}), page({ _id: "2", wikipedia_id: "2", anchors: [] })]));
    expect([r.kind, r.kindGuessed, r.records, r.problems]).toEqual(["page", true, 2, []]);
  });

  it("reports broken pages", async () => {
    const r = await validateFile(
      tempFile("pages-bad.jsonl", [
        page({}),
        page({}),
        page({ _id: "3", wikipedia_id: 3 }),
        page({ _id: "4", wikipedia_id: "4", text: [] }),
        page({ _id: "5", wikipedia_id: "5", text: ["t", 7], wikipedia_title: null }),
        page({ _id: "6", wikipedia_id: "6", anchors: [{ paragraph_id: 2, start: 5, end: 1 }, "a"] }),
        JSON.stringify({ wikipedia_title: "No id", text: "one string" }),
      ]),
    );
    expect(brief(r)).toEqual([
      ["error", "duplicate wikipedia_id", 1, [2]],
      ["error", "wikipedia_id not a string", 1, [3]],
      ["error", "_id differs from wikipedia_id", 1, [3]],
      ["error", "text empty", 1, [4]],
      ["error", "anchor paragraph_id out of range", 2, [4, 6]],
      ["error", "wikipedia_title not a string", 1, [5]],
      ["error", "paragraph not a string", 1, [5]],
      ["error", "anchor offsets not 0 <= start <= end", 1, [6]],
      ["error", "anchor not an object", 1, [6]],
      ["error", "wikipedia_id missing", 1, [7]],
      ["error", "text not a list", 1, [7]],
    ]);
  });

  it("checks a task file as pages when told to", async () => {
    const r = await validateFile(join(DATA, "kilt-samples", "fever-dev-kilt.jsonl"), { kind: "page" });
    expect([r.kind, r.kindGuessed, r.valid]).toEqual(["page", false, false]);
    expect(brief(r)).toEqual([
      ["error", "wikipedia_id missing", 5, [1, 2, 3, 4, 5]],
      ["error", "wikipedia_title missing", 5, [1, 2, 3, 4, 5]],
      ["error", "text missing", 5, [1, 2, 3, 4, 5]],
    ]);
  });
});

describe("tartan validate", () => {
  it("exits 0 on all the real files and prints their quirks", () => {
    const samples = readdirSync(join(DATA, "kilt-samples")).map((f) => join(DATA, "kilt-samples", f));
    const dev = readdirSync(join(DATA, "kilt-dev")).map((f) => join(DATA, "kilt-dev", f));
    const res = tartan("validate", ...samples, ...dev);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe("");
    expect(res.stdout.trimEnd().split("\n").at(-1)).toBe("28 files: 28 valid, 0 invalid");
    const tqa = join(DATA, "kilt-samples", "triviaqa-dev_id-kilt.jsonl");
    expect(tartan("validate", tqa).stdout).toBe(
      [
        `${tqa}: 5 task records`,
        "  warning  input missing (5 records) lines 1, 2, 3, 4, 5",
        "           e.g. line 1: no input field",
        "  => valid, with warnings (0 errors, 5 warnings)",
        "",
      ].join("\n"),
    );
  });

  it("exits 1 on a malformed file and names the bad lines", () => {
    const path = tempFile("cli-bad.jsonl", [
      '{"id": "a", "input": "q", "output": [{"answer": "x"}]}',
      '{"id": "b", "input": "q", "output": [{"answer": "x"}]}',
      '{"id": "c", "input": "q", "output": [{"answer": "x"}',
      '{"id": "a", "input": "q", "output": [{"answer": "x"}]}',
    ]);
    const res = tartan("validate", path);
    expect(res.code).toBe(1);
    const lines = res.stdout.split("\n");
    expect(lines[0]).toBe(`${path}: 3 task records (1 malformed line)`);
    expect(lines[1]).toBe("  error    invalid JSON (1 record) line 3");
    expect(lines[2]).toMatch(/^ {11}e\.g\. line 3: invalid JSON \(.+\)$/);
    expect(lines.slice(3)).toEqual(["  error    duplicate id (1 record) line 4", '           e.g. line 4: id "a" first seen on line 1', "  => INVALID (2 errors, 0 warnings)", ""]);
  });

  it("prints JSON with --json, honours --max-examples and --kind", () => {
    const nq = join(DATA, "kilt-samples", "nq-test_without_answers-kilt.jsonl");
    const res = tartan("validate", "--json", "--max-examples", "2", nq);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { valid: boolean; files: ValidationReport[]; unreadable: unknown[] };
    expect([out.valid, out.files.length, out.unreadable]).toEqual([true, 1, []]);
    expect(out.files[0]).toMatchObject({ file: nq, kind: "task", records: 5, withoutAnswers: true, errors: 0, warnings: 5 });
    expect(brief(out.files[0])).toEqual([["warning", "output missing", 5, [1, 2]]]);
    const asPages = tartan("validate", "--kind", "page", nq);
    expect(asPages.code).toBe(1);
    expect(asPages.stdout.split("\n")[0]).toBe(`${nq}: 5 page records`);
  });

  it("rejects bad options and exits 2 on a file it cannot read", () => {
    expect(tartan("validate", "--kind", "book", "x.jsonl").code).not.toBe(0);
    expect(tartan("validate", "--max-examples", "-1", "x.jsonl").code).not.toBe(0);
    const missing = join(dir, "missing.jsonl");
    const res = tartan("validate", missing);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`tartan validate: cannot read ${missing}: no such file or directory\n`);
  });
});
