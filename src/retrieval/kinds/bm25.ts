// The BM25 kind (Lucene-exact BM25, ../bm25/): passage level by default, built from units on every core
// (from a unit table the workers read the texts from its store themselves), resumable.

import { formatCount, formatCount as fmt, type ProgressEvent } from "../../util/progress.js";
import type { IndexKind } from "./kind.js";
import { FORMAT_VERSION as BM25_FORMAT_VERSION } from "../bm25/format.js";

export const bm25Kind: IndexKind = {
  name: "bm25",
  version: BM25_FORMAT_VERSION,
  defaultUnit: "passage",
  resumes: true,
  stripMarkers: true,
  async build(b) {
    const { buildBm25Index } = await import("../bm25/build.js");
    const { TableUnitStore } = await import("../units/table.js");
    const table = b.table !== undefined ? TableUnitStore.open(b.table) : null;
    const report = b.onProgress ?? (() => {});
    const bar: ProgressEvent = { label: "index bm25", unit: `${b.unit} units`, ...(table ? { totalItems: table.count } : {}), items: 0 };
    const status = (text: () => string, done = false): void => report({ label: "index bm25", status: text, done });
    let merging = false;
    try {
      const input = table ? table.scan(0, table.count, false) : b.units();
      const s = await buildBm25Index(input, b.dir, { ...b.params, unit: b.unit, source: b.source }, undefined, {
        memory: b.memory,
        threads: b.threads,
        ownDir: true,
        ...(table ? { textsFrom: b.table } : {}),
        onProgress: (p) => {
          if (p.phase === "analyse") report({ ...bar, items: p.units, bytes: p.bytes });
          else {
            if (!merging) report({ ...bar, done: true });
            merging = true;
            status(() => `merging segments: ${formatCount(p.terms ?? 0)} terms`);
          }
        },
      });
      if (!merging) report({ ...bar, done: true });
      return { units: s.units, detail: `${fmt(s.terms)} terms, ${fmt(s.postings)} postings, ${fmt(s.segments)} segments${s.resumedUnits > 0 ? `, resumed after ${fmt(s.resumedUnits)} units` : ""}` };
    } finally {
      table?.close();
      status(() => "", true);
    }
  },
  async open(dir, manifest) {
    // A live index (updated at least once: ../bm25/live/) opens the commit its manifest names.
    if (manifest.params.live !== undefined) return (await import("../bm25/live/search.js")).LiveBm25Retriever.open(dir, manifest);
    const { Bm25Retriever } = await import("../bm25/search.js");
    return new Bm25Retriever(dir, manifest);
  },
  async verify(dir) {
    const problems = (await import("../bm25/live/verify.js")).verifyLive(dir);
    if (problems.length > 0) throw new Error(problems.join("\n"));
  },
};
