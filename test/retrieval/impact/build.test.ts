// The impact kind on real data: a JsonVectorCollection made from SQuAD's paragraphs (each paragraph's
// English-analyzed terms weighted log(1 + tf) × 1.3, as a learned model's saturating weights), built with
// 8-bit and scaled quantization, searched with MaxScore and block-max pruning and compared with a
// brute-force score of the same quantized weights computed here from the JSONL; every refusal naming
// file, line and field; a killed build resumed to the same index; a corrupt or mixed index refused.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildIndex } from "../../../src/retrieval/build.js";
import { openIndex } from "../../../src/retrieval/open.js";
import { readManifest } from "../../../src/retrieval/manifest.js";
import { verifyIndexDir } from "../../../src/retrieval/verify.js";
import { getAnalyzer } from "../../../src/retrieval/bm25/analyzer.js";
import { UnitStore } from "../../../src/retrieval/units/store.js";
import { buildImpactIndex } from "../../../src/retrieval/impact/build.js";
import { ImpactSearcher } from "../../../src/retrieval/impact/search.js";
import { readImpactQueries, textQueryWeights } from "../../../src/retrieval/impact/queries.js";
import { unitsFromIdsFile } from "../../../src/retrieval/dense/dpr-passages.js";
import { squadBm25Paragraphs } from "../../fixtures/squad-bm25.js";

const f = Math.fround;
const tmp = mkdtempSync(join(tmpdir(), "tartan-impact-"));
const quiet = () => {};
const collection = join(tmp, "collection.jsonl");
const idsFile = join(tmp, "ids.tsv");
let lines: { id: string; vector: Record<string, number> }[] = [];
let queries: string[] = [];

beforeAll(async () => {
  const { dir, queries: q } = await squadBm25Paragraphs(tmp, 200);
  queries = q;
  const units = UnitStore.open(dir);
  const english = getAnalyzer("english");
  const ids: string[] = [];
  for (let i = 0; i < units.count; i++) {
    const u = units.get(i);
    ids.push(`${u.wikipedia_id}\t${u.start_paragraph_id}\t${u.end_paragraph_id}`);
    const tf = new Map<string, number>();
    for (const t of english.analyze(`${u.wikipedia_title}\n${u.text}`)) tf.set(t, (tf.get(t) ?? 0) + 1);
    const vector: Record<string, number> = {};
    for (const [t, n] of tf) vector[t] = Math.log1p(n) * 1.3;
    lines.push({ id: String(i), vector });
  }
  units.close();
  writeFileSync(idsFile, ids.join("\n") + "\n");
  writeFileSync(collection, lines.map((l) => JSON.stringify({ id: l.id, contents: "", vector: l.vector })).join("\n") + "\n");
}, 300_000);

/** The quantized postings of the collection as the test computes them: term → [unit, impact][]. */
function quantized(q: (w: number) => number): Map<string, [number, number][]> {
  const out = new Map<string, [number, number][]>();
  for (const l of lines)
    for (const [t, w] of Object.entries(l.vector)) {
      const v = q(w);
      if (v === 0) continue;
      let list = out.get(t);
      if (!list) out.set(t, (list = []));
      list.push([Number(l.id), v]);
    }
  return out;
}

function bruteForce(postings: Map<string, [number, number][]>, weights: ReadonlyMap<string, number>, k: number) {
  const acc = new Map<number, number>();
  for (const [t, w] of weights) for (const [d, impact] of postings.get(t) ?? []) acc.set(d, (acc.get(d) ?? 0) + f(impact * f(w)));
  return [...acc]
    .map(([unit, s]) => ({ unit, score: f(s) }))
    .sort((a, b) => b.score - a.score || a.unit - b.unit)
    .slice(0, k);
}

describe("impact index from a JsonVectorCollection", () => {
  const out8 = join(tmp, "impact-b8");
  const outScale = join(tmp, "impact-s100");
  let max = 0;

  beforeAll(async () => {
    for (const l of lines) for (const w of Object.values(l.vector)) max = Math.max(max, w);
    await buildIndex({ kind: "impact", vectors: { file: collection, ids: idsFile }, unit: "paragraph", params: { queryAnalyzer: "english" }, out: out8 }, quiet);
    await buildIndex({ kind: "impact", vectors: { file: collection, ids: idsFile }, unit: "paragraph", params: { scale: 100, queryAnalyzer: "english" }, out: outScale }, quiet);
  }, 300_000);

  it("records the quantization in the manifest and holds exactly the non-zero quantized postings", () => {
    const m8 = readManifest(out8);
    expect(m8.kind).toBe("impact");
    expect(m8.units).toBe(lines.length);
    expect(m8.params.quantization).toEqual({ mode: "bits", bits: 8, max });
    const p8 = quantized((w) => Math.round((w / max) * 255));
    expect(m8.params.terms).toBe(p8.size);
    expect(m8.params.postings).toBe([...p8.values()].reduce((s, l) => s + l.length, 0));
    const ms = readManifest(outScale);
    expect(ms.params.quantization).toEqual({ mode: "scale", scale: 100 });
    const ps = quantized((w) => Math.round(w * 100));
    expect(ms.params.postings).toBe([...ps.values()].reduce((s, l) => s + l.length, 0));
    // Every SQuAD paragraph term keeps a posting at scale 100 (the smallest weight is 1.3 log 2 ≈ 0.9).
    expect(ms.params.postings).toBe(lines.reduce((s, l) => s + Object.keys(l.vector).length, 0));
  });

  it("ranks exactly as brute force over the same quantized weights (200 SQuAD questions, k 1, 10, 100, 1000), pruning", () => {
    for (const [dir, q] of [
      [out8, (w: number) => Math.round((w / max) * 255)],
      [outScale, (w: number) => Math.round(w * 100)],
    ] as const) {
      const postings = quantized(q);
      const s = ImpactSearcher.open(dir);
      let compared = 0;
      for (const text of queries) {
        // Query weights as an encoder gives them (floats): the count of each analyzed term × 0.83.
        const weights = new Map([...textQueryWeights(text, "english")].map(([t, n]) => [t, n * 0.83]));
        for (const k of [1, 10, 100, 1000]) {
          const got = s.search(weights, k);
          expect(got).toEqual(bruteForce(postings, weights, k));
          expect(got).toEqual(s.searchExhaustive(weights, k));
          compared += got.length;
        }
      }
      expect(compared).toBeGreaterThan(140_000);
      expect(s.stats.blocksSkipped + s.stats.windowsSkipped).toBeGreaterThan(0);
      s.close();
    }
  });

  it("gives each hit the unit its id names (KILT provenance from --ids)", async () => {
    const r = await openIndex(out8);
    const hits = await r.search("Which NFL team represented the AFC at Super Bowl 50?", 3);
    const ids = readFileSync(idsFile, "utf8").split("\n");
    for (const h of hits) {
      const u = r.units.get(h.unit);
      expect(`${u.wikipedia_id}\t${u.start_paragraph_id}\t${u.end_paragraph_id}`).toBe(ids[h.unit]);
    }
    expect(hits.length).toBe(3);
    await r.close();
  });

  it("verifies, and refuses a corrupt or mixed index", async () => {
    expect((await verifyIndexDir(out8)).problems).toEqual([]);
    // Mixed: the postings of the other build (same units, another quantization) copied in.
    const mixed = join(tmp, "mixed");
    await buildIndex({ kind: "impact", vectors: { file: collection, ids: idsFile }, unit: "paragraph", out: mixed }, quiet);
    copyFileSync(join(outScale, "bm25.postings"), join(mixed, "bm25.postings"));
    expect(() => ImpactSearcher.open(mixed)).toThrow(/bm25\.postings: from another build/);
    expect((await verifyIndexDir(mixed)).problems.join("\n")).toMatch(/bm25\.postings/);
    // Corrupt: one byte of the postings flipped, same size.
    const corrupt = join(tmp, "corrupt");
    await buildIndex({ kind: "impact", vectors: { file: collection, ids: idsFile }, unit: "paragraph", out: corrupt }, quiet);
    const path = join(corrupt, "bm25.postings");
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(path, bytes);
    expect((await verifyIndexDir(corrupt)).problems.join("\n")).toMatch(/bm25\.postings.*(CRC|checksum)/i);
    // A BM25 index is not an impact one.
    expect(() => new ImpactSearcher(join(tmp, "bm25-paragraph"), readManifest(join(tmp, "bm25-paragraph")))).toThrow(/a bm25 index, not an impact one/);
  });

  it("resumes a killed build to the same index, and lines out of order make the same index", async () => {
    const whole = readManifest(out8).params.buildId;
    const dir = join(tmp, "killed");
    const memory = 512 * 1024 ** 2 + 9 * (1 << 20); // the base and 9 MiB of segment (8 of them its first row buffers): several segments
    const input = () => ({ collection, units: unitsFromIdsFile(idsFile), unit: "paragraph" as const, queryAnalyzer: "english" as const });
    await expect(
      buildImpactIndex(input(), dir, {
        memory,
        onSegment: (n) => {
          if (n === 2) throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    const s = await buildImpactIndex(input(), dir, { memory });
    expect(s.resumedLines).toBeGreaterThan(0);
    expect(s.resumedLines).toBeLessThan(lines.length);
    expect(s.segments).toBeGreaterThan(2);
    expect(readManifest(dir).params.buildId).toBe(whole);
    // The second half of the lines first: a unit out of order starts a segment; the merge gives the same files.
    const reversed = join(tmp, "reversed.jsonl");
    const all = readFileSync(collection, "utf8").trimEnd().split("\n");
    writeFileSync(reversed, [...all.slice(1000), ...all.slice(0, 1000)].join("\n") + "\n");
    const r = await buildImpactIndex({ ...input(), collection: reversed }, join(tmp, "rev"), {});
    expect(r.segments).toBe(2);
    expect(r.postings).toBe(readManifest(out8).params.postings);
    expect(readManifest(join(tmp, "rev")).params.buildId).toBe(whole);
  });
});

describe("impact collection refusals name the file, the line and the field", () => {
  const cases: [string, string, RegExp][] = [
    ["bad weight", `{"id": "1", "vector": {"a": "0.5"}}`, /:2: field vector\["a"\]: bad weight "0.5"/],
    ["negative weight", `{"id": "1", "vector": {"a": -1}}`, /:2: field vector\["a"\]: bad weight -1/],
    ["NaN", `{"id": "1", "vector": {"a": 1, "b": NaN}}`, /:2: field vector\["b"\]: weight NaN is not a finite number/],
    ["Infinity", `{"id": "1", "vector": {"b": Infinity}}`, /:2: field vector\["b"\]: weight Infinity/],
    ["unknown id", `{"id": "3", "vector": {"a": 1}}`, /:2: field id: unknown id 3 \(the units are 0 to 2\)/],
    ["id not a number", `{"id": "doc7", "vector": {"a": 1}}`, /:2: field id: "doc7" is not a unit number/],
    ["id twice", `{"id": "0", "vector": {"a": 1}}`, /:2: field id: unit 0 is given twice/],
    ["term too long", `{"id": "1", "vector": {"${"é".repeat(128)}": 1}}`, /:2: field vector: term .* is 256 UTF-8 bytes, longer than the limit 255/],
    ["no vector", `{"id": "1", "contents": "x"}`, /:2: field vector: expected an object of term weights/],
  ];
  it.each(cases)("%s", async (_name, line, error) => {
    const file = join(tmp, `bad-${_name.replace(/\W+/g, "-")}.jsonl`);
    writeFileSync(file, `{"id": "0", "vector": {"a": 2}}\n${line}\n`);
    const ids = join(tmp, "ids-3.tsv");
    writeFileSync(ids, "a\nb\nc\n");
    const err = buildIndex({ kind: "impact", vectors: { file, ids }, out: join(tmp, "bad-out") }, quiet);
    await expect(err).rejects.toThrow(new RegExp(file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + error.source));
  });

  it("query files: JSONL vectors and pretokenized TSV (repetition is weight), with their refusals", async () => {
    const jsonl = join(tmp, "q.jsonl");
    writeFileSync(jsonl, `{"id": "q1", "vector": {"super": 1.5, "bowl": 0.25}}\n{"id": 2, "vector": {}}\n`);
    expect(await readImpactQueries(jsonl)).toEqual([
      { id: "q1", weights: new Map([["super", 1.5], ["bowl", 0.25]]) },
      { id: "2", weights: new Map() },
    ]);
    const tsv = join(tmp, "q.tsv");
    writeFileSync(tsv, "q1\tsuper super bowl  50\nq2\t\n");
    expect(await readImpactQueries(tsv)).toEqual([
      { id: "q1", weights: new Map([["super", 2], ["bowl", 1], ["50", 1]]) },
      { id: "q2", weights: new Map() },
    ]);
    writeFileSync(jsonl, `{"id": "q1", "vector": {"a": 1}}\n{"id": "q2", "vector": {"a": NaN}}\n`);
    await expect(readImpactQueries(jsonl)).rejects.toThrow(`${jsonl}:2: field vector["a"]: weight NaN is not a finite number`);
    writeFileSync(tsv, "q1 no tab\n");
    await expect(readImpactQueries(tsv)).rejects.toThrow(`${tsv}:1: expected id<TAB>tokens`);
  });
});
