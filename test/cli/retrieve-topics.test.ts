// `tartan retrieve --topics` and `--fusion` from the command line on SQuAD: the questions written as a
// Pyserini TSV topic file, a TREC topic file and BEIR-style JSONL give the same hits as the KILT records
// (each run naming the topic id), a TREC run's qids are the topic ids, `--fusion combmnz --norm z-score`
// writes the library's fusion, `--rm3`/`--rocchio` write the library's feedback searches, and the flags that do not
// go together are refused.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerRetrieve } from "../../src/cli/commands/retrieve.js";
import { retrieve } from "../../src/pipeline/retrieve.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { squadBm25Paragraphs } from "../fixtures/squad-bm25.js";
import { openIndexes } from "../../src/retrieval/open.js";
import type { FeedbackSpec } from "../../src/retrieval/feedback/params.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-retrieve-topics-"));
let bm25 = "";
const tfidf = join(tmp, "tfidf-paragraph");
const sample = join(tmp, "sample.jsonl");
let records: KiltRecord[] = [];

beforeAll(async () => {
  ({ dir: bm25 } = await squadBm25Paragraphs(tmp, 1));
  await buildIndex({ pages: join(tmp, "pages.jsonl"), kind: "tfidf", unit: "paragraph", out: tfidf }, () => {});
  records = (await readJsonlAll<KiltRecord>(join(tmp, "questions.jsonl"))).filter((_, i) => i % 50 === 0);
  writeFileSync(sample, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
}, 300_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<void> {
  const program = new Command().exitOverride();
  program.configureOutput({ writeErr: () => {} });
  registerRetrieve(program);
  await program.parseAsync(["node", "tartan", "retrieve", "--threads", "1", ...args]);
}
const lines = (f: string) => readFileSync(f, "utf8").trim().split("\n");
const hitsOf = (f: string) => lines(f).map((l) => JSON.parse(l) as { id: string; input: string; output: [{ provenance: unknown[] }] });

describe("retrieve --topics", () => {
  it("TSV, TREC and JSONL topics give the KILT records' hits, under the topic ids", async () => {
    const kilt = join(tmp, "kilt.jsonl");
    await cli("--index", bm25, "--input", sample, "--out", kilt, "--top-k", "5");
    const want = hitsOf(kilt);
    expect(want).toHaveLength(records.length);
    const tsv = join(tmp, "topics.tsv");
    writeFileSync(tsv, records.map((r, i) => `t${i}\t${r.input!.replace(/\s+/gu, " ")}`).join("\n") + "\n");
    const trec = join(tmp, "topics.trec");
    writeFileSync(trec, records.map((r, i) => `<top>\n<num> Number: t${i}\n<title> ${r.input}\n<desc> Description:\nnot searched\n</top>\n`).join("\n"));
    const jsonl = join(tmp, "topics.jsonl");
    writeFileSync(jsonl, records.map((r, i) => JSON.stringify({ _id: `t${i}`, question: r.input })).join("\n") + "\n");
    for (const [f, extra] of [
      [tsv, ["--topics-format", "tsv"]],
      [trec, ["--topics-format", "trec"]],
      [jsonl, ["--topics-format", "jsonl", "--topics-field", "question"]],
    ] as const) {
      const out = join(tmp, `from-${f.split(".").pop()}.jsonl`);
      await cli("--index", bm25, "--topics", f, ...extra, "--out", out, "--top-k", "5");
      const got = hitsOf(out);
      expect(got.map((g) => g.id)).toEqual(records.map((_, i) => `t${i}`));
      expect(got.map((g) => g.output)).toEqual(want.map((w) => w.output));
    }
    const run = join(tmp, "topics.run");
    await cli("--index", bm25, "--topics", tsv, "--out", run, "--format", "trec", "--top-k", "2");
    expect([...new Set(lines(run).map((l) => l.split(" ")[0]))]).toEqual(records.map((_, i) => `t${i}`));
  });

  it("refuses --input with --topics, --qrels with topics, and a bad topic line naming file and line", async () => {
    const tsv = join(tmp, "bad.tsv");
    writeFileSync(tsv, "1\tfine\n2 no tab\n");
    await expect(cli("--index", bm25, "--topics", tsv, "--input", sample, "--out", join(tmp, "x.jsonl"))).rejects.toThrow("give --input (KILT records) or --topics (a topic file), not both");
    await expect(cli("--index", bm25, "--topics", tsv, "--format", "trec", "--qrels", join(tmp, "q"), "--out", join(tmp, "x.run"))).rejects.toThrow("--qrels are written from KILT records' gold provenance; topics have none");
    await expect(cli("--index", bm25, "--topics", tsv, "--out", join(tmp, "x.jsonl"))).rejects.toThrow(`${tsv}:2: no tab: a TSV topic is qid<TAB>text`);
  });
});

describe("retrieve --bm25", () => {
  it("k1=1.2,b=0.75 writes the run of an index built with them; refused without a BM25 index", async () => {
    const other = join(tmp, "bm25-k1.2");
    await buildIndex({ pages: join(tmp, "pages.jsonl"), kind: "bm25", unit: "paragraph", out: other, params: { k1: 1.2, b: 0.75 } }, () => {});
    const [x, y, z] = [join(tmp, "bm25-at.jsonl"), join(tmp, "bm25-built.jsonl"), join(tmp, "bm25-default.jsonl")];
    await cli("--index", bm25, "--input", sample, "--out", x, "--top-k", "5", "--bm25", "k1=1.2,b=0.75");
    await cli("--index", other, "--input", sample, "--out", y, "--top-k", "5");
    await cli("--index", bm25, "--input", sample, "--out", z, "--top-k", "5");
    expect(lines(x)).toEqual(lines(y));
    expect(lines(x)).not.toEqual(lines(z));
    await expect(cli("--index", tfidf, "--input", sample, "--out", join(tmp, "w.jsonl"), "--bm25", "k1=1.2")).rejects.toThrow("--bm25 sets k1 and b of a BM25 index, and no index given is one (tfidf");
    await expect(cli("--index", bm25, "--input", sample, "--out", join(tmp, "w.jsonl"), "--bm25", "k=1")).rejects.toThrow('--bm25: "k=1" is not k1=N or b=N');
  });
});

describe("retrieve --rm3 and --rocchio", () => {
  it("write the runs of the library's feedback searches (scores included); bad parameters and both at once are refused", async () => {
    const lib = await openIndexes([bm25]);
    for (const [flag, value, feedback] of [
      ["--rm3", undefined, { method: "rm3" }],
      ["--rm3", "fbDocs=5,fbTerms=20", { method: "rm3", fbDocs: 5, fbTerms: 20 }],
      ["--rocchio", "useNegative,depth=50", { method: "rocchio", useNegative: true, depth: 50 }],
    ] as const) {
      const out = join(tmp, `fb-${flag.slice(2)}-${value ?? "defaults"}.jsonl`);
      await cli("--index", bm25, "--input", sample, "--out", out, "--top-k", "5", flag, ...(value ? [value] : []));
      const got = hitsOf(out).map((g) => (g.output[0].provenance as { score: number }[]).map((p) => p.score));
      const want = [];
      for (const r of records) want.push((await lib.search(r.input!, 5, { feedback: feedback as FeedbackSpec })).map((h) => h.score));
      expect(got).toEqual(want);
      const plain = [];
      for (const r of records) plain.push((await lib.search(r.input!, 5)).map((h) => h.score));
      expect(got).not.toEqual(plain);
    }
    await lib.close();
    await expect(cli("--index", bm25, "--input", sample, "--out", join(tmp, "w.jsonl"), "--rm3", "fbDocs=ten")).rejects.toThrow('--rm3: fbDocs must be a number, got "ten"');
    await expect(cli("--index", bm25, "--input", sample, "--out", join(tmp, "w.jsonl"), "--rm3", "--rocchio")).rejects.toThrow("give --rm3 or --rocchio, not both");
    await expect(cli("--index", tfidf, "--input", sample, "--out", join(tmp, "w.jsonl"), "--rm3")).rejects.toThrow("stage rm3: query feedback needs a BM25 index directory (or a fusion holding one); given tfidf");
  });
});

describe("retrieve --fusion", () => {
  it("--fusion combmnz --norm z-score --depth 40 writes the library's fusion; --weights must fit", async () => {
    const out = join(tmp, "fused.jsonl");
    await cli("--index", bm25, tfidf, "--input", sample, "--out", out, "--top-k", "5", "--fusion", "combmnz", "--norm", "z-score", "--depth", "40");
    const lib = join(tmp, "fused-lib.jsonl");
    await retrieve({ indexes: [bm25, tfidf], input: sample, out: lib, topK: 5, threads: 1, text: "none", fusion: { name: "combmnz", options: { norm: "z-score", depth: 40 } } }, () => {});
    expect(lines(out)).toEqual(lines(lib));
    const plain = join(tmp, "rrf.jsonl");
    await cli("--index", bm25, tfidf, "--input", sample, "--out", plain, "--top-k", "5");
    expect(lines(plain)).not.toEqual(lines(out));
    await expect(cli("--index", bm25, tfidf, "--input", sample, "--out", join(tmp, "y.jsonl"), "--fusion", "wsum", "--weights", "1,2,3")).rejects.toThrow("fusion: 3 weights for 2 members: give one per index, in order");
    await expect(cli("--index", bm25, tfidf, "--input", sample, "--out", join(tmp, "y.jsonl"), "--alpha", "0.5", "--fusion", "rrf")).rejects.toThrow("--alpha is Pyserini's weighted sum of two members: give it with --fusion wsum");
  });
});
