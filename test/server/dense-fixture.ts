// A dense index built from precomputed vectors over a BM25 index's paragraphs (`tartan index build
// --kind dense --vectors --ids`, the built CLI): it names no encoder, so it answers query vectors but
// refuses text. Vectors are a fixed function of the row (8 dimensions), ids the BM25 index's own units.

import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { UnitStore } from "../../src/retrieval/units/store.js";
import { npyBytes } from "../retrieval/dense/npy.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
/** The vectors' size. */
export const DENSE_DIM = 8;

/** Builds the index at `out` from the units of the BM25 index `bm25` (files beside it in `work`). */
export function denseWithoutEncoder(bm25: string, work: string, out: string): void {
  const units = UnitStore.open(bm25);
  const ids: string[] = [];
  for (let i = 0; i < units.count; i++) {
    const u = units.get(i);
    ids.push(`${u.wikipedia_id}\t${u.start_paragraph_id}\t${u.end_paragraph_id}`);
  }
  units.close();
  writeFileSync(join(work, "ids.txt"), `${ids.join("\n")}\n`);
  const vectors = Float32Array.from({ length: ids.length * DENSE_DIM }, (_, i) => Math.sin(i * 0.7) + (i % DENSE_DIM === 0 ? 1 : 0));
  writeFileSync(join(work, "passages.npy"), npyBytes(ids.length, DENSE_DIM, vectors));
  const b = spawnSync(process.execPath, [CLI, "index", "build", "--kind", "dense", "--vectors", join(work, "passages.npy"), "--ids", join(work, "ids.txt"), "--unit", "paragraph", "--out", out], { encoding: "utf8" });
  if (b.status !== 0) throw new Error(`index build: ${b.stderr}`);
}
