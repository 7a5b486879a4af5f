// The dense kind (encoded units, exact or HNSW search, ../dense/): passage level by default; its search
// encodes a batch and spreads it over every core itself, so `tartan retrieve` gives it one thread. Build
// and open delegate to ../dense/index.ts (buildDenseIndex, openDense).

import { Progress, ProgressLine, formatCount } from "../../util/progress.js";
import type { IndexKind } from "./kind.js";

export const denseKind: IndexKind = {
  name: "dense",
  defaultUnit: "passage",
  resumes: false,
  stripMarkers: true,
  searchThreads: 1,
  async build(b) {
    const { buildDenseIndex } = await import("../dense/index.js");
    type DenseBuildParams = import("../dense/index.js").DenseBuildParams;
    // Universal Sentence Encoder lite is the one real encoder that installs offline: the default.
    const dense = { encoder: { type: "use-lite" }, ...b.params, unit: b.unit, source: b.source } as DenseBuildParams;
    // On a terminal, count the units first (cheap next to encoding them) so the line has an ETA.
    let total: number | undefined;
    if (process.stderr.isTTY) {
      total = 0;
      for await (const _ of b.units()) total++;
    }
    const bar = new Progress({ label: "index dense: encoding", unit: `${b.unit} units`, totalItems: total, countItems: true });
    const progress = new ProgressLine("index dense");
    let encoded = false;
    try {
      const m = await buildDenseIndex(b.units(), b.dir, dense, (p) => {
        if (p.phase === "encode") bar.update(p.done);
        else {
          if (!encoded) bar.done();
          encoded = true;
          progress.update(() => `HNSW graph: ${formatCount(p.done)} vectors added`);
        }
      });
      if (!encoded) bar.done();
      return { units: m.units, detail: `${String((m.params as { dim?: number }).dim ?? "?")}-d ${dense.encoder.type} vectors` };
    } finally {
      progress.done();
    }
  },
  async open(dir) {
    return (await import("../dense/index.js")).openDense(dir);
  },
};
