// `validate` on a Hugging Face Parquet file (written here by hyparquet-writer, the project's Parquet
// writer, into a temporary directory): rows that cannot be read as KILT records are reported with the
// file, the row and the field, in Parquet's words (rows, fields, types), and the other rows are checked
// as records, their problems counted in rows.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatReport, validateFile } from "../../src/records/validate.js";
import { listFeature, stringFeature, structFeature, writeParquetRows } from "./hf-parquet.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-validate-parquet-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// kilt_tasks columns, except output[].provenance[].start_paragraph_id, a string column here (as a
// hand-made export might have it): a row whose value is not an integer cannot be a KILT record.
const FEATURES = [
  stringFeature("id"),
  stringFeature("input"),
  listFeature("output", structFeature("element", [stringFeature("answer"), listFeature("provenance", structFeature("element", [stringFeature("wikipedia_id"), stringFeature("start_paragraph_id")]))])),
];
const answer = (a: string, start: string | null) => [{ answer: a, provenance: [{ wikipedia_id: "12", start_paragraph_id: start }] }];

describe("tartan validate on Parquet", () => {
  it("names file, row and field of a value of the wrong type or a missing field, and counts rows", async () => {
    const pq = join(dir, "hand-made.parquet");
    writeParquetRows(pq, FEATURES, [
      { id: "q1", input: "first question", output: answer("yes", null) },
      { id: "q2", input: "second question", output: answer("no", "3") },
      { id: null, input: "third question", output: answer("maybe", null) },
      { id: "q1", input: "fourth question", output: answer("yes", null) },
      { id: "q5", input: "fifth question", output: answer("no", "seven") },
    ]);
    const report = await validateFile(pq);
    expect(report.unit).toBe("row");
    expect(report.records).toBe(2);
    expect(report.badLines).toBe(3);
    expect(report.problems.map((p) => [p.problem, p.lines, p.example])).toEqual([
      ["Parquet field of the wrong type", [2, 5], { line: 2, detail: 'field output[0].provenance[0].start_paragraph_id: expected an integer, found string "3"' }],
      ["Parquet field missing", [3], { line: 3, detail: "field id: missing" }],
      ["duplicate id", [4], { line: 4, detail: 'id "q1" first seen on row 1' }],
    ]);
    expect(formatReport(report)).toBe(
      [
        `${pq}: 2 task records (3 malformed rows)`,
        "  error    Parquet field of the wrong type (2 records) rows 2, 5",
        '           e.g. row 2: field output[0].provenance[0].start_paragraph_id: expected an integer, found string "3"',
        "  error    Parquet field missing (1 record) row 3",
        "           e.g. row 3: field id: missing",
        "  error    duplicate id (1 record) row 4",
        '           e.g. row 4: id "q1" first seen on row 1',
        "  => INVALID (4 errors, 0 warnings)",
      ].join("\n"),
    );
  });

  it("says a Parquet file without a readable row holds no record (not 'no JSON object')", async () => {
    const pq = join(dir, "all-bad.parquet");
    writeParquetRows(pq, FEATURES, [{ id: "q1", input: "q", output: answer("a", "x") }]);
    const report = await validateFile(pq);
    expect(report.problems.map((p) => [p.severity, p.problem, p.example.detail])).toEqual([
      ["error", "Parquet field of the wrong type", 'field output[0].provenance[0].start_paragraph_id: expected an integer, found string "x"'],
      ["warning", "no records", "the file holds no row that reads as a record"],
    ]);
  });
});
