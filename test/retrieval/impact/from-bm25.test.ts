// Quantized BM25 as impacts (`index build --kind impact --from-bm25 INDEX`, Anserini's bm25-b8) on the
// SQuAD paragraph index and all 10,570 SQuAD dev questions: the ranking loss of 8 bits measured against
// BM25 itself (R-precision through the KILT evaluator, the share of identical top-10 and top-100 lists),
// and with 24 bits the rankings of BM25 up to ties within the quantization's error; then `retrieve` over an impact index with sparse query vectors
// (`--query-terms`, KILT and TREC output) and fused with BM25 by the RRF stage.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildIndex } from "../../../src/retrieval/build.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { readManifest } from "../../../src/retrieval/manifest.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { evaluate } from "../../../src/eval/evaluate.js";
import { retrieve } from "../../../src/pipeline/retrieve.js";
import { textQueryWeights } from "../../../src/retrieval/impact/queries.js";
import type { Retriever } from "../../../src/retrieval/types.js";
import { Bm25Searcher } from "../../../src/retrieval/bm25/search.js";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-impact-bm25-"));
const quiet = () => {};
let bm25 = "";
let queries: string[] = [];
const questions = join(tmp, "questions.jsonl");

beforeAll(async () => {
  ({ dir: bm25, queries } = await squadBm25Paragraphs(tmp, 1_000_000));
  for (const bits of [8, 24]) await buildIndex({ kind: "impact", vectors: { file: bm25, fromBm25: true }, params: { bits }, out: join(tmp, `impact-b${bits}`) }, quiet);
}, 300_000);

/** Shares of queries whose top-10 and top-100 units are BM25's, in order. */
async function identical(r: Retriever, base: Retriever): Promise<[number, number]> {
  let same10 = 0;
  let same100 = 0;
  for (const q of queries) {
    const [a, b] = [(await r.search(q, 100)).map((h) => h.unit), (await base.search(q, 100)).map((h) => h.unit)];
    if (a.slice(0, 10).join() === b.slice(0, 10).join()) same10++;
    if (a.join() === b.join()) same100++;
  }
  return [same10, same100];
}

async function rPrecision(index: string[], name: string): Promise<number> {
  const out = join(tmp, `${name}.jsonl`);
  await retrieve({ indexes: index, input: questions, out, topK: 20 }, quiet);
  return (await evaluate(questions, out, { ks: [1, 5] })).eval_retrieval!.Rprec;
}

describe("BM25 quantized as impacts", () => {
  it("records the quantization and the BM25 index it came from; units and analyzer are BM25's", () => {
    const m = readManifest(join(tmp, "impact-b8"));
    const b = readManifest(bm25);
    expect(m.kind).toBe("impact");
    expect(m.unit).toBe("paragraph");
    expect(m.units).toBe(b.units);
    expect((m.params.quantization as { mode: string; bits: number }).bits).toBe(8);
    expect(m.params.queryAnalyzer).toBe("english");
    expect((m.params.fromBm25 as { buildId: string }).buildId).toBe(b.params.buildId);
    // 8 bits lose the postings whose score is below half a step of the largest; 24 bits keep all.
    expect(readManifest(join(tmp, "impact-b24")).params.postings).toBe(b.params.postings);
    expect(m.params.postings).toBeLessThanOrEqual(b.params.postings as number);
  });

  it("ranking loss on SQuAD: 8 bits against BM25, and 24 bits equal to BM25 up to near-ties", async () => {
    const base = await openIndex(bm25);
    const b8 = await openIndex(join(tmp, "impact-b8"));
    const b24 = await openIndex(join(tmp, "impact-b24"));
    const r8 = await identical(b8, base);
    const r24 = await identical(b24, base);
    // 24 bits: every pair of units the impact ranking orders against BM25 is within the quantization's
    // error of a tie (each query term's score rounded by at most half a step, on both sides, plus float
    // rounding of the sums), and so is every unit that enters or leaves the top 100 (the first 2,000 questions).
    const bs = Bm25Searcher.open(bm25);
    const step = (readManifest(join(tmp, "impact-b24")).params.quantization as { max: number }).max / (2 ** 24 - 1);
    let pairs = 0;
    for (const q of queries.slice(0, 2000)) {
      const terms = bs.queryTerms(q);
      if (terms.length === 0) continue;
      const exact = new Map(bs.searchExhaustive(q, 100_000).map((h) => [h.unit, h.score]));
      const reference = bs.searchExhaustive(q, 100);
      const count = [...textQueryWeights(q, "english").values()].reduce((a, n) => a + n, 0);
      const tol = (s: number) => count * step + s * 2 ** -22;
      const got = await b24.search(q, 100);
      for (let i = 1; i < got.length; i++, pairs++) {
        const [a, c] = [exact.get(got[i - 1].unit)!, exact.get(got[i].unit)!];
        expect(a).toBeGreaterThanOrEqual(c - tol(c));
      }
      const last = reference[reference.length - 1].score;
      for (const h of got) expect(exact.get(h.unit)!).toBeGreaterThanOrEqual(last - tol(last));
    }
    expect(pairs).toBe(197_987);
    const rp = [await rPrecision([bm25], "bm25"), await rPrecision([join(tmp, "impact-b8")], "b8"), await rPrecision([join(tmp, "impact-b24")], "b24")];
    expect(queries.length).toBe(10_570);
    // 24 bits: every top 10 is BM25's, all but 4 top 100s (their differences are near-ties, checked above),
    // and R-precision is BM25's; 8 bits: 69.0% of the top 10s, R-precision 0.04 points lower.
    expect(r24).toEqual([10_570, 10_566]);
    expect(r8).toEqual([7_297, 2]);
    expect(rp).toEqual([0.9428571428571428, 0.9424787133396405, 0.9428571428571428]);
    await Promise.all([base.close(), b8.close(), b24.close()]);
  }, 300_000);
});

describe("retrieve over an impact index", () => {
  it("searches sparse query vectors matched by record id (KILT and TREC output), and fuses with BM25", async () => {
    const records = (await readJsonlAll<KiltRecord>(questions)).slice(0, 50);
    const input = join(tmp, "q50.jsonl");
    writeFileSync(input, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    // The questions' analyzed terms as the vectors an encoder would write, each weight its count × 0.5.
    const vectors = join(tmp, "q50-vectors.jsonl");
    writeFileSync(vectors, records.map((r) => JSON.stringify({ id: r.id, vector: Object.fromEntries([...textQueryWeights(r.input!, "english")].map(([t, n]) => [t, n * 0.5])) })).join("\n") + "\n");
    const impact = join(tmp, "impact-b8");
    const kilt = join(tmp, "q50-impact.jsonl");
    await retrieve({ indexes: [impact], input, out: kilt, topK: 5, queryTerms: vectors }, quiet);
    const trec = join(tmp, "q50-impact.trec");
    await retrieve({ indexes: [impact], input, out: trec, topK: 5, format: "trec", queryTerms: vectors }, quiet);
    // The vectors' weights are the text's halved: the same ranking as the text, scores halved.
    const r = await openIndex(impact);
    const guesses = await readJsonlAll<KiltRecord>(kilt);
    const lines = readFileSync(trec, "utf8").trimEnd().split("\n");
    expect(guesses.length).toBe(50);
    expect(lines.length).toBe(250);
    for (let i = 0; i < 50; i++) {
      const hits = await r.search(records[i].input!, 5);
      const prov = guesses[i].output![0].provenance!;
      expect(prov.map((p) => [p.wikipedia_id, p.start_paragraph_id, p.score])).toEqual(hits.map((h) => [r.units.get(h.unit).wikipedia_id, r.units.get(h.unit).start_paragraph_id, h.score / 2]));
      expect(lines[i * 5].split(" ").slice(0, 4)).toEqual([String(records[i].id), "Q0", `${prov[0].wikipedia_id}+${prov[0].start_paragraph_id}`, "1"]);
    }
    await r.close();
    // Fused with BM25 (RRF): BM25 searches the text, the impact index the vectors.
    const fused = join(tmp, "q50-fused.jsonl");
    await retrieve({ indexes: [bm25, impact], input, out: fused, topK: 5, queryTerms: vectors, rrfK: 60 }, quiet);
    const f = await readJsonlAll<KiltRecord>(fused);
    expect(f.length).toBe(50);
    // Where both members rank the same paragraph first, it leads the fusion with 1/61 + 1/61.
    const alone = join(tmp, "q50-bm25.jsonl");
    await retrieve({ indexes: [bm25], input, out: alone, topK: 1 }, quiet);
    const key = (g: KiltRecord) => `${g.output![0].provenance![0].wikipedia_id}/${g.output![0].provenance![0].start_paragraph_id}`;
    const b = await readJsonlAll<KiltRecord>(alone);
    const agree = guesses.filter((g, i) => key(g) === key(b[i]));
    expect(f.filter((g) => g.output![0].provenance![0].score === 1 / 61 + 1 / 61).map(key)).toEqual(agree.map(key));
    expect(agree.length).toBe(50);
    // A record without a vector, and vectors with no impact index, are refused.
    writeFileSync(vectors, JSON.stringify({ id: records[0].id, vector: { super: 1 } }) + "\n");
    await expect(retrieve({ indexes: [impact], input, out: join(tmp, "x.jsonl"), topK: 5, queryTerms: vectors }, quiet)).rejects.toThrow(`${input}:2: record ${String(records[1].id)} has no sparse query vector in ${vectors}`);
    await expect(retrieve({ indexes: [bm25], input, out: join(tmp, "x.jsonl"), topK: 5, queryTerms: vectors }, quiet)).rejects.toThrow(/sparse query vectors given, but no index is an impact one/);
  }, 300_000);
});
