// What compressing a dense index costs on a real task: SQuAD v1.1 dev (2,067 paragraphs, all 10,570
// questions) with USE lite (512-d) vectors (./dense-data-stats.mjs `useLiteSquad`, cached), KILT's
// page-level and paragraph-level R-precision and recall@1, 5, 20, 100 (tartan's KILT evaluator,
// `evaluate` of tartan/eval) of compressed indexes (`quantize`: rabitq, pq4, pq; `buildIvfIndex` from
// the vectors) against exact search (`none`: `buildDenseIndex` over the same vectors), and the share of
// exact search's top 100 each keeps. Every compressed index has 36 lists (two levels of 6) of about 57
// paragraphs and is searched at each --grid entry [nprobe, rerank]: the default probes all 36 lists with
// 100 candidates (what the codes alone lose: the candidates are the codes' best 100, rescored by their
// int8 vectors), then 8 of 36 lists (22% of the collection) with 100 and with 400 candidates.
// Usage: npm run bench:dense-task [-- --grid '[[36,100],[8,100],[8,400]]'] [--kinds rabitq,pq4,pq]

import { mkdirSync, rmSync, writeFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { useLiteSquad } from "./dense-data-stats.mjs";
import { cpuS, load, OUT as BENCH_OUT, opt, tartan } from "./lib.mjs";

const OUT = join(BENCH_OUT, "dense-task");
const o = opt(
  { grid: { type: "string" }, kinds: { type: "string" }, lists: { type: "string" } },
  "usage: npm run bench:dense-task [-- --grid '[[nprobe,refine],…]' (default [[36,100],[8,100],[8,400]])] [--kinds rabitq,pq4,pq] [--lists K (K² lists; default 6)]",
);
const GRID = JSON.parse(o.grid ?? "[[36,100],[8,100],[8,400]]");
const KINDS = (o.kinds ?? "rabitq,pq4,pq").split(",");
const K1 = Number(o.lists ?? "6");
const KS = [1, 5, 20, 100];
const log = (s) => process.stderr.write(`${s}\n`);
log(`load average at the start: ${load()}`);

const { dense, buildDenseIndex, openDense } = await tartan("retrieval");
const { evaluate } = await tartan("eval");
const { writeJsonl } = await tartan("records");
const data = await useLiteSquad();
const { units, records, passages, questions, dim } = data;
mkdirSync(OUT, { recursive: true });
const gold = join(OUT, "gold.jsonl");
await writeJsonl(gold, records);

/** An encoder that hands back the cached passage vectors in order (so the exact index holds the very vectors the compressed ones were built from). */
function cachedPassages() {
  let next = 0;
  return {
    spec: { type: "use-lite" },
    dim,
    async encodePassages(texts) {
      const v = passages.slice(next * dim, (next + texts.length) * dim);
      next += texts.length;
      if (v.length !== texts.length * dim) throw new Error(`cached vectors: ${next} passages asked for, ${passages.length / dim} cached`);
      return v;
    },
    async encodeQueries() {
      throw new Error("queries come as vectors");
    },
    async close() {},
  };
}

async function build(kind) {
  const dir = join(OUT, kind);
  rmSync(dir, { recursive: true, force: true });
  const t0 = process.cpuUsage();
  if (kind === "none") await buildDenseIndex(units, dir, { unit: "paragraph", source: "squad", encoder: { type: "use-lite" } }, undefined, { encoder: cachedPassages() });
  else await dense.buildIvfIndex(dense.arraySource(passages, dim), units, dir, { quantize: kind, k1: K1, k2: K1, unit: "paragraph", source: "squad", encoder: null }, { threads: 0 });
  return { dir, buildCpuS: cpuS(t0) };
}

async function run(kind, dir, search) {
  const r = await openDense(dir, { threads: 1 });
  const t0 = process.cpuUsage();
  const hits = await r.searchVectors(questions, 100, search ?? {});
  const cpu = cpuS(t0);
  // the provenance the evaluator reads (page and paragraph ids), kept in memory: 100 full provenances a question would be 226 MB a run
  const guesses = records.map((rec, i) => ({
    id: rec.id,
    input: rec.input,
    output: [{ provenance: hits[i].map((h) => ({ wikipedia_id: r.units.get(h.unit).wikipedia_id, start_paragraph_id: r.units.get(h.unit).start_paragraph_id, score: h.score })) }],
  }));
  await r.close();
  const page = (await evaluate(gold, guesses, { ks: KS, mode: "retrieval" })).eval_retrieval;
  const para = (await evaluate(gold, guesses, { ks: KS, rankKeys: ["wikipedia_id", "start_paragraph_id"], mode: "retrieval" })).eval_retrieval;
  return { kind, ...(search ?? {}), page, para, hits: hits.map((h) => h.map((x) => x.unit)), msPerQuery: (cpu / records.length) * 1000 };
}

const NQ = records.length;
const exactIndex = await build("none");
const exact = await run("none", exactIndex.dir, null);
// the share of exact search's top 100 (as units) a run keeps
const keep = (row) => {
  let kept = 0;
  for (let i = 0; i < NQ; i++) {
    const e = new Set(exact.hits[i]);
    kept += row.hits[i].filter((u) => e.has(u)).length / exact.hits[i].length;
  }
  row.exactTop100 = kept / NQ;
  const { hits, ...r } = row;
  log(JSON.stringify(r));
  return row;
};
const rows = [keep(exact)];
const built = {};
for (const kind of KINDS) {
  built[kind] = await build(kind);
  log(`${kind}: built in ${built[kind].buildCpuS.toFixed(1)} CPU-s`);
}
// each depth over every code type in turn (a partial run still compares them)
for (const [nprobe, refine] of GRID) for (const kind of KINDS) rows.push(keep({ ...(await run(kind, built[kind].dir, { nprobe, refine })), buildCpuS: built[kind].buildCpuS }));
const f = (x) => (100 * x).toFixed(2);
const head = `| index | lists probed / 36 | candidates | ${["R-prec", ...KS.map((k) => `R@${k}`)].join(" | ")} | ${["R-prec", ...KS.map((k) => `R@${k}`)].join(" | ")} | exact top-100 kept | CPU ms/query |`;
const lines = [
  `SQuAD v1.1 dev, ${units.length} paragraphs, ${records.length} questions, USE lite ${dim}-d; page level (first block), paragraph level (second block), in %.`,
  head,
  `|${"---|".repeat(3 + 2 * (KS.length + 1) + 2)}`,
];
for (const r of rows) {
  // KILT's evaluator reports precision@1 at k = 1 (no recall@1): a SQuAD question has one gold paragraph, so it is recall@1
  const m = (e) => [e.Rprec, ...KS.map((k) => e[`recall@${k}`] ?? e[`precision@${k}`])].map(f).join(" | ");
  lines.push(`| ${r.kind} | ${r.nprobe ?? "exact"} | ${r.refine ?? "all"} | ${m(r.page)} | ${m(r.para)} | ${r.exactTop100.toFixed(3)} | ${r.msPerQuery.toFixed(2)} |`);
}
process.stdout.write(`${lines.join("\n")}\n`);
const json = rows.map(({ hits, ...r }) => r);
writeFileSync(join(OUT, "results.json.tmp"), JSON.stringify(json, null, 2));
renameSync(join(OUT, "results.json.tmp"), join(OUT, "results.json"));
log(`load average at the end: ${load()}`);
