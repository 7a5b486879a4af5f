// trec_eval 10.0's measures with its exact semantics: the ranking is by score with ties broken by
// docno (descending byte order), a document absent from the qrels is non-relevant (and ignored by
// bpref), relevance ≥ 1 counts as relevant, graded relevance is the gain of ndcg and ndcg_cut, queries
// without judgments are ignored, queries without results stop the evaluation unless `-c` (then they
// score as trec_eval's stand-in ranking of one unjudged document, num_ret 0, and every mean is over all
// judged queries). Each function below follows the
// C function of the same measure (m_<name>.c) step by step, including its floating-point order.

import { rankEntries, type Judgment, type Qrels, type RunEntry, type TrecRun } from "./files.js";

const RELVALUE_NONPOOL = -1;
const RELVALUE_UNJUDGED = -2;
const MIN_GEO_MEAN = 0.00001;
const RELEVANCE_LEVEL = 1;
/** trec_eval's stand-in ranking for a judged query without results under -c. */
const BOGUS: RunEntry = { docno: "ceci_nest_pas_un_docno", score: 1, rank: 1 };

/** A query's ranking as relevance values, with the counts every measure uses (trec_eval's RES_RELS). */
export interface ResRels {
  /** Relevance of the document at each rank (−1: not in the qrels, −2: in the qrels, judged < 0). */
  ranked: Int32Array;
  numRet: number;
  numRel: number;
  numRelRet: number;
  /** Judged documents per relevance level (all judged, retrieved or not). */
  relLevels: number[];
  numRelLevels: number;
}

/** te_form_res_rels: joins a query's ranking with its judgments. Throws on duplicate documents. */
export function formResRels(qid: string, judgments: readonly Judgment[], entries: readonly RunEntry[]): ResRels {
  const ranked = rankEntries(entries);
  const byDoc = new Map<string, number>();
  for (let i = 1; i < judgments.length; i++)
    if (judgments[i].docno === judgments[i - 1].docno) throw new Error(`qrels: query ${qid} judges document ${judgments[i].docno} twice (trec_eval stops: "duplicate docs")`);
  let maxRel = judgments.length ? judgments[0].rel : 0;
  for (const j of judgments) {
    if (j.rel > maxRel) maxRel = j.rel;
    byDoc.set(j.docno, j.rel);
  }
  const seen = new Set<string>();
  for (const e of ranked) {
    if (seen.has(e.docno)) throw new Error(`run: query ${qid} lists document ${e.docno} twice (trec_eval stops: "duplicate docs")`);
    seen.add(e.docno);
  }
  const relLevels = new Array<number>(Math.max(0, maxRel + 1)).fill(0);
  for (const j of judgments) if (j.rel >= 0) relLevels[j.rel]++;
  const out = new Int32Array(ranked.length);
  let numRelRet = 0;
  ranked.forEach((e, i) => {
    const rel = byDoc.get(e.docno);
    const v = rel === undefined ? RELVALUE_NONPOOL : rel < 0 ? RELVALUE_UNJUDGED : rel;
    out[i] = v;
    if (v >= RELEVANCE_LEVEL) numRelRet++;
  });
  let numRel = 0;
  let numRelLevels = 0;
  relLevels.forEach((count, level) => {
    if (count) {
      numRelLevels = level + 1;
      if (level >= RELEVANCE_LEVEL) numRel += count;
    }
  });
  return { ranked: out, numRet: ranked.length, numRel, numRelRet, relLevels, numRelLevels };
}

/** How a measure is printed and averaged. */
type Kind = "double" | "long" | "gm" | "runid" | "num_q";

interface MeasureDef {
  name: string;
  kind: Kind;
  /** Default cut-offs (integers) or recall points; undefined: no parameters. */
  params?: number[];
  /** Values for the query, one per parameter (or one). */
  calc(r: ResRels, params: number[]): number[];
}

const CUTS = [5, 10, 15, 20, 30, 100, 200, 500, 1000];

function cutLoop(r: ResRels, cutoffs: number[], atCut: (relSoFar: number, i: number, sum: number) => number, everyDoc?: (i: number, relSoFar: number) => number): number[] {
  const values = new Array<number>(cutoffs.length).fill(0);
  let c = 0;
  let relSoFar = 0;
  let sum = 0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      values[c] = atCut(relSoFar, i, sum);
      if (++c === cutoffs.length) break;
    }
    if (r.ranked[i] >= RELEVANCE_LEVEL) {
      relSoFar++;
      if (everyDoc) sum += everyDoc(i, relSoFar);
    }
  }
  while (c < cutoffs.length) {
    values[c] = atCut(relSoFar, cutoffs[c], sum);
    c++;
  }
  return values;
}

function averagePrecisionSum(r: ResRels): { sum: number; relSoFar: number } {
  let relSoFar = 0;
  let sum = 0;
  for (let i = 0; i < r.numRet; i++)
    if (r.ranked[i] >= RELEVANCE_LEVEL) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  return { sum, relSoFar };
}

function ndcgFull(r: ResRels): number {
  // setup_gains without parameters: level i has gain i, sorted by gain
  const gains = r.relLevels.slice(0, r.numRelLevels).map((count, level) => ({ level, gain: level, count }));
  const gainOf = (rel: number) => (rel >= 0 && rel < gains.length ? gains[rel].gain : 0);
  let resultsDcg = 0;
  let idealDcg = 0;
  let cur = gains.length - 1;
  let idealGain = cur >= 0 ? gains[cur].gain : 0;
  let atLevel = 0;
  let i = 0;
  const idealStep = () => {
    atLevel++;
    while (cur >= 0 && atLevel > gains[cur].count) {
      atLevel = 1;
      cur--;
      idealGain = cur >= 0 ? gains[cur].gain : 0;
    }
    if (idealGain > 0) idealDcg += idealGain / Math.log2(i + 2);
  };
  for (; i < r.numRet && idealGain > 0; i++) {
    const g = gainOf(r.ranked[i]);
    if (g !== 0) resultsDcg += g / Math.log2(i + 2);
    idealStep();
  }
  for (; i < r.numRet; i++) {
    const g = gainOf(r.ranked[i]);
    if (g !== 0) resultsDcg += g / Math.log2(i + 2);
  }
  while (idealGain > 0) {
    idealStep();
    i++;
  }
  return idealDcg > 0 ? resultsDcg / idealDcg : 0;
}

function ndcgCut(r: ResRels, cutoffs: number[]): number[] {
  const values = new Array<number>(cutoffs.length).fill(0);
  let c = 0;
  let sum = 0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      values[c] = sum;
      if (++c === cutoffs.length) break;
    }
    const gain = r.ranked[i];
    if (gain > 0) sum += gain / Math.log2(i + 2);
  }
  while (c < cutoffs.length) values[c++] = sum;
  c = 0;
  let lvl = r.numRelLevels - 1;
  let count = 0;
  let ideal = 0;
  for (let i = 0; ; i++) {
    count++;
    while (lvl > 0 && count > r.relLevels[lvl]) {
      lvl--;
      count = 1;
    }
    if (lvl <= 0) break;
    if (i === cutoffs[c]) {
      if (ideal > 0) values[c] /= ideal;
      if (++c === cutoffs.length) break;
    }
    ideal += lvl / Math.log2(i + 2);
  }
  while (c < cutoffs.length) {
    if (ideal > 0) values[c] /= ideal;
    c++;
  }
  return values;
}

const MEASURES: MeasureDef[] = [
  { name: "runid", kind: "runid", calc: () => [0] },
  { name: "num_q", kind: "num_q", calc: () => [1] },
  { name: "num_ret", kind: "long", calc: (r) => [r.numRet] },
  { name: "num_rel", kind: "long", calc: (r) => [r.numRel] },
  { name: "num_rel_ret", kind: "long", calc: (r) => [r.numRelRet] },
  {
    name: "map",
    kind: "double",
    calc: (r) => {
      const { sum, relSoFar } = averagePrecisionSum(r);
      return [relSoFar ? sum / r.numRel : 0];
    },
  },
  {
    name: "gm_map",
    kind: "gm",
    calc: (r) => {
      let { sum, relSoFar } = averagePrecisionSum(r);
      if (relSoFar) sum = sum / r.numRel;
      return [Math.log(Math.max(sum, MIN_GEO_MEAN))];
    },
  },
  {
    name: "Rprec",
    kind: "double",
    calc: (r) => {
      const look = Math.min(r.numRet, r.numRel);
      if (look === 0) return [0];
      let relSoFar = 0;
      for (let i = 0; i < look; i++) if (r.ranked[i] >= RELEVANCE_LEVEL) relSoFar++;
      return [relSoFar / r.numRel];
    },
  },
  {
    name: "bpref",
    kind: "double",
    calc: (r) => {
      let numNonrel = 0;
      for (let j = 0; j < RELEVANCE_LEVEL; j++) numNonrel += r.relLevels[j] ?? 0;
      let nonrelSoFar = 0;
      let bpref = 0;
      for (let j = 0; j < r.numRet; j++) {
        const v = r.ranked[j];
        if (v === RELVALUE_NONPOOL || v === RELVALUE_UNJUDGED) continue;
        if (v >= 0 && v < RELEVANCE_LEVEL) nonrelSoFar++;
        else if (nonrelSoFar > 0) bpref += 1 - Math.min(nonrelSoFar, r.numRel) / Math.min(numNonrel, r.numRel);
        else bpref += 1;
      }
      if (r.numRel) bpref /= r.numRel;
      return [bpref];
    },
  },
  {
    name: "recip_rank",
    kind: "double",
    calc: (r) => {
      for (let i = 0; i < r.numRet; i++) if (r.ranked[i] >= RELEVANCE_LEVEL) return [1 / (i + 1)];
      return [0];
    },
  },
  {
    name: "iprec_at_recall",
    kind: "double",
    params: [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1],
    calc: (r, points) => {
      const values = new Array<number>(points.length).fill(0);
      // C's lround: halves away from zero
      const cutoffs = points.map((p) => {
        const x = p * r.numRel; // never negative
        const f = Math.floor(x);
        return x - f >= 0.5 ? f + 1 : f;
      });
      let cur = points.length - 1;
      while (cur >= 0 && cutoffs[cur] > r.numRelRet) cur--;
      let precis = r.numRelRet / r.numRet;
      let intPrecis = precis;
      let relSoFar = r.numRelRet;
      for (let i = r.numRet; i > 0 && relSoFar > 0; i--) {
        precis = relSoFar / i;
        if (intPrecis < precis) intPrecis = precis;
        if (r.ranked[i - 1] >= RELEVANCE_LEVEL) {
          while (cur >= 0 && relSoFar === cutoffs[cur]) values[cur--] = intPrecis;
          relSoFar--;
        }
      }
      while (cur >= 0) values[cur--] = intPrecis;
      return values;
    },
  },
  { name: "P", kind: "double", params: CUTS, calc: (r, cuts) => cutLoop(r, cuts, (rel, i) => rel / i) },
  { name: "recall", kind: "double", params: CUTS, calc: (r, cuts) => (r.numRel === 0 ? cuts.map(() => 0) : cutLoop(r, cuts, (rel) => rel / r.numRel)) },
  { name: "ndcg", kind: "double", calc: (r) => [ndcgFull(r)] },
  { name: "ndcg_cut", kind: "double", params: CUTS, calc: (r, cuts) => ndcgCut(r, cuts) },
  {
    name: "map_cut",
    kind: "double",
    params: CUTS,
    calc: (r, cuts) =>
      r.numRel === 0
        ? cuts.map(() => 0)
        : cutLoop(
            r,
            cuts,
            (_rel, _i, sum) => sum / r.numRel,
            (i, relSoFar) => relSoFar / (i + 1),
          ),
  },
  { name: "success", kind: "double", params: [1, 5, 10], calc: (r, cuts) => cutLoop(r, cuts, (rel) => (rel ? 1 : 0)) },
];

/** The measures trec_eval prints without -m ("official"). */
export const OFFICIAL = ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank", "iprec_at_recall", "P"];

/** The names of trec_eval's measures tartan computes. */
export const MEASURE_NAMES = MEASURES.map((m) => m.name);

/** A measure with its parameters. */
export interface MeasureRequest {
  name: string;
  params?: number[];
}

/**
 * Parses measure names as trec_eval's `-m` takes them (`P.5,10`, `ndcg_cut`, `official`) and as it
 * prints them (`P_10`, `ndcg_cut_10`, `iprec_at_recall_0.50`). The first parameter list given for a
 * measure wins, as in trec_eval.
 */
export function parseMeasures(specs: readonly string[]): MeasureRequest[] {
  const wanted = new Map<string, { explicit?: number[]; named: Set<number> }>();
  const want = (name: string) => {
    let w = wanted.get(name);
    if (!w) wanted.set(name, (w = { named: new Set() }));
    return w;
  };
  const fail = (spec: string): never => {
    throw new Error(`unknown measure "${spec}" (tartan has ${MEASURE_NAMES.join(", ")}, official)`);
  };
  for (const raw of specs)
    for (const spec of raw.split(/[\s]+/u).filter(Boolean)) {
      if (spec === "official") {
        for (const n of OFFICIAL) want(n);
        continue;
      }
      const dot = spec.indexOf(".");
      const base = dot > 0 ? spec.slice(0, dot) : spec;
      if (MEASURE_NAMES.includes(base)) {
        const w = want(base);
        if (dot > 0) {
          const def = MEASURES.find((d) => d.name === base)!;
          if (!def.params) throw new Error(`measure ${base} takes no parameters`);
          const params = spec.slice(dot + 1).split(",").filter(Boolean).map(Number);
          const integer = base !== "iprec_at_recall";
          if (params.length === 0 || params.some((p) => !Number.isFinite(p) || p < 0 || (integer && (!Number.isInteger(p) || p === 0))))
            throw new Error(`measure ${base}: bad parameters "${spec.slice(dot + 1)}"`);
          w.explicit ??= params; // the first list wins, as in trec_eval
        }
        continue;
      }
      const m = /^(.+)_([0-9]+(?:\.[0-9]+)?)$/u.exec(spec);
      if (!m || !MEASURE_NAMES.includes(m[1]) || !MEASURES.find((d) => d.name === m[1])!.params) fail(spec);
      want(m![1]).named.add(Number(m![2]));
    }
  return MEASURES.filter((d) => wanted.has(d.name)).map((d) => {
    const w = wanted.get(d.name)!;
    const given = [...(w.explicit ?? []), ...w.named];
    const params = given.length ? [...new Set(given)].sort((a, b) => a - b) : d.params;
    return params ? { name: d.name, params } : { name: d.name };
  });
}

/** The printed name of parameter `p` of measure `name`. */
function printedName(name: string, p: number | undefined): string {
  if (p === undefined) return name;
  return name === "iprec_at_recall" ? `${name}_${p.toFixed(2)}` : `${name}_${p}`;
}

/** Options of {@link trecEval}. */
export interface TrecEvalOptions {
  /** trec_eval -c: average over every judged query; a query without results is scored as trec_eval scores it. */
  complete?: boolean;
}

/** One measure's value as trec_eval prints it. */
export interface MeasureValue {
  measure: string;
  kind: "double" | "long" | "runid";
  value: number | string;
}

/** What {@link trecEval} computed: per-query values, the summary, and per-query columns for comparisons. */
export interface TrecEvalResult {
  /** Per query (in trec_eval's order), the values -q prints. */
  perQuery: { qid: string; values: MeasureValue[] }[];
  /** The summary ("all") lines. */
  summary: MeasureValue[];
  /** Per-query values of every double measure by printed name, in query order (for `compare`). */
  columns: { qids: string[]; values: Record<string, Float64Array> };
}

/** Evaluates a run against qrels as trec_eval 10.0 does with `-m` for each requested measure. */
export function trecEval(qrels: Qrels, run: TrecRun, measures: readonly MeasureRequest[], options: TrecEvalOptions = {}): TrecEvalResult {
  const defs = measures.map((m) => ({ def: MEASURES.find((d) => d.name === m.name)!, params: m.params ?? [] }));
  const names = defs.map(({ def, params }) => (def.params ? params.map((p) => printedName(def.name, p)) : [def.name]));
  const sums = defs.map(({ params, def }) => new Array<number>(def.params ? params.length : 1).fill(0));
  const perQuery: TrecEvalResult["perQuery"] = [];
  const qids: string[] = [];
  const columnValues: number[][][] = defs.map(({ params, def }) => (def.params ? params : [0]).map(() => []));
  let evaluated = 0;
  for (const [qid, judgments] of qrels) {
    let entries = run.queries.get(qid);
    const bogus = !entries;
    if (!entries) {
      if (!options.complete) throw new Error(`query ${qid} is judged in the qrels but has no results in the run (trec_eval 10.0 stops here; -c scores it as an empty ranking)`);
      // what trec_eval -c evaluates for a missing query: one unjudged document, num_ret then set to 0
      entries = [BOGUS];
    }
    const r = formResRels(qid, judgments, entries);
    const values: MeasureValue[] = [];
    defs.forEach(({ def, params }, k) => {
      const v = bogus && def.name === "num_ret" ? [0] : def.calc(r, params);
      v.forEach((value, j) => {
        sums[k][j] += value;
        if (def.kind === "double") {
          values.push({ measure: names[k][j], kind: "double", value });
          columnValues[k][j].push(value);
        } else if (def.kind === "long") values.push({ measure: names[k][j], kind: "long", value });
      });
    });
    perQuery.push({ qid, values });
    qids.push(qid);
    evaluated++;
  }
  if (evaluated === 0) throw new Error("no queries with both results and relevance information (trec_eval stops here)");
  const numQueries = options.complete ? qrels.size : evaluated;
  const summary: MeasureValue[] = [];
  defs.forEach(({ def }, k) => {
    sums[k].forEach((s, j) => {
      const measure = names[k][j];
      switch (def.kind) {
        case "runid":
          summary.push({ measure, kind: "runid", value: run.tag });
          break;
        case "num_q":
          summary.push({ measure, kind: "long", value: numQueries });
          break;
        case "long":
          if (def.name === "num_rel" && options.complete) {
            let n = 0;
            for (const js of qrels.values()) for (const x of js) if (x.rel > 0) n++;
            summary.push({ measure, kind: "long", value: n });
          } else summary.push({ measure, kind: "long", value: s });
          break;
        case "gm":
          summary.push({ measure, kind: "double", value: Math.exp(s / numQueries) });
          break;
        default:
          summary.push({ measure, kind: "double", value: s / numQueries });
      }
    });
  });
  const values: Record<string, Float64Array> = {};
  defs.forEach(({ def }, k) => {
    if (def.kind === "double") names[k].forEach((n, j) => (values[n] = Float64Array.from(columnValues[k][j])));
  });
  return { perQuery, summary, columns: { qids, values } };
}

/** C's printf("%6.4f"): the exact decimal value rounded half to even (JS's toFixed rounds exact halves up). */
export function fixed4(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  let out = x.toFixed(4);
  const exact = Math.abs(x).toFixed(60); // exact for the doubles printed here (their expansions end sooner)
  const dot = exact.indexOf(".");
  if (/^50*$/u.test(exact.slice(dot + 5))) {
    const down = exact.slice(0, dot + 5);
    if (Number(down[down.length - 1]) % 2 === 0) out = (x < 0 ? "-" : "") + down;
  }
  return out.padStart(6);
}

function line(measure: string, qid: string, v: MeasureValue): string {
  const value = v.kind === "runid" ? String(v.value) : v.kind === "long" ? String(v.value) : fixed4(v.value as number);
  return `${measure.padEnd(22)}\t${qid}\t${value}`;
}

/** trec_eval's output: per-query lines first when `perQuery` (-q), then the "all" lines. */
export function formatTrecEval(result: TrecEvalResult, perQuery = false): string {
  const out: string[] = [];
  if (perQuery) for (const q of result.perQuery) for (const v of q.values) out.push(line(v.measure, q.qid, v));
  for (const v of result.summary) out.push(line(v.measure, "all", v));
  return `${out.join("\n")}\n`;
}
