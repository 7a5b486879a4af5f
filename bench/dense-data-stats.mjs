// How realistic bench:dense-scale's vectors are: for a vector set, the PCA spectrum (the share of the
// variance in the top 10, 50, 100 and 200 principal components, and the participation ratio
// (Σλ)²/Σλ²: the covariance of an evenly spaced sample of at most 20,000 rows, its eigenvalues by
// LAPACK's symmetric solver through Debian's python3-numpy, numpy.linalg.eigvalsh) and the local intrinsic
// dimensionality (Levina & Bickel's MLE with k = 20 exact neighbours by Euclidean distance, found by
// tartan's SIMD exact scan; averaged over at least 1,000 of the set's own rows as query points, each
// row's own entry left out; printed as the mean of the per-point estimates, Levina & Bickel's, and as
// the inverse of the mean inverse, MacKay & Ghahramani's correction).
// Sets: the generator of ./dense-gen.mjs (each --settings entry) at the SQuAD size (2,067 rows) and at
// --rows (default 200,000), its queries, and real vectors: USE lite (512-d) over the SQuAD v1.1 dev
// paragraphs (title + ". " + text, as a dense build encodes them) and over all their questions.
// Beside them, the mean cosines bench/dense-calibrate.mjs compares (random pairs, a question to its own
// paragraph, its exact top-1 and top-10) for USE lite and each setting at 2,067 rows.
// GloVe vectors are not available offline, so they are not measured (node_modules holds wink-nlp's
// 100-d word vectors, word embeddings rather than passage embeddings; not measured either).
// Usage: npm run bench:dense-data-stats [-- --rows 200000] [--settings default,calibrated] [--no-real]

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { generator, stats } from "./dense-gen.mjs";
import { internal, load, OUT, SHARED, opt, tartan } from "./lib.mjs";

const SQUAD = join(SHARED, "data", "squad", "dev-v1.1.reconstructed.json");
const CACHE = join(OUT, "use-lite-squad");

/**
 * USE lite vectors of the SQuAD v1.1 dev paragraphs (title + ". " + text, normalised, in batches of 256
 * as `buildDenseIndex` encodes them) and of every question (in gold order), with the paragraph units
 * and the KILT records. Cached under bench/out/use-lite-squad (keyed by the data file's size and time).
 */
export async function useLiteSquad() {
  const { dense, unitsOfPage } = await tartan("retrieval");
  const { readSquadFile, squadToPages, squadQuestionsToKilt } = await tartan("knowledge");
  const data = readSquadFile(SQUAD);
  const pages = squadToPages(data);
  const units = pages.flatMap((page) => unitsOfPage(page, { unit: "paragraph" }));
  const { records } = squadQuestionsToKilt(data, { pages });
  const st = statSync(SQUAD);
  const key = { file: SQUAD, size: st.size, mtimeMs: st.mtimeMs, units: units.length, questions: records.length, dim: 512 };
  const meta = join(CACHE, "meta.json");
  const pf = join(CACHE, "passages.f32");
  const qf = join(CACHE, "questions.f32");
  const read = (f, rows) => {
    const b = readFileSync(f);
    if (b.length !== rows * 512 * 4) throw new Error(`${f}: ${b.length} bytes, expected ${rows * 512 * 4}`);
    return new Float32Array(b.buffer, b.byteOffset, b.length / 4).slice();
  };
  if (existsSync(meta) && JSON.stringify(JSON.parse(readFileSync(meta, "utf8"))) === JSON.stringify(key)) {
    return { units, records, passages: read(pf, units.length), questions: read(qf, records.length), dim: 512 };
  }
  process.stderr.write(`encoding ${units.length} paragraphs and ${records.length} questions with USE lite (cached in ${CACHE})\n`);
  const enc = await dense.createEncoder({ type: "use-lite" });
  const encode = async (texts, f) => {
    const out = new Float32Array(texts.length * 512);
    for (let i = 0; i < texts.length; i += 256) {
      const v = await f(texts.slice(i, i + 256));
      dense.normalizeRows(v, 512);
      out.set(v, i * 512);
    }
    return out;
  };
  const passages = await encode(units.map((u) => `${u.wikipedia_title}. ${u.text}`), (t) => enc.encodePassages(t));
  const questions = await encode(records.map((r) => r.input), (t) => enc.encodeQueries(t));
  await enc.close();
  mkdirSync(CACHE, { recursive: true });
  const put = (f, data) => {
    writeFileSync(`${f}.tmp`, typeof data === "string" ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    renameSync(`${f}.tmp`, f);
  };
  put(pf, passages);
  put(qf, questions);
  put(meta, JSON.stringify(key));
  return { units, records, passages, questions, dim: 512 };
}

/** A set of `count` rows of `dim` values, read by row range: `read(start, n)` (a Float32Array) as ./dense-gen.mjs's generators are. */
export const arraySet = (name, vectors, dim) => ({ name, count: vectors.length / dim, dim, read: (s, n) => vectors.subarray(s * dim, (s + n) * dim) });

const PY = `
import sys, json, numpy as np
n, d = int(sys.argv[1]), int(sys.argv[2])
x = np.frombuffer(sys.stdin.buffer.read(), dtype=np.float32).reshape(n, d).astype(np.float64)
x -= x.mean(axis=0)
c = (x.T @ x) / (n - 1)
w = np.linalg.eigvalsh(c)[::-1]
print(json.dumps([float(v) for v in w]))
`;

/** The covariance eigenvalues (descending) of an evenly spaced sample of ≤ `maxRows` rows of `set`. */
export function spectrum(set, maxRows = 20000) {
  const m = Math.min(maxRows, set.count);
  const sample = new Float32Array(m * set.dim);
  for (let i = 0; i < m; i++) sample.set(set.read(Math.floor((i * set.count) / m), 1), i * set.dim);
  if (!existsSync("/usr/bin/python3")) throw new Error("the PCA spectrum needs /usr/bin/python3 with numpy (Debian: python3-numpy)");
  const r = spawnSync("/usr/bin/python3", ["-c", PY, String(m), String(set.dim)], { input: Buffer.from(sample.buffer), maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`numpy eigvalsh failed (${r.status}): ${r.stderr}`);
  const w = JSON.parse(r.stdout.toString());
  const total = w.reduce((a, b) => a + b, 0);
  const top = (k) => w.slice(0, k).reduce((a, b) => a + b, 0) / total;
  const pr = total ** 2 / w.reduce((a, b) => a + b * b, 0);
  return { pcaRows: m, top10: top(10), top50: top(50), top100: top(100), top200: top(200), participationRatio: pr };
}

/**
 * Levina & Bickel's MLE of the local intrinsic dimensionality with `k` exact Euclidean neighbours, at
 * `points` evenly spaced rows of `set` (unit rows: distance² = 2 − 2·cosine), each row's own entry (and
 * any other exact duplicate at distance 0) left out.
 */
export async function lid(set, { k = 20, points = 1000 } = {}) {
  const { localRangeSearcher } = await internal("retrieval/dense/simd.js");
  const nq = Math.min(points, set.count);
  const dim = set.dim;
  const qs = new Float32Array(nq * dim);
  const rowOf = (j) => Math.floor((j * set.count) / nq);
  for (let j = 0; j < nq; j++) qs.set(set.read(rowOf(j), 1), j * dim);
  const K = k + 2;
  const best = Array.from({ length: nq }, () => []);
  const B = 65536;
  for (let r = 0; r < set.count; r += B) {
    const m = Math.min(B, set.count - r);
    const part = localRangeSearcher(set.read(r, m), dim, r)(qs, nq, Math.min(K, m));
    const kk = Math.min(K, m);
    for (let q = 0; q < nq; q++) {
      for (let t = 0; t < kk; t++) {
        const id = part.ids[q * kk + t];
        // the row itself (its float32 score is not exactly 1) and exact duplicates of it are left out
        if (id >= 0 && id !== rowOf(q) && part.scores[q * kk + t] < 1 - 5e-7) best[q].push(part.scores[q * kk + t]);
      }
    }
  }
  let sum = 0, sumInv = 0, used = 0;
  for (let q = 0; q < nq; q++) {
    // cosine → distance, ascending
    const d = best[q].map((s) => Math.sqrt(Math.max(0, 2 - 2 * s))).sort((a, b) => a - b).slice(0, k);
    if (d.length < k) continue;
    let s = 0;
    for (let j = 0; j < k - 1; j++) s += Math.log(d[k - 1] / d[j]);
    const inv = s / (k - 1);
    sum += 1 / inv;
    sumInv += inv;
    used++;
  }
  return { k, points: used, mle: sum / used, mleMacKay: used / sumInv };
}

/** Spectrum and intrinsic dimensionality of one set, with the time taken. */
export async function describe(set, { points = 1000 } = {}) {
  const t0 = performance.now();
  const s = spectrum(set);
  const l = await lid(set, { points });
  return { set: set.name, rows: set.count, dim: set.dim, ...s, lid: l.mle, lidMacKay: l.mleMacKay, lidPoints: l.points, seconds: (performance.now() - t0) / 1000 };
}

/** The Markdown table of `describe` results. */
export function table(rows) {
  const f = (x) => x.toFixed(3);
  const lines = ["| set | rows | dim | PCA sample | top 10 | top 50 | top 100 | top 200 | participation ratio | LID (MLE, k=20) | LID (MacKay) | LID points |", "|---|---|---|---|---|---|---|---|---|---|---|---|"];
  for (const r of rows) lines.push(`| ${r.set} | ${r.rows} | ${r.dim} | ${r.pcaRows} | ${f(r.top10)} | ${f(r.top50)} | ${f(r.top100)} | ${f(r.top200)} | ${r.participationRatio.toFixed(1)} | ${r.lid.toFixed(1)} | ${r.lidMacKay.toFixed(1)} | ${r.lidPoints} |`);
  return lines.join("\n");
}

/** Mean cosine of random pairs, of a query to its own passage, and of a query's exact top-1 and top-10 (./dense-gen.mjs `stats`, as bench/dense-calibrate.mjs prints them). */
export function cosines(name, vectors, dim, queries, targetOf) {
  const n = vectors.length / dim;
  const nq = queries.length / dim;
  let top1 = 0, top10 = 0;
  const s = new Float64Array(n);
  for (let j = 0; j < nq; j++) {
    for (let i = 0; i < n; i++) {
      let v = 0;
      for (let d = 0; d < dim; d++) v += vectors[i * dim + d] * queries[j * dim + d];
      s[i] = v;
    }
    s.sort();
    top1 += s[n - 1] / nq;
    top10 += s[n - 10] / nq;
  }
  return { set: name, rows: n, queries: nq, ...stats(vectors, dim, queries, targetOf), top1, top10 };
}

async function main() {
  const o = opt(
    { rows: { type: "string" }, settings: { type: "string" }, "no-real": { type: "boolean" } },
    "usage: npm run bench:dense-data-stats [-- --rows N (default 200000)] [--settings default,calibrated] [--no-real]",
  );
  const rows = Number(o.rows ?? "200000");
  const settings = (o.settings ?? "default,calibrated").split(",");
  process.stderr.write(`load average at the start: ${load()}\n`);
  const out = [];
  const cos = [];
  if (!o["no-real"]) {
    const r = await useLiteSquad();
    // every fifth question (at most 2,000) against its own paragraph, as bench/dense-calibrate.mjs picks them
    const unitOf = new Map(r.units.map((u, i) => [`${u.wikipedia_id}#${u.start_paragraph_id}`, i]));
    const pick = [];
    r.records.forEach((rec, i) => {
      const p = rec.output.flatMap((x) => x.provenance ?? [])[0];
      if (i % 5 === 0 && pick.length < 2000) pick.push({ q: i, unit: unitOf.get(`${p.wikipedia_id}#${p.start_paragraph_id}`) });
    });
    const qv = new Float32Array(pick.length * 512);
    pick.forEach((x, j) => qv.set(r.questions.subarray(x.q * 512, (x.q + 1) * 512), j * 512));
    cos.push(cosines("USE lite, SQuAD dev", r.passages, 512, qv, (j) => pick[j].unit));
    out.push(await describe(arraySet("USE lite, SQuAD dev paragraphs", r.passages, 512), { points: 2067 }));
    out.push(await describe(arraySet("USE lite, SQuAD dev questions", r.questions, 512), { points: 2000 }));
  }
  for (const setting of settings) {
    const small = generator({ count: 2067, dim: 768, setting });
    cos.push(cosines(`generator ${setting}`, small.read(0, 2067), 768, small.queries(cos[0]?.queries ?? 2000), (j) => small.target(j)));
    for (const count of [2067, rows]) {
      const g = generator({ count, dim: 768, setting });
      out.push(await describe({ ...g, name: `generator ${setting}, passages` }, { points: Math.min(count, count === 2067 ? 2067 : 1000) }));
    }
    const g = generator({ count: rows, dim: 768, setting });
    out.push(await describe(arraySet(`generator ${setting}, 2,000 queries (over ${rows} rows)`, g.queries(2000), 768), { points: 2000 }));
  }
  for (const r of out) process.stderr.write(`${JSON.stringify(r)}\n`);
  process.stdout.write(`${table(out)}\n\n`);
  const f = (x) => x.toFixed(3);
  const cl = ["| set (2,067 passages) | queries | random pairs | query to its passage | query's top-1 | query's top-10 |", "|---|---|---|---|---|---|"];
  for (const c of cos) cl.push(`| ${c.set} | ${c.queries} | ${f(c.randomPairCosine)} | ${f(c.queryToPassageCosine)} | ${f(c.top1)} | ${f(c.top10)} |`);
  process.stdout.write(`mean cosines:\n${cl.join("\n")}\n`);
  mkdirSync(OUT, { recursive: true });
  writeFileSync(join(OUT, "dense-data-stats.json.tmp"), JSON.stringify({ sets: out, cosines: cos }, null, 2));
  renameSync(join(OUT, "dense-data-stats.json.tmp"), join(OUT, "dense-data-stats.json"));
  process.stderr.write(`load average at the end: ${load()}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
