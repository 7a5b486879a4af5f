// The features of the learned reranker (./learned.ts): numbers computed for each passage of a rerank item
// from what tartan already has at that point — the query, each passage's title and text, its place in the
// first stage's list, the first stage's score, its page and paragraph — with no model and no index. Terms are
// Lucene's EnglishAnalyzer terms (stop words dropped, Porter stems: ../bm25/analyzer.ts). Each feature is
// defined exactly in docs/retrieval.md ("The learned reranker"); `needs` names what a passage must carry
// for it (a first-stage `score`, a `paragraph` number), and computing a feature a passage cannot give
// throws naming the feature, the passage and the query.

import { englishAnalyzer } from "../bm25/analyzer.js";
import { standardTokens } from "../bm25/word-break.js";
import { ENT_END, ENT_START } from "../markers.js";
import type { RerankItem, RerankPassage } from "./reranker.js";

/** What a feature needs a passage to carry besides its title and text. */
export type FeatureNeed = "score" | "paragraph";

/** One feature: its name (as model files list it), what it needs, and a one-line definition. */
export interface FeatureDefinition {
  readonly name: string;
  readonly needs: readonly FeatureNeed[];
  readonly summary: string;
}

/** Every feature, in the order a model trained with the default set lists them. */
export const FEATURES: readonly FeatureDefinition[] = [
  { name: "rank", needs: [], summary: "1/r, r the passage's first-stage rank (1 = first)" },
  { name: "score", needs: ["score"], summary: "first-stage score min-max normalised over the item's passages (1 when all are equal)" },
  { name: "score_gap", needs: ["score"], summary: "first-stage score minus the item's best first-stage score (≤ 0)" },
  { name: "title_match", needs: [], summary: "share of the query's distinct terms found among the title's terms" },
  { name: "title_covered", needs: [], summary: "1 when every term of the title is a query term (and the title has one), else 0" },
  { name: "overlap", needs: [], summary: "share of the query's distinct terms found among the passage text's terms" },
  { name: "idf_overlap", needs: [], summary: "the same share weighted by ln(1 + n/(1 + df)), df = passages of the item whose text holds the term" },
  { name: "bigrams", needs: [], summary: "share of the query's distinct adjacent term pairs found adjacent in the passage text (0 under two terms)" },
  { name: "entity_overlap", needs: [], summary: "share of the query's entity mentions whose terms all occur in the title or text (0 with none)" },
  { name: "position", needs: ["paragraph"], summary: "1/p, p the passage's first paragraph id (KILT's paragraph 0 is the title: p = max(1, id))" },
  { name: "page_hits", needs: [], summary: "other passages of the same page in the item, divided by n − 1 (0 when n = 1)" },
  { name: "page_first", needs: [], summary: "1 when no passage of the same page ranks above it, else 0" },
  { name: "page_rank", needs: [], summary: "1/r, r the rank of the passage's page among the item's pages in order of first appearance" },
  { name: "length", needs: [], summary: "ln(1 + number of terms in the passage text)" },
];

/** The feature names, in {@link FEATURES}' order. */
export const FEATURE_NAMES: readonly string[] = FEATURES.map((f) => f.name);

const BY_NAME = new Map(FEATURES.map((f) => [f.name, f]));

/** The definition of feature `name`; throws naming the known ones. */
export function featureDefinition(name: string, where = "feature"): FeatureDefinition {
  const f = BY_NAME.get(name);
  if (f === undefined) throw new Error(`${where}: unknown feature ${JSON.stringify(name)} (known: ${FEATURE_NAMES.join(", ")})`);
  return f;
}

/** The query's entity mentions: the spans between KILT's markers when it has them, else runs of capitalised tokens not at its start. */
export function queryEntities(query: string): string[] {
  const out: string[] = [];
  if (query.includes(ENT_START)) {
    let from = 0;
    for (;;) {
      const s = query.indexOf(ENT_START, from);
      if (s < 0) break;
      const e = query.indexOf(ENT_END, s + ENT_START.length);
      if (e < 0) break;
      const m = query.slice(s + ENT_START.length, e).trim();
      if (m !== "") out.push(m);
      from = e + ENT_END.length;
    }
    return out;
  }
  const tokens: string[] = [];
  standardTokens(query, (start, end) => void tokens.push(query.slice(start, end)));
  let run: string[] = [];
  const flush = () => {
    if (run.length > 0) out.push(run.join(" "));
    run = [];
  };
  tokens.forEach((t, i) => {
    const capital = i > 0 && /^\p{Lu}/u.test(t);
    if (capital) run.push(t);
    else flush();
  });
  flush();
  return out;
}

function distinct<T>(xs: readonly T[]): T[] {
  return [...new Set(xs)];
}

function bigramsOf(terms: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 1 < terms.length; i++) out.add(`${terms[i]} ${terms[i + 1]}`);
  return out;
}

function share(wanted: readonly string[], have: ReadonlySet<string>): number {
  if (wanted.length === 0) return 0;
  let n = 0;
  for (const t of wanted) if (have.has(t)) n++;
  return n / wanted.length;
}

/** Why a passage cannot give a feature, naming the feature, the passage and the query. */
function missing(feature: string, need: FeatureNeed, index: number, query: string): Error {
  const what = need === "score" ? "a first-stage score" : "a paragraph id (paragraph or passage units)";
  return new Error(`feature ${feature} needs ${what}, and passage ${index + 1} of the query ${JSON.stringify(query.slice(0, 80))} has none`);
}

/**
 * The feature vectors of one item's passages: row i holds passage i's values of `names`, in that order.
 * Throws naming the feature and the passage when a passage lacks what a feature needs.
 */
export function computeFeatures(item: RerankItem, names: readonly string[]): number[][] {
  const defs = names.map((n) => featureDefinition(n));
  const ps: readonly RerankPassage[] = item.passages;
  const n = ps.length;
  if (n === 0) return [];
  for (const d of defs)
    for (const need of d.needs)
      ps.forEach((p, i) => {
        const v = need === "score" ? p.score : p.paragraph;
        if (typeof v !== "number" || !Number.isFinite(v)) throw missing(d.name, need, i, item.query);
      });
  const want = new Set(names);
  const queryTerms = englishAnalyzer.analyze(item.query.split(ENT_START).join(" ").split(ENT_END).join(" "));
  const q = distinct(queryTerms);
  const qSet = new Set(q);
  const qBigrams = [...bigramsOf(queryTerms)];
  const texts = ps.map((p) => englishAnalyzer.analyze(p.text));
  const textSets = texts.map((t) => new Set(t));
  const titles = ps.map((p) => new Set(englishAnalyzer.analyze(p.title)));
  // idf over the item: df = passages whose text holds the term
  const weight = new Map<string, number>();
  if (want.has("idf_overlap"))
    for (const t of q) {
      let df = 0;
      for (const s of textSets) if (s.has(t)) df++;
      weight.set(t, Math.log(1 + n / (1 + df)));
    }
  const entities = want.has("entity_overlap") ? queryEntities(item.query).map((e) => distinct(englishAnalyzer.analyze(e))).filter((e) => e.length > 0) : [];
  // scores
  let min = Infinity;
  let max = -Infinity;
  if (want.has("score") || want.has("score_gap"))
    for (const p of ps) {
      min = Math.min(min, p.score!);
      max = Math.max(max, p.score!);
    }
  // pages: the passage's page id, or its title
  const pageOf = ps.map((p) => p.page ?? p.title);
  const pageCount = new Map<string, number>();
  const pageOrder = new Map<string, number>();
  for (const g of pageOf) {
    pageCount.set(g, (pageCount.get(g) ?? 0) + 1);
    if (!pageOrder.has(g)) pageOrder.set(g, pageOrder.size + 1);
  }
  const seen = new Set<string>();
  return ps.map((p, i) => {
    const first = !seen.has(pageOf[i]);
    seen.add(pageOf[i]);
    return names.map((name) => {
      switch (name) {
        case "rank":
          return 1 / (i + 1);
        case "score":
          return max > min ? (p.score! - min) / (max - min) : 1;
        case "score_gap":
          return p.score! - max;
        case "title_match":
          return share(q, titles[i]);
        case "title_covered": {
          if (titles[i].size === 0) return 0;
          for (const t of titles[i]) if (!qSet.has(t)) return 0;
          return 1;
        }
        case "overlap":
          return share(q, textSets[i]);
        case "idf_overlap": {
          let all = 0;
          let got = 0;
          for (const t of q) {
            const w = weight.get(t)!;
            all += w;
            if (textSets[i].has(t)) got += w;
          }
          return all > 0 ? got / all : 0;
        }
        case "bigrams":
          return share(qBigrams, bigramsOf(texts[i]));
        case "entity_overlap": {
          if (entities.length === 0) return 0;
          let found = 0;
          for (const e of entities) if (e.every((t) => textSets[i].has(t) || titles[i].has(t))) found++;
          return found / entities.length;
        }
        case "position":
          return 1 / Math.max(1, p.paragraph!);
        case "page_hits":
          return n === 1 ? 0 : (pageCount.get(pageOf[i])! - 1) / (n - 1);
        case "page_first":
          return first ? 1 : 0;
        case "page_rank":
          return 1 / pageOrder.get(pageOf[i])!;
        case "length":
          return Math.log(1 + texts[i].length);
        default:
          throw new Error(`feature ${name}: no computation`);
      }
    });
  });
}
