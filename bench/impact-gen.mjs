// A deterministic generator of SPLADE-like learned-sparse collections for bench:impact: expansion terms
// over BERT's 30,522-term WordPiece vocabulary size (terms "w0" … "w30521", w0 the most frequent),
// drawn from a Zipf(1.0) law by rank, 120–250 distinct non-zero terms a passage, and 20–40 weighted
// terms a query (half from a target passage, half from the same Zipf law, as a query shares terms with
// the passages it should find). Weights are positive floats with a long tail (SPLADE's log(1 + ReLU)
// activations: most below 1, a few near 3). Every value comes from one xorshift stream seeded by the
// size, so a size always gives the same files.
//   node bench/impact-gen.mjs --passages 100000 --queries 200 --out DIR
// writes DIR/collection.jsonl (JsonVectorCollection), DIR/ids.tsv (unit i: page "p<i>"), DIR/queries.jsonl
// ({id, vector}), and prints the collection's statistics.

import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";

export const VOCABULARY = 30_522;

/** xorshift32 stream in [0, 1). */
export function stream(seed) {
  let x = (seed ^ 0x9e3779b9) >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
}

/** Zipf(s) over ranks 0..n-1 by inverse CDF (binary search). */
export function zipf(n, s, rand) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1) ** s;
  for (let i = 0; i < n; i++) cdf[i] /= sum;
  return () => {
    const u = rand();
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const weight = (rand) => Number((0.05 + 2.95 * rand() ** 3).toFixed(4));

/** One passage's terms and weights (distinct terms, 120–250 of them). */
function passage(rand, draw) {
  const n = 120 + Math.floor(rand() * 131);
  const v = {};
  let k = 0;
  while (k < n) {
    const t = draw();
    if (v[`w${t}`] !== undefined) continue;
    v[`w${t}`] = weight(rand);
    k++;
  }
  return v;
}

/** Writes the collection, ids and queries of `passages` passages and `queries` queries into `out`; returns statistics. */
export async function generate({ passages, queries, out }) {
  mkdirSync(out, { recursive: true });
  const rand = stream(passages * 7919 + queries);
  const draw = zipf(VOCABULARY, 1.0, rand);
  const col = createWriteStream(join(out, "collection.jsonl"));
  const ids = createWriteStream(join(out, "ids.tsv"));
  const write = (s, line) => (s.write(line) ? null : new Promise((r) => s.once("drain", r)));
  const targets = new Map();
  for (let q = 0; q < queries; q++) targets.set(Math.floor((q + 0.5) * (passages / queries)), q);
  const queryVectors = new Array(queries);
  let postings = 0;
  const df = new Uint32Array(VOCABULARY);
  for (let i = 0; i < passages; i++) {
    const v = passage(rand, draw);
    const terms = Object.keys(v);
    postings += terms.length;
    for (const t of terms) df[Number(t.slice(1))]++;
    const q = targets.get(i);
    if (q !== undefined) {
      const n = 20 + Math.floor(rand() * 21);
      const qv = {};
      let k = 0;
      while (k < n) {
        const t = k % 2 === 0 ? terms[Math.floor(rand() * terms.length)] : `w${draw()}`;
        if (qv[t] !== undefined) continue;
        qv[t] = weight(rand);
        k++;
      }
      queryVectors[q] = { id: `q${q}`, vector: qv };
    }
    await write(col, `${JSON.stringify({ id: String(i), contents: "", vector: v })}\n`);
    await write(ids, `p${i}\n`);
  }
  await Promise.all([col, ids].map((s) => new Promise((r) => s.end(r))));
  const qs = createWriteStream(join(out, "queries.jsonl"));
  for (const q of queryVectors) await write(qs, `${JSON.stringify(q)}\n`);
  await new Promise((r) => qs.end(r));
  let used = 0;
  let maxDf = 0;
  for (const d of df) {
    if (d > 0) used++;
    maxDf = Math.max(maxDf, d);
  }
  const queryTerms = queryVectors.reduce((s, q) => s + Object.keys(q.vector).length, 0) / queries;
  return { passages, queries, postings, termsPerPassage: postings / passages, queryTerms, vocabularyUsed: used, largestDocFreq: maxDf };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, d) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? d : process.argv[i + 1];
  };
  const s = await generate({ passages: Number(arg("passages", 100_000)), queries: Number(arg("queries", 200)), out: arg("out", "bench/out/impact") });
  console.log(JSON.stringify(s));
}
