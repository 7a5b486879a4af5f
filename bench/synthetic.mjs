// The synthetic retrieval corpus shared by bench:retrieval and bench:scale-out: passages of 80-120 words
// from a Zipfian vocabulary of pseudo-words and queries of 5-10 words, the same for the same arguments
// (seeded PRNG from src/util/random.ts; needs `npm run build`).
import { internal } from "./lib.mjs";

const { seededRandom } = await internal("util/random.js");

/** The synthetic corpus: units and queries, the same for the same arguments. */
export function synthetic(docs, nQueries, vocabSize = 100_000, seed = 1) {
  const rand = seededRandom(seed);
  const syll = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "per", "an", "el", "con", "dor", "fa", "gu", "ix", "jo", "qua", "ber", "son", "tri", "mel", "ost", "ing", "ed"];
  const seen = new Set();
  const vocab = [];
  while (vocab.length < vocabSize) {
    let w = "";
    const n = 1 + Math.floor(rand() * 4);
    for (let i = 0; i < n; i++) w += syll[Math.floor(rand() * syll.length)];
    if (!seen.has(w)) {
      seen.add(w);
      vocab.push(w);
    }
  }
  const cum = new Float64Array(vocabSize);
  let s = 0;
  for (let r = 0; r < vocabSize; r++) cum[r] = s += 1 / (r + 1);
  const word = () => {
    const x = rand() * s;
    let lo = 0;
    let hi = vocabSize - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo];
  };
  const units = [];
  for (let i = 0; i < docs; i++) {
    const n = 80 + Math.floor(rand() * 41);
    const ws = new Array(n);
    for (let j = 0; j < n; j++) ws[j] = word();
    units.push({ wikipedia_id: `syn:${i}`, wikipedia_title: `Synthetic ${i}`, text: ws.join(" ") });
  }
  const queries = [];
  for (let i = 0; i < nQueries; i++) {
    const n = 5 + Math.floor(rand() * 6);
    const ws = [];
    for (let j = 0; j < n; j++) ws.push(word());
    queries.push(ws.join(" "));
  }
  return { units, queries, gold: null };
}

