// The SQuAD knowledge source end to end: `ks from-squad` pages, `datasets convert squad` questions,
// `index build`, `retrieve`, `validate` and `eval` with exact metric values, plus TREC runs and `search`.

import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { beforeAll, describe, expect, it } from "vitest";
import { registerIndexBuild } from "../../src/cli/commands/index-build.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { convertSquad, fromSquad } from "../../src/knowledge/build.js";
import { highlight, registerRetrieve, searchLines } from "../../src/cli/commands/retrieve.js";
import { defaultBatch, retrieve } from "../../src/pipeline/retrieve.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { validateFile } from "../../src/records/validate.js";
import { UnitStore } from "../../src/retrieval/units/store.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-retrieve-"));
const pages = join(tmp, "pages.jsonl");
const questions = join(tmp, "questions.jsonl");
const quiet = () => {};
const PAGE = ["wikipedia_id"];
const PARAGRAPH = ["wikipedia_id", "start_paragraph_id"];
// answer_in_context of the first 1,000 questions over their top 1 and top 5 TF-IDF paragraphs.
const ANSWER_IN_CONTEXT_1 = 0.7;
const ANSWER_IN_CONTEXT_5 = 0.919;

beforeAll(async () => {
  await fromSquad(V11, pages, quiet);
  expect(await convertSquad(V11, { out: questions }, quiet)).toBe(10570);
  const logs: string[] = [];
  await buildIndex({ pages, kind: "tfidf", out: join(tmp, "tfidf-page") }, (s) => logs.push(s));
  await buildIndex({ pages, kind: "tfidf", unit: "paragraph", out: join(tmp, "tfidf-paragraph") }, (s) => logs.push(s));
  await buildIndex({ pages, kind: "entity", out: join(tmp, "entity") }, (s) => logs.push(s));
  expect(logs.map((l) => l.replace(/ in \d+\.\d s$/, ""))).toEqual([
    `tfidf index of 48 page units (72,579 buckets used, 121,926 postings) from ${pages} → ${join(tmp, "tfidf-page")}`,
    `tfidf index of 2,067 paragraph units (73,085 buckets used, 187,516 postings) from ${pages} → ${join(tmp, "tfidf-paragraph")}`,
    `entity index of 48 page units (52 aliases, 0 anchors (0 to pages not in the source)) from ${pages} → ${join(tmp, "entity")}`,
  ]);
}, 300_000);

async function scored(guess: string, rankKeys: string[]) {
  const report = await validateFile(guess);
  expect(report.kind).toBe("task");
  expect(report.problems).toEqual([]);
  expect(report.records).toBe(10570);
  const result = await evaluate(questions, guess, { mode: "retrieval", rankKeys });
  expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
  return result.eval_retrieval!;
}

describe("tartan retrieve on SQuAD questions", () => {
  it("TF-IDF pages: valid KILT guesses scored by tartan eval", { timeout: 300_000 }, async () => {
    const out = join(tmp, "tfidf-page.jsonl");
    const logs: string[] = [];
    const stats = await retrieve({ indexes: [join(tmp, "tfidf-page")], input: questions, out, topK: 100, threads: 2 }, (s) => logs.push(s));
    expect(stats).toMatchObject({ records: 10570, skipped: 0, unit: "page", kind: "tfidf" });
    expect(logs[0]).toMatch(/^10,570 queries → .*tfidf-page\.jsonl \(kilt, top 100 page units, tfidf\) in \d+\.\d s, [\d,]+ queries\/s$/);
    const first = (await readJsonlAll<KiltRecord>(out))[0];
    expect(first.id).toBe("56be4db0acb8001400a502ec");
    expect(first.output).toHaveLength(1);
    expect(first.output[0].provenance!.length).toBe(35); // the pages sharing a term of positive idf with the question
    expect(first.output[0].provenance![0]).toEqual({ wikipedia_id: "squad:Super_Bowl_50", title: "Super Bowl 50", score: expect.closeTo(129.850153, 5) });
    const m = await scored(out, PAGE);
    expect(m.Rprec).toBeCloseTo(0.9286660359508042, 12);
    expect(m["precision@1"]).toBeCloseTo(0.9286660359508042, 12);
    expect(m["recall@5"]).toBeCloseTo(0.9830652790917691, 12);
    expect(m["recall@20"]).toBeCloseTo(0.9951750236518448, 12);
  });

  it("TF-IDF paragraphs: paragraph- and page-level metrics", async () => {
    const out = join(tmp, "tfidf-paragraph.jsonl");
    await retrieve({ indexes: [join(tmp, "tfidf-paragraph")], input: questions, out, topK: 20, text: "none" }, quiet);
    const first = (await readJsonlAll<KiltRecord>(out))[0].output[0].provenance![0];
    expect(first).toEqual({ wikipedia_id: "squad:Super_Bowl_50", title: "Super Bowl 50", section: "Section::::Abstract.", start_paragraph_id: 23, start_character: 0, end_paragraph_id: 23, end_character: 1025, score: expect.closeTo(118.486274, 5) });
    const p = await scored(out, PARAGRAPH);
    expect(p.Rprec).toBeCloseTo(0.7177861873226111, 12);
    expect(p["recall@5"]).toBeCloseTo(0.9015137180700095, 12);
    expect(p["recall@20"]).toBeCloseTo(0.9596972563859981, 12);
    const g = await scored(out, PAGE);
    expect(g.Rprec).toBeCloseTo(0.9190160832544939, 12);
  }, 300_000);

  it("passage texts: the answer in the retrieved paragraphs (first 1,000 questions)", async () => {
    const some = join(tmp, "questions-1000.jsonl");
    writeFileSync(some, readFileSync(questions, "utf8").split("\n").slice(0, 1000).join("\n") + "\n");
    const out = join(tmp, "tfidf-paragraph-text.jsonl");
    await retrieve({ indexes: [join(tmp, "tfidf-paragraph")], input: some, out, topK: 5 }, quiet);
    const first = (await readJsonlAll<KiltRecord>(out))[0].output[0].provenance![0];
    expect(first.text).toMatch(/^As the designated home team in the annual rotation between AFC and NFC teams, the Broncos elected/);
    expect((await validateFile(out)).problems).toEqual([]);
    const result = await evaluate(some, out, { mode: "retrieval", rankKeys: PARAGRAPH, ks: [1, 5] });
    const m = result.eval_retrieval!;
    expect(m["answer_in_context@1"]).toBeCloseTo(ANSWER_IN_CONTEXT_1, 12);
    expect(m["answer_in_context@5"]).toBeCloseTo(ANSWER_IN_CONTEXT_5, 12);
  }, 300_000);

  it("a deep run comes in batches bounded by hits in flight, and equals one batch of every record", async () => {
    expect([10, 100, 1000, 100_000].map(defaultBatch)).toEqual([10_000, 2621, 262, 128]);
    const some = join(tmp, "questions-600.jsonl");
    writeFileSync(some, readFileSync(questions, "utf8").split("\n").slice(0, 600).join("\n") + "\n");
    const batches: number[] = [];
    const deep = join(tmp, "deep-1000.trec");
    const progress = (p: { items?: number; done?: boolean }) => void (p.done || p.items === undefined ? 0 : batches.push(p.items));
    await retrieve({ indexes: [join(tmp, "tfidf-paragraph")], input: some, out: deep, topK: 1000, format: "trec", threads: 2, onProgress: progress }, quiet);
    const whole = join(tmp, "deep-1000-one-batch.trec");
    await retrieve({ indexes: [join(tmp, "tfidf-paragraph")], input: some, out: whole, topK: 1000, format: "trec", threads: 2, batch: 10_000 }, quiet);
    const lines = readFileSync(deep, "utf8");
    expect(lines).toBe(readFileSync(whole, "utf8"));
    expect(lines.split("\n").filter(Boolean).length).toBe(153_728); // TF-IDF ranks only the paragraphs sharing a term
    // progress ends each batch on its last record: 262, 524 and 600 of 600
    expect([262, 524, 600].every((n) => batches.includes(n))).toBe(true);
  }, 300_000);

  it("hybrid of TF-IDF and entity pages", { timeout: 300_000 }, async () => {
    const out = join(tmp, "hybrid.jsonl");
    const stats = await retrieve({ indexes: [join(tmp, "tfidf-page"), join(tmp, "entity")], input: questions, out, topK: 100 }, quiet);
    expect(stats.kind).toBe("hybrid");
    const m = await scored(out, PAGE);
    expect(m.Rprec).toBeCloseTo(0.92639545884579, 12);
    expect(m["recall@5"]).toBeCloseTo(0.9831598864711447, 12);
  });

  it("writes TREC runs and qrels through the command line", async () => {
    const program = new Command().exitOverride();
    registerIndexBuild(program);
    registerRetrieve(program);
    const run = join(tmp, "run.trec");
    const qrels = join(tmp, "qrels.trec");
    await program.parseAsync(["node", "tartan", "retrieve", "--index", join(tmp, "tfidf-paragraph"), "--input", questions, "--out", run, "--format", "trec", "--qrels", qrels, "--top-k", "3", "--threads", "1"]);
    const lines = readFileSync(run, "utf8").split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "56be4db0acb8001400a502ec Q0 squad:Super_Bowl_50+23 1 118.48627385333009 tartan-tfidf",
      expect.stringMatching(/^56be4db0acb8001400a502ec Q0 squad:Super_Bowl_50\+54 2 99\.2192\d+ tartan-tfidf$/),
      expect.stringMatching(/^56be4db0acb8001400a502ec Q0 squad:Super_Bowl_50\+1 3 97\.8756\d+ tartan-tfidf$/),
    ]);
    expect(lines.filter(Boolean)).toHaveLength(31611); // 10,570 × 3 less the questions matching fewer than 3 paragraphs
    expect(readFileSync(qrels, "utf8").split("\n")[0]).toBe("56be4db0acb8001400a502ec 0 squad:Super_Bowl_50+1 1");
  });

  it("names a missing input and refuses unknown indexes", async () => {
    await expect(retrieve({ indexes: [tmp], input: questions, out: join(tmp, "x.jsonl"), topK: 5 }, quiet)).rejects.toThrow(`${tmp}: no manifest.json (not an index directory?)`);
  });
});

describe("index build from a knowledge-source store", () => {
  it("gives the same index as from the pages file", async () => {
    const store = join(tmp, "ks");
    await ingest(pages, { out: store, workers: 0 });
    const logs: string[] = [];
    await buildIndex({ ks: store, kind: "tfidf", unit: "paragraph", out: join(tmp, "tfidf-paragraph-ks") }, (s) => logs.push(s));
    expect(logs[0]).toMatch(new RegExp(`^tfidf index of 2,067 paragraph units \\(73,085 buckets used, 187,516 postings\\) from ${store} → `));
    for (const f of ["tfidf.buckets", "tfidf.offsets", "tfidf.docs", "tfidf.tfs"])
      expect(readFileSync(join(tmp, "tfidf-paragraph-ks", f)).equals(readFileSync(join(tmp, "tfidf-paragraph", f)))).toBe(true);
    // From a store the units are references into it (units.table), with the same provenance and text.
    const fromKs = UnitStore.open(join(tmp, "tfidf-paragraph-ks"));
    const fromPages = UnitStore.open(join(tmp, "tfidf-paragraph"));
    expect(existsSync(join(tmp, "tfidf-paragraph-ks", "units.table"))).toBe(true);
    expect(existsSync(join(tmp, "tfidf-paragraph-ks", "units.jsonl"))).toBe(false);
    for (const i of [0, 1, 1000, 2066]) expect(fromKs.get(i)).toMatchObject(fromPages.get(i));
    fromKs.close();
    fromPages.close();
    await expect(buildIndex({ ks: store, pages, kind: "tfidf" }, quiet)).rejects.toThrow("give the pages with --pages FILE or a knowledge source with --ks DIR");
  });
});

describe("tartan search", () => {
  it("prints titles, scores and highlighted passages", async () => {
    const lines = await searchLines([join(tmp, "tfidf-paragraph")], "Who won Super Bowl 50?", 2, false);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^ {2}1\. \d+\.\d{4} {2}Super Bowl 50 {2}\[squad:Super_Bowl_50 Section::::Abstract\. ¶\d+\]$/);
    expect(lines[1]).toContain("**Super** **Bowl** **50**");
    expect(await searchLines([join(tmp, "entity")], "nothing to link", 5, false)).toEqual(["no results"]);
  });
  it("highlights content words only, in a window", () => {
    expect(highlight("The cat sat on the mat with another cat.", "the cat", (w) => `[${w}]`)).toBe("The [cat] sat on the mat with another [cat.]");
    expect(highlight(Array.from({ length: 100 }, (_, i) => `w${i}`).join(" "), "w50", (w) => `<${w}>`, 5)).toBe("… w40 w41 w42 w43 w44 …");
  });
});
