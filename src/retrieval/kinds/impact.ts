// The impact kind (learned sparse retrieval, ../impact/): an inverted index of quantized term weights
// (SPLADE, uniCOIL, DeepImpact from a JsonVectorCollection, `--vectors FILE` with `--units TABLE` or
// `--ids FILE`; a BM25 index's scores, `--from-bm25 INDEX`; or a SPLADE encoder run over the units,
// `--encoder DIR` / params.encoder), searched exactly by the BM25 search's MaxScore over the impact
// scorer. Passage level by default, resumable; `verify` decodes every posting.

import { formatCount as fmt, type ProgressEvent } from "../../util/progress.js";
import type { IndexKind, KindBuildInput } from "./kind.js";
import { FORMAT_VERSION } from "../bm25/format.js";
import type { Unit } from "../units/unit.js";

/** The quantization and query analyzer `params` may give (`--scale`, `--bits`, `--params`). */
function impactParams(b: KindBuildInput): { quantization?: { scale: number } | { bits: number }; queryAnalyzer?: "pretokenized" | "english" | "lowercase" } {
  const p = b.params as { scale?: number; bits?: number; queryAnalyzer?: "pretokenized" | "english" | "lowercase" };
  for (const k of Object.keys(p)) if (!["scale", "bits", "queryAnalyzer", "title", "encoder"].includes(k)) throw new Error(`impact: unknown parameter ${k} (known: scale, bits, queryAnalyzer, encoder, title)`);
  if (p.scale !== undefined && p.bits !== undefined) throw new Error("impact: give a quantization scale or bits, not both");
  if (p.queryAnalyzer !== undefined && !["pretokenized", "english", "lowercase"].includes(p.queryAnalyzer)) throw new Error(`impact: queryAnalyzer must be pretokenized, english or lowercase, not ${String(p.queryAnalyzer)}`);
  return { ...(p.scale !== undefined ? { quantization: { scale: p.scale } } : p.bits !== undefined ? { quantization: { bits: p.bits } } : {}), ...(p.queryAnalyzer ? { queryAnalyzer: p.queryAnalyzer } : {}) };
}

export const impactKind: IndexKind = {
  name: "impact",
  version: FORMAT_VERSION,
  defaultUnit: "passage",
  resumes: true,
  stripMarkers: true,
  vectors: true,
  async build(b) {
    const v = b.vectors;
    const encoderParam = (b.params as { encoder?: unknown }).encoder;
    if (v && encoderParam !== undefined) throw new Error("impact: give term weights (--vectors, --from-bm25) or an encoder (--encoder DIR), not both");
    if (!v && encoderParam === undefined) throw new Error("impact indexes are built from term weights: --vectors COLLECTION.jsonl (with --units TABLE or --ids FILE), --from-bm25 INDEX, or a SPLADE encoder run over the units: --encoder DIR");
    const report = b.onProgress ?? (() => {});
    const p = impactParams(b);
    const bar: ProgressEvent = { label: "index impact", unit: "lines", items: 0 };
    const status = (text: () => string, done = false): void => report({ label: "index impact", status: text, done });
    try {
      if (!v) {
        const { spladeSpecFrom } = await import("../impact/splade.js");
        const { buildImpactFromEncoder } = await import("../impact/encode.js");
        const encoder = spladeSpecFrom(encoderParam, "impact: params.encoder");
        const enc: ProgressEvent = { label: "index impact: encoding", unit: `${b.unit} units`, items: 0 };
        const s = await buildImpactFromEncoder({ units: () => b.units(), unit: b.unit, source: b.source, encoder, title: (b.params as { title?: boolean }).title !== false, quantization: p.quantization }, b.dir, {
          threads: b.threads,
          memory: b.memory,
          onProgress: (e) => (e.phase === "encode" ? report({ ...enc, items: e.done }) : e.phase === "index" ? report({ ...bar, items: e.done }) : status(() => (e.phase === "units" ? `${fmt(e.done)} units` : `merging: ${fmt(e.done)} terms`))),
        });
        report({ ...enc, done: true });
        report({ ...bar, done: true });
        return { units: s.units, detail: `${fmt(s.terms)} terms, ${fmt(s.postings)} postings, SPLADE weights as ${describe(s.quantization)}${s.resumedUnits > 0 ? `, resumed after ${fmt(s.resumedUnits)} units` : ""}` };
      }
      if (v.fromBm25) {
        const { impactsFromBm25 } = await import("../impact/from-bm25.js");
        const s = await impactsFromBm25(v.file, b.dir, { quantization: p.quantization, onProgress: (t) => status(() => `${fmt(t)} terms`) });
        return { units: s.units, detail: `${fmt(s.terms)} terms, ${fmt(s.postings)} postings, BM25 scores as ${describe(s.quantization)}` };
      }
      if ((v.ids === undefined) === (b.table === undefined)) throw new Error("say which unit each line's id numbers with one of: --units TABLE, --ids FILE");
      const { buildImpactIndex } = await import("../impact/build.js");
      const units = b.table !== undefined ? tableUnits(b.table) : (await import("../dense/dpr-passages.js")).unitsFromIdsFile(v.ids!);
      const s = await buildImpactIndex({ collection: v.file, units, unit: b.unit, ...p }, b.dir, {
        memory: b.memory,
        ownDir: true,
        onProgress: (e) => (e.phase === "index" ? report({ ...bar, items: e.done }) : status(() => (e.phase === "units" ? `${fmt(e.done)} units` : `merging: ${fmt(e.done)} terms`))),
      });
      report({ ...bar, done: true });
      return { units: s.units, detail: `${fmt(s.terms)} terms, ${fmt(s.postings)} postings, ${describe(s.quantization)}, ${fmt(s.segments)} segments${s.resumedLines > 0 ? `, resumed after ${fmt(s.resumedLines)} lines` : ""}` };
    } finally {
      status(() => "", true);
    }
  },
  async open(dir, manifest) {
    const { ImpactRetriever } = await import("../impact/search.js");
    return new ImpactRetriever(dir, manifest);
  },
  async verify(dir) {
    (await import("../impact/search.js")).checkImpactIndex(dir);
  },
};

function describe(q: import("../impact/collection.js").Quantization): string {
  return q.mode === "scale" ? `impacts = round(weight × ${q.scale})` : `${q.bits}-bit impacts of the largest weight ${q.max}`;
}

/** The units of a unit table, in order (the table closed at the end). */
async function* tableUnits(dir: string): AsyncGenerator<Unit> {
  const { TableUnitStore } = await import("../units/table.js");
  const t = TableUnitStore.open(dir);
  try {
    yield* t.scan(0, t.count, false);
  } finally {
    t.close();
  }
}
