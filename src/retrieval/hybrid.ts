// Fusion of any retrievers, each member searched `depth` deep: reciprocal rank (Cormack et al. 2009),
// score(u) = Σ_r w_r / (k0 + rank_r(u)) with ranks from 1 (weights default 1), or one of the score fusions
// of ./fusion.ts (weighted sum, CombSUM, CombMNZ, CombMAX, CombANZ over normalised scores). Members over
// the same units fuse unit by unit. Page-level members (TF-IDF pages, entity) can also join members over
// passages or paragraphs of the same pages: a page's contribution (1 / (k0 + r) at rank r, or its
// normalised score) then goes to each retrieved unit of that page.

import type { Hit, IndexManifest, Retriever } from "./types.js";
import type { QueryInput, SearchOptions } from "./query.js";
import { TARTAN_VERSION } from "./manifest.js";
import type { Unit, UnitSource } from "./units/unit.js";
import { topK } from "./tfidf/topk.js";
import { combine, memberScores, resolveFusion, type FusionMethod, type FusionNorm, type ResolvedFusion } from "./fusion.js";

/** Options of fusion: reciprocal rank by default. */
export interface HybridOptions {
  /** RRF constant; default 60. */
  k0?: number;
  /** How many hits to take from each member; default max(k, 100). */
  depth?: number;
  /** The fusion method; default rrf. */
  method?: FusionMethod;
  /** Each member's scores normalised first (score fusions); default min-max, none with `alpha`. */
  norm?: FusionNorm;
  /** One weight per member (rrf and wsum); default all 1. */
  weights?: readonly number[];
  /** Pyserini's two-member form of wsum: α·s₁ + s₂, a missing score being that member's lowest. */
  alpha?: number;
}

/** RRF's constant k by default (Cormack et al. 2009). */
export const DEFAULT_RRF_K = 60;

/** What identifies a unit: its page and paragraph span, and its characters where both units have them. */
function unitDifference(a: Unit, b: Unit): string | null {
  const show = (u: Unit) => `${u.wikipedia_id} ¶${String(u.start_paragraph_id)}–${String(u.end_paragraph_id)}${u.start_character !== undefined ? ` chars ${u.start_character}–${String(u.end_character)}` : ""}`;
  if (a.wikipedia_id !== b.wikipedia_id || a.start_paragraph_id !== b.start_paragraph_id || a.end_paragraph_id !== b.end_paragraph_id) return `${show(a)} against ${show(b)}`;
  const chars = (u: Unit) => u.start_character !== undefined && u.end_character !== undefined;
  if (chars(a) && chars(b) && (a.start_character !== b.start_character || a.end_character !== b.end_character)) return `${show(a)} against ${show(b)}`;
  return null;
}

/**
 * Throws unless `b` holds the same units as `a`: the same count, and for a sample spread over the store the
 * same page and paragraph span (and characters where both have them; titles and texts may be missing, as
 * in a dense index built from `--ids`). The message names the first difference.
 */
export function checkSameUnits(a: UnitSource, b: UnitSource, nameA = "first index", nameB = "other index"): void {
  if (a.count !== b.count) throw new Error(`hybrid: ${nameA} has ${a.count} units, ${nameB} ${b.count}: fusion needs the same units in the same order (build both from the same source with the same --unit)`);
  const n = a.count;
  const sample = new Set<number>();
  for (let i = 0; i < 16 && n > 0; i++) sample.add(Math.floor((i * (n - 1)) / 15));
  for (const i of sample) {
    const d = unitDifference(a.get(i), b.get(i));
    if (d !== null) throw new Error(`hybrid: unit ${i} differs between ${nameA} and ${nameB} (${d}): fusion needs the same units in the same order`);
  }
}

/** True when a store holds whole pages (units without a paragraph span). */
export function isPageStore(units: UnitSource): boolean {
  return units.count === 0 || units.get(0).start_paragraph_id === undefined;
}

/**
 * Throws unless the page-level store `pages` was built from the same pages as `units`: the pages of the
 * first and last units must be among the first and last 8 pages (stores keep page order; a page without
 * text has no finer unit). Cheap whatever the sizes.
 */
export function checkSamePages(units: UnitSource, pages: UnitSource, nameUnits = "first index", namePages = "page index"): void {
  if (units.count === 0 || pages.count === 0) return;
  const near = (id: string, from: number) => {
    for (let j = Math.max(0, from); j < Math.min(pages.count, from + 8); j++) if (pages.get(j).wikipedia_id === id) return true;
    return false;
  };
  const first = units.get(0).wikipedia_id;
  const last = units.get(units.count - 1).wikipedia_id;
  if (!near(first, 0) || !near(last, pages.count - 8))
    throw new Error(`hybrid: the units of ${nameUnits} and the pages of ${namePages} do not come from the same pages: build them from the same source`);
}

/** Several retrievers fused (by reciprocal rank unless told otherwise); members over finer units vote for their pages when the others are page level. */
export class HybridRetriever implements Retriever {
  readonly kind = "hybrid" as const;
  readonly units: UnitSource;
  readonly k0: number;
  readonly depth?: number;
  /** The fusion method, normalisation and weights, resolved for the members. */
  readonly fusion: ResolvedFusion;
  /** The fusion described as a manifest: the first fine member's unit and count, the members' manifests in `params.members`. */
  readonly manifest: IndexManifest;
  /** Per member: true when it retrieves pages for members over finer units (its hits vote for pages). */
  private readonly pageVoter: boolean[];

  constructor(
    readonly members: readonly Retriever[],
    options: HybridOptions = {},
    names: readonly string[] = members.map((m, i) => `index ${i + 1} (${m.kind})`),
  ) {
    if (members.length === 0) throw new Error("hybrid: no retrievers to fuse");
    this.k0 = options.k0 ?? DEFAULT_RRF_K;
    if (!(this.k0 >= 0)) throw new Error(`hybrid: k0 must be ≥ 0, got ${this.k0}`);
    this.depth = options.depth;
    this.fusion = resolveFusion({ method: options.method ?? "rrf", norm: options.norm, weights: options.weights, alpha: options.alpha, k0: this.k0 }, members.length);
    const pageLevel = members.map((m) => isPageStore(m.units));
    const fine = pageLevel.indexOf(false);
    // All members over pages, or all over finer units: one unit space. Mixed: the finer units are the
    // hybrid's, and the page-level members vote for pages.
    this.pageVoter = members.map((_, i) => fine >= 0 && pageLevel[i]);
    const first = fine >= 0 ? fine : 0;
    this.units = members[first].units;
    for (let i = 0; i < members.length; i++) {
      if (i === first) continue;
      if (this.pageVoter[i]) checkSamePages(this.units, members[i].units, names[first], names[i]);
      else checkSameUnits(this.units, members[i].units, names[first], names[i]);
    }
    // (A retriever written in JavaScript may come without a manifest: its unit is then told by its store.)
    const lead = members[first].manifest as IndexManifest | undefined;
    this.manifest = {
      kind: "hybrid",
      unit: lead?.unit ?? (pageLevel[first] ? "page" : "passage"),
      units: this.units.count,
      params: this.describe(options, members),
      source: lead?.source ?? "",
      created: new Date().toISOString(),
      tartanVersion: TARTAN_VERSION,
      formatVersion: 0,
    };
  }

  /** The manifest's parameters: RRF's as before (k0, depth, weights when given), a score fusion's method, normalisation and weights. */
  private describe(o: HybridOptions, members: readonly Retriever[]): Record<string, unknown> {
    const f = this.fusion;
    const list = members.map((m) => m.manifest);
    if (f.method === "rrf") return { k0: this.k0, depth: this.depth ?? null, ...(o.weights ? { weights: f.weights } : {}), members: list };
    return { fusion: f.method, norm: f.norm, weights: f.weights, ...(o.alpha !== undefined ? { alpha: o.alpha } : {}), depth: this.depth ?? null, members: list };
  }

  private depthFor(k: number): number {
    return this.depth ?? Math.max(k, 100);
  }

  /** Fuses one query's member rankings (in member order). */
  fuse(rankings: readonly Hit[][], k: number): Hit[] {
    if (this.fusion.method !== "rrf") return this.fuseScores(rankings, k);
    const w = this.fusion.weights;
    const scores = new Map<number, number>();
    const pages = new Map<string, number>();
    rankings.forEach((hits, m) => {
      if (this.pageVoter[m]) {
        const store = this.members[m].units;
        hits.forEach((h, r) => {
          const id = store.get(h.unit).wikipedia_id;
          pages.set(id, (pages.get(id) ?? 0) + w[m] / (this.k0 + r + 1));
        });
      } else hits.forEach((h, r) => scores.set(h.unit, (scores.get(h.unit) ?? 0) + w[m] / (this.k0 + r + 1)));
    });
    if (pages.size > 0) for (const [u, score] of scores) scores.set(u, score + (pages.get(this.units.get(u).wikipedia_id) ?? 0));
    const units = [...scores.keys()];
    return topK(units, units.length, (u) => scores.get(u)!, k);
  }

  /** A score fusion (./fusion.ts) of one query's member rankings: candidates are the fine members' units; a page member scores a unit by its page. */
  private fuseScores(rankings: readonly Hit[][], k: number): Hit[] {
    const per = rankings.map((hits, m) => {
      const store = this.members[m].units;
      const keys: (number | string)[] = this.pageVoter[m] ? hits.map((h) => store.get(h.unit).wikipedia_id) : hits.map((h) => h.unit);
      return memberScores(keys, hits.map((h) => h.score), m, this.fusion);
    });
    const mins = per.map((p) => p.min);
    const scores = new Map<number, number>();
    const voters = this.pageVoter.some((v) => v);
    rankings.forEach((hits, m) => {
      if (this.pageVoter[m]) return;
      for (const h of hits) {
        if (scores.has(h.unit)) continue;
        const page = voters ? this.units.get(h.unit).wikipedia_id : "";
        scores.set(h.unit, combine(per.map((p, j) => p.byKey.get(this.pageVoter[j] ? page : h.unit)), mins, this.fusion));
      }
    });
    const units = [...scores.keys()];
    return topK(units, units.length, (u) => scores.get(u)!, k);
  }

  /** Each member searches the query (text members its text, dense members its vector when it has one) with the call's options. */
  async search(query: QueryInput, k: number, options?: SearchOptions): Promise<Hit[]> {
    const depth = this.depthFor(k);
    const rankings: Hit[][] = [];
    for (const m of this.members) rankings.push(await m.search(query, depth, options));
    return this.fuse(rankings, k);
  }

  async searchBatch(queries: readonly QueryInput[], k: number, options?: SearchOptions): Promise<Hit[][]> {
    const depth = this.depthFor(k);
    const per: Hit[][][] = [];
    for (const m of this.members) {
      if (m.searchBatch) per.push(await m.searchBatch(queries, depth, options));
      else {
        const out: Hit[][] = [];
        for (const q of queries) out.push(await m.search(q, depth, options));
        per.push(out);
      }
    }
    return queries.map((_, i) => this.fuse(per.map((p) => p[i]), k));
  }

  /** Closes every member. */
  async close(): Promise<void> {
    for (const m of this.members) await m.close();
  }
}
