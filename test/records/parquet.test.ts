// Hugging Face Parquet input: the real KILT files written in the `kilt_tasks` layout read back as the
// records they were made from; the evaluator and `validate` give the same results on Parquet as on
// JSONL; knowledge-source pages in the `kilt_wikipedia` layout; errors name file, row and field;
// resuming at a byte offset of the equivalent JSONL.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { byteLineBatches, readJsonlAll, scanJsonl, type LineError } from "../../src/records/jsonl.js";
import { float32Decimal, parquetLineBatches } from "../../src/records/parquet.js";
import { validateFile } from "../../src/records/validate.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import {
  KILT_TASKS_FEATURES,
  int32Feature,
  listFeature,
  parseKiltLines,
  stringFeature,
  structFeature,
  writeKiltTasksParquet,
  writeKiltWikipediaParquet,
  writeParquetRows,
} from "./hf-parquet.js";

const DATA = fileURLToPath(new URL("../../../shared/data/", import.meta.url));
const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-parquet-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Rec = Record<string, unknown>;

/** What survives the Hugging Face layout: ids as strings, BLEU as float32, no empty `meta` objects or lists. */
function asHfKeepsIt(r: Rec): Rec {
  const out = structuredClone(r);
  out.id = String(out.id);
  const meta = (out.meta ?? {}) as Rec;
  for (const k of Object.keys(meta)) if (Array.isArray(meta[k]) && (meta[k] as unknown[]).length === 0) delete meta[k];
  if (out.meta && Object.keys(meta).length === 0) delete out.meta;
  for (const o of (out.output ?? []) as Rec[])
    for (const p of (o.provenance ?? []) as Rec[]) {
      if (typeof p.bleu_score === "number") p.bleu_score = float32Decimal(Math.fround(p.bleu_score));
      if (p.meta && Object.keys(p.meta as Rec).length === 0) delete p.meta;
    }
  return out;
}

const sampleFiles = [
  ...readdirSync(join(DATA, "kilt-samples")).map((f) => join(DATA, "kilt-samples", f)),
  join(DATA, "kilt-dev", "hotpotqa-dev-kilt.jsonl"),
  join(DATA, "kilt-dev", "wow-dev-kilt.jsonl"),
];

describe("kilt_tasks Parquet", () => {
  it("reads every released KILT file back as its records (26 samples and the HotpotQA and WoW dev files)", async () => {
    expect(sampleFiles).toHaveLength(28);
    let total = 0;
    for (const file of sampleFiles) {
      const text = readFileSync(file, "utf8");
      const pq = join(dir, file.split("/").pop()!.replace(/\.jsonl$/, ".parquet"));
      writeKiltTasksParquet(pq, parseKiltLines(text), 500);
      const back = await readJsonlAll<Rec>(pq);
      const original = text.split("\n").filter((l) => l.trim()).map((l) => asHfKeepsIt(JSON.parse(l)));
      expect(back.length, file).toBe(original.length);
      expect(back, file).toEqual(original);
      total += back.length;
    }
    expect(total).toBe(5 * 26 + 5600 + 3054);
  });

  it("writes 64-bit annotation ids as the JSON integers of the released files", async () => {
    const pq = join(dir, "nq-dev-kilt.parquet");
    const lines: string[] = [];
    for await (const batch of byteLineBatches(pq)) for (const l of batch) lines.push(l.buf.toString("utf8", l.start, l.end));
    expect(lines).toHaveLength(5);
    expect(lines.join("\n")).toContain('"meta":{"annotation_id":13591449469826568799,"yes_no_answer":"NONE"}');
    expect(readFileSync(join(DATA, "kilt-samples", "nq-dev-kilt.jsonl"), "utf8")).toContain('"annotation_id": 13591449469826568799');
  });

  it("scores a Parquet gold file exactly as its JSONL (the official evaluator's figures)", async () => {
    const gold = join(FIX, "real-hotpotqa-dev-0-1499", "gold.jsonl");
    const guess = join(FIX, "real-hotpotqa-dev-0-1499", "guess.jsonl");
    const expected = JSON.parse(readFileSync(join(FIX, "real-hotpotqa-dev-0-1499", "expected.json"), "utf8"));
    const pq = join(dir, "hotpotqa-dev-0-1499.parquet");
    writeKiltTasksParquet(pq, parseKiltLines(readFileSync(gold, "utf8")), 400);
    const args = JSON.parse(readFileSync(join(FIX, "real-hotpotqa-dev-0-1499", "args.json"), "utf8"));
    const r = await evaluate(pq, guess, { ks: args.ks, rankKeys: args.rank_keys });
    expect(r.counts.goldRecords).toBe(1500);
    expect(JSON.stringify(r.eval_downstream)).toBe(JSON.stringify(expected.eval_downstream));
    expect(JSON.stringify(r.eval_retrieval)).toBe(JSON.stringify(expected.eval_retrieval));
  });

  it("validates a Parquet file as its JSONL (same records and problems; lines are rows)", async () => {
    for (const name of ["hotpotqa-dev-kilt", "fever-dev-kilt", "triviaqa-test_id_without_answers-kilt"]) {
      const src = sampleFiles.findLast((f) => f.endsWith(`/${name}.jsonl`))!; // HotpotQA: the dev file, written last
      const a = await validateFile(src);
      const b = await validateFile(join(dir, `${name}.parquet`));
      expect(b.records, name).toBe(a.records);
      expect(b.kind).toBe("task");
      expect(b.problems, name).toEqual(a.problems);
    }
  });

  it("names file, row and field for a value of the wrong type, and reads the other rows", async () => {
    // output[].provenance[].start_paragraph_id as a string column: the row with a non-integer is refused.
    const features = [
      stringFeature("id"),
      stringFeature("input"),
      listFeature("output", structFeature("element", [stringFeature("answer"), listFeature("provenance", structFeature("element", [stringFeature("wikipedia_id"), stringFeature("start_paragraph_id")]))])),
    ];
    const pq = join(dir, "bad-type.parquet");
    writeParquetRows(pq, features, [
      { id: "a", input: "q1", output: [{ answer: "x", provenance: [{ wikipedia_id: "1", start_paragraph_id: null }] }] },
      { id: "b", input: "q2", output: [{ answer: "y", provenance: [{ wikipedia_id: "2", start_paragraph_id: "3" }] }] },
      { id: "c", input: "q3", output: [] },
    ]);
    const errors: LineError[] = [];
    const ids: unknown[] = [];
    const stats = await scanJsonl<Rec>(pq, (r) => ids.push(r.id), { onError: (e) => errors.push(e) });
    expect(ids).toEqual(["a", "c"]);
    expect(stats.badLines).toBe(1);
    expect(errors.map((e) => e.message)).toEqual([`${pq}: row 2: output[0].provenance[0].start_paragraph_id: expected an integer, found string "3"`]);
    await expect(readJsonlAll(pq)).rejects.toThrow(`${pq}: row 2: output[0].provenance[0].start_paragraph_id: expected an integer, found string "3"`);

    const report = await validateFile(pq);
    expect(report.records).toBe(2);
    expect(report.valid).toBe(false);
  });

  it("refuses a Parquet file in another layout, naming its columns", async () => {
    const pq = join(dir, "other.parquet");
    writeParquetRows(pq, [stringFeature("question"), int32Feature("label")], [{ question: "q", label: 1 }]);
    await expect(readJsonlAll(pq)).rejects.toThrow(`${pq}: not a Hugging Face kilt_tasks (id, input, meta, output) or kilt_wikipedia (kilt_id, wikipedia_id, text, …) Parquet file; its columns: question, label`);
    const notParquet = join(dir, "text.parquet");
    writeParquetRows(join(dir, "ok.parquet"), KILT_TASKS_FEATURES, []);
    await import("node:fs").then((fs) => fs.writeFileSync(notParquet, "id,input\n1,x\n"));
    await expect(readJsonlAll(notParquet)).rejects.toThrow(`${notParquet}: not a readable Parquet file`);
    expect(await readJsonlAll(join(dir, "ok.parquet"))).toEqual([]);
  });

  it("resumes at a byte offset of the equivalent JSONL, across row groups", async () => {
    const pq = join(dir, "wow-dev-kilt.parquet"); // 3,054 rows in row groups of 500
    const all: { line: number; endByte: number }[] = [];
    for await (const batch of parquetLineBatches(pq)) for (const l of batch) all.push({ line: l.line, endByte: l.endByte });
    expect(all).toHaveLength(3054);
    const cut = all[1234];
    const rest: number[] = [];
    for await (const batch of parquetLineBatches(pq, { startByte: cut.endByte })) for (const l of batch) rest.push(l.line);
    expect(rest[0]).toBe(1236);
    expect(rest).toHaveLength(3054 - 1235);
    await expect(async () => {
      for await (const _ of parquetLineBatches(pq, { startByte: cut.endByte + 1 })) void _;
    }).rejects.toThrow(`${pq}: cannot resume at byte ${cut.endByte + 1}: it is inside row 1236`);
  });
});

describe("kilt_wikipedia Parquet", () => {
  it("reads knowledge-source pages back: the 48 SQuAD pages and a page with anchors, history and Wikidata", async () => {
    const squad = readSquadFile(join(DATA, "squad", "dev-v1.1.reconstructed.json"));
    const pages: Rec[] = squadToPages(squad).map((p) => ({ ...p }));
    const full: Rec = {
      _id: "1101759",
      wikipedia_id: "1101759",
      wikipedia_title: "Email marketing",
      text: ["Email marketing\n", "Email marketing is the act of sending a commercial message.\n", "Section::::History.\n"],
      anchors: [
        { text: "commercial message", href: "Commercial%20message", paragraph_id: 1, start: 40, end: 58, wikipedia_title: "Commercial message", wikipedia_id: "123" },
        { text: "dead link", href: "Nowhere", paragraph_id: 2, start: 0, end: 4 },
      ],
      categories: "Email,Marketing",
      history: { revid: 907876380, timestamp: "2019-07-24T11:22:33Z", parentid: 907876001, pre_dump: true, pageid: 1101759, url: "https://en.wikipedia.org/w/index.php?title=Email%20marketing&oldid=907876380" },
      wikidata_info: { description: "marketing via email", wikidata_id: "Q1055513", wikidata_label: "email marketing", aliases: ["e-mail marketing"] },
    };
    pages.push(full);
    const pq = join(dir, "pages.parquet");
    writeKiltWikipediaParquet(pq, pages, 10);
    const back = await readJsonlAll<Rec>(pq);
    expect(back).toHaveLength(49);
    expect(back[48]).toEqual(full);
    // SQuAD pages carry no _id, history or Wikidata: the loader's defaults are left out again.
    // A `meta` field is not in the layout; a missing pre_dump reads as the loader's false.
    const expected = pages.slice(0, 48).map(({ meta: _meta, ...p }) => ({ _id: p.wikipedia_id, ...p, anchors: p.anchors ?? [], history: { ...(p.history as Rec), pre_dump: false } }));
    expect(back.slice(0, 48)).toEqual(expected);
    const report = await validateFile(pq);
    expect(report.kind).toBe("page");
    expect(report.records).toBe(49);
  });
});
