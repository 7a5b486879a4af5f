// A recorded run's records for the run browser: the gold file and the predictions the run was scored
// from (paths as recorded in the runs database, never from a request), joined by id in the order of
// the run's per-query scores, searchable by text (input, id, answers), with each record's scores, whether its answer is right, whether its
// gold evidence was retrieved, and the retrieved passages marked where they hold gold evidence (same page, overlapping paragraphs).
// Loaded once per run and kept (a few runs at a time).

import { existsSync, statSync } from "node:fs";
import { readJsonlAll } from "../records/jsonl.js";
import type { KiltRecord, Provenance } from "../records/types.js";
import type { RunInfo, RunsStore } from "../runs/types.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import { provenanceText } from "../knowledge/span.js";
import { defaultMetrics } from "../compare/load.js";
import { ApiError } from "./errors.js";
import { FILTERS, type Passage, type RecordFilter, type RunRecordView } from "./api-types.js";

export { FILTERS, type Passage, type RecordFilter, type RunRecordView };

/** Passages shown per record (retrieved lists can hold 100). */
const MAX_PASSAGES = 20;
/** Characters of passage text shown (whole paragraphs, so a gold answer late in one can be marked). */
const MAX_TEXT = 2000;

/** A run loaded for the run browser: its records joined by id, per-query scores, and the records of each filter. */
export interface LoadedRun {
  info: RunInfo;
  metrics: string[];
  ids: string[];
  scores: Record<string, Float64Array>;
  gold: Map<string, KiltRecord>;
  guess: Map<string, KiltRecord>;
  /** Record numbers per filter. */
  byFilter: Record<RecordFilter, number[]>;
  warnings: string[];
}

/** The metrics a run browser shows for a run: the KILT papers' columns for its dataset. */
export function runMetrics(info: RunInfo): string[] {
  return defaultMetrics(Object.keys(info.summary), info.dataset ?? undefined, info.gold.path);
}

async function readRecords(path: string, what: string, warnings: string[], recorded: { bytes: number }): Promise<Map<string, KiltRecord>> {
  if (!existsSync(path)) {
    // No local path in an answer: the warning names the kind of file only.
    warnings.push(`the ${what} file recorded with this run is gone; records show scores only`);
    return new Map();
  }
  if (statSync(path).size !== recorded.bytes) warnings.push(`the ${what} file changed since the run was recorded`);
  const map = new Map<string, KiltRecord>();
  for (const r of await readJsonlAll<KiltRecord>(path)) if (r && r.id !== undefined && r.id !== null) map.set(String(r.id), r);
  return map;
}

/** Same page, and (where both give paragraphs) overlapping paragraph ranges: the passage holds gold evidence. */
export function overlaps(x: Provenance, y: Provenance): boolean {
  if (String(x.wikipedia_id) !== String(y.wikipedia_id)) return false;
  if (x.start_paragraph_id === undefined || y.start_paragraph_id === undefined) return true;
  const [xs, xe] = [Number(x.start_paragraph_id), Number(x.end_paragraph_id ?? x.start_paragraph_id)];
  const [ys, ye] = [Number(y.start_paragraph_id), Number(y.end_paragraph_id ?? y.start_paragraph_id)];
  return xs <= ye && ys <= xe;
}

/** The run browser's view of the runs database (loaded runs cached). */
export class RunRecords {
  private readonly cache = new Map<string, Promise<LoadedRun>>();

  constructor(
    private readonly store: RunsStore,
    private readonly ks: KnowledgeSourceReader | null,
    private readonly keep = 4,
  ) {}

  /** The run's entry in the runs database; a 404 `ApiError` when there is none of that name. */
  async info(name: string): Promise<RunInfo> {
    const info = await this.store.get(name);
    if (!info) throw new ApiError(404, `no run called ${JSON.stringify(name.slice(0, 100))}`);
    return info;
  }

  /** The run's records, scores and filters (loaded on first use). */
  async load(name: string): Promise<LoadedRun> {
    const info = await this.info(name);
    const key = `${info.name}\u0000${info.created}`;
    let p = this.cache.get(key);
    if (!p) {
      p = this.read(info);
      this.cache.set(key, p);
      p.catch(() => this.cache.delete(key));
      while (this.cache.size > this.keep) this.cache.delete(this.cache.keys().next().value as string);
    }
    return p;
  }

  private async read(info: RunInfo): Promise<LoadedRun> {
    const scores = await this.store.scores(info.name);
    const warnings: string[] = [];
    const gold = await readRecords(info.gold.path, "gold", warnings, info.gold);
    const guess = await readRecords(info.guess.path, "prediction", warnings, info.guess);
    const answer = ["em", "accuracy"].find((m) => m in scores.metrics);
    const rprec = scores.metrics.Rprec;
    const byFilter: Record<RecordFilter, number[]> = { all: [], right: [], wrong: [], "no-evidence": [] };
    for (let i = 0; i < scores.ids.length; i++) {
      byFilter.all.push(i);
      if (answer) byFilter[scores.metrics[answer][i] === 1 ? "right" : "wrong"].push(i);
      if (rprec && rprec[i] === 0) byFilter["no-evidence"].push(i);
    }
    return { info, metrics: runMetrics(info), ids: scores.ids, scores: scores.metrics, gold, guess, byFilter, warnings };
  }

  /**
   * The record numbers of `chosen` whose input, id, gold answers or predicted answer hold `q` (ignoring
   * case): a search within the run.
   */
  search(run: LoadedRun, chosen: readonly number[], q: string): number[] {
    const needle = q.toLowerCase();
    return chosen.filter((i) => {
      const id = run.ids[i];
      const g = run.gold.get(id);
      const p = run.guess.get(id);
      const texts = [id, g?.input, p?.input, ...(g?.output ?? []).map((o) => o.answer), p?.output?.[0]?.answer];
      return texts.some((t) => typeof t === "string" && t.toLowerCase().includes(needle));
    });
  }

  /** The text of a provenance span from the store (when loaded and the span fits), shortened. */
  private async withText(p: Provenance): Promise<Passage> {
    const out: Passage = { ...p };
    if (typeof out.text !== "string" && this.ks && p.wikipedia_id !== undefined && p.start_paragraph_id !== undefined) {
      const page = await this.ks.getPageById(String(p.wikipedia_id));
      if (page) {
        try {
          out.text = provenanceText(page, p);
        } catch {
          /* a span outside its page: shown without text */
        }
      }
    }
    if (typeof out.text === "string" && out.text.length > MAX_TEXT) out.text = `${out.text.slice(0, MAX_TEXT)}…`;
    return out;
  }

  /** One page of a run's records under a filter. */
  async view(run: LoadedRun, i: number): Promise<RunRecordView> {
    const id = run.ids[i];
    const g = run.gold.get(id);
    const p = run.guess.get(id);
    const goldProv: Provenance[] = [];
    const seen = new Set<string>();
    for (const o of g?.output ?? [])
      for (const x of o.provenance ?? []) {
        const k = JSON.stringify([x.wikipedia_id, x.start_paragraph_id, x.start_character, x.end_paragraph_id, x.end_character]);
        if (!seen.has(k)) (seen.add(k), goldProv.push(x));
      }
    const answers = [...new Set((g?.output ?? []).map((o) => o.answer).filter((a): a is string => typeof a === "string"))];
    const out0 = p?.output?.[0];
    const scores: Record<string, number> = {};
    for (const [m, col] of Object.entries(run.scores)) scores[m] = col[i];
    const answerMetric = ["em", "accuracy"].find((m) => m in run.scores);
    return {
      index: i,
      id,
      input: typeof g?.input === "string" ? g.input : typeof p?.input === "string" ? p.input : "",
      gold: { answers, provenance: await Promise.all(goldProv.slice(0, MAX_PASSAGES).map(async (x) => ({ ...(await this.withText(x)), gold: true }))) },
      prediction: {
        answer: typeof out0?.answer === "string" ? out0.answer : null,
        provenance: await Promise.all((out0?.provenance ?? []).slice(0, MAX_PASSAGES).map(async (x) => ({ ...(await this.withText(x)), gold: goldProv.some((y) => overlaps(x, y)) }))),
      },
      scores,
      right: answerMetric ? run.scores[answerMetric][i] === 1 : null,
      evidence: run.scores.Rprec ? run.scores.Rprec[i] > 0 : null,
    };
  }
}
