// Shared test data for the reader tests: SQuAD v1.1 dev as KILT pages and records, the article split,
// and one small span ranker trained (seeded) on a fixed subset of the training-half articles.

import { ArticlePassages, loadSquad, splitByArticle, type SquadData } from "../../src/readers/extractive/squad-data.js";
import { trainReader, type TrainStats } from "../../src/readers/extractive/train.js";
import type { SpanModel } from "../../src/readers/extractive/model.js";
import type { KiltRecord } from "../../src/records/types.js";

export const SQUAD_FILE = "../shared/data/squad/dev-v1.1.reconstructed.json";
export const SAMPLES = "../shared/data/kilt-samples";
export const KILT_DEV = "../shared/data/kilt-dev";

let data: SquadData | undefined;
export function squad(): SquadData {
  data ??= loadSquad(SQUAD_FILE);
  return data;
}

/** Every `step`-th record (from the first), at most `n`. */
export function every<T>(items: readonly T[], step: number, n: number): T[] {
  return items.filter((_, i) => i % step === 0).slice(0, n);
}

export function split(): { train: KiltRecord[]; test: KiltRecord[]; half: number } {
  const d = squad();
  return splitByArticle(d.records, d.articles);
}

let small: { model: SpanModel; stats: TrainStats } | undefined;
/** The small test model: every 12th training-half record (440), 5 passages each, seed 7, 6 epochs. */
export function smallModel(): { model: SpanModel; stats: TrainStats } {
  if (small) return small;
  const passages = new ArticlePassages(squad().pages, 5);
  const items = every(split().train, 12, 440).map((record) => ({ record, passages: passages.for(record) }));
  small = trainReader(items, { seed: 7, epochs: 6 });
  return small;
}
