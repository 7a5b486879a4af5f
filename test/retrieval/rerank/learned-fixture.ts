// A learned reranker model for the reranker contract (./cases.ts): fixed weights over the features a
// passage of plain title and text gives (no first-stage score, no paragraph), written to a temporary
// file. Its quality is measured by ./learned.test.ts; the contract only needs a valid model file.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Writes the model and returns its path. */
export function writeLearnedFixture(): string {
  const file = join(mkdtempSync(join(tmpdir(), "tartan-learned-")), "model.json");
  const features = ["rank", "title_match", "overlap", "idf_overlap", "bigrams", "entity_overlap", "page_rank", "length"];
  const model = { format: "tartan-learned-reranker", version: 1, objective: "pairwise-logistic", features, mean: features.map(() => 0), scale: features.map(() => 1), weights: [0.5, 0.2, 1, 2, 1.5, 0.7, 0.3, -0.1] };
  writeFileSync(file, JSON.stringify(model));
  return file;
}
