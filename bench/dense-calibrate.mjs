// Calibration of bench:dense-scale's generator (./dense-gen.mjs) against real embeddings: USE lite over
// the SQuAD v1.1 dev paragraphs (title + text) of the first N articles (argument, default all 48) and every
// fifth of their questions (at most 2,000). Prints, for both, the
// mean cosine of random pairs, of a question to its own paragraph, and the share of the question's
// exact top-10 cosine spread (top-1 minus top-10), so the synthetic set's difficulty can be compared.
// Usage: npm run bench:dense-calibrate [-- ARTICLES]

import { join } from "node:path";
import { generator, stats } from "./dense-gen.mjs";
import { opt, SHARED, tartan } from "./lib.mjs";

const { dense, unitsOfPage } = await tartan("retrieval");
const { readSquadFile, squadToPages } = await tartan("knowledge");
const { createEncoder, normalizeRows } = dense;
const { positionals } = opt({}, "usage: npm run bench:dense-calibrate [-- ARTICLES] (the first ARTICLES of the 48 SQuAD dev articles; default all)", { positionals: true });
const ARTICLES = Number(positionals[0] ?? "48");
const squad = readSquadFile(join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json"));
squad.data = squad.data.slice(0, ARTICLES);
const units = squadToPages(squad).flatMap((page) => unitsOfPage(page, { unit: "paragraph" }));
const questions = [];
let u = 0;
squad.data.forEach((a) => a.paragraphs.forEach((p) => { p.qas.forEach((q) => questions.push({ q: q.question, unit: u })); u++; }));
const pick = questions.filter((_, i) => i % 5 === 0).slice(0, 2000);
const enc = await createEncoder({ type: "use-lite" });
const pv = normalizeRows(await enc.encodePassages(units.map((x) => `${x.wikipedia_title}. ${x.text}`)), 512);
const qv = normalizeRows(await enc.encodeQueries(pick.map((x) => x.q)), 512);
await enc.close();

function topGap(vectors, dim, queries) {
  const n = vectors.length / dim;
  const nq = queries.length / dim;
  let gap = 0, top1 = 0, top10 = 0;
  for (let j = 0; j < nq; j++) {
    const s = new Float64Array(n);
    for (let i = 0; i < n; i++) { let v = 0; for (let d = 0; d < dim; d++) v += vectors[i * dim + d] * queries[j * dim + d]; s[i] = v; }
    s.sort();
    top1 += s[n - 1] / nq; top10 += s[n - 10] / nq; gap += (s[n - 1] - s[n - 10]) / nq;
  }
  return { top1, top10, gap };
}
const real = { ...stats(pv, 512, qv, (j) => pick[j].unit), ...topGap(pv, 512, qv) };
const g = generator({ count: units.length, dim: 768 });
const gv = g.read(0, units.length);
const gq = g.queries(pick.length);
const synth = { ...stats(gv, 768, gq, (j) => g.target(j)), ...topGap(gv, 768, gq) };
console.log(JSON.stringify({ useLiteSquad: real, generator2067: synth }, null, 2));
