// The dense kind (encoded units, exact or HNSW search, ../dense/): passage level by default; its search
// encodes a batch and spreads it over every core itself, so `tartan retrieve` gives it one thread. Build
// and open delegate to ../dense/index.ts (buildDenseIndex, openDense).

import { formatCount, type ProgressEvent } from "../../util/progress.js";
import { rmSync } from "node:fs";
import type { IndexKind, KindBuildInput, KindBuildResult } from "./kind.js";
import { DENSE_FORMAT_VERSION } from "../dense/format.js";

export const denseKind: IndexKind = {
  name: "dense",
  version: DENSE_FORMAT_VERSION,
  defaultUnit: "passage",
  // Builds from vectors resume from what a killed build left; encoder builds clear the directory themselves.
  resumes: true,
  stripMarkers: true,
  searchThreads: 1,
  vectors: true,
  async build(b) {
    if (b.vectors) return buildFromVectors(b);
    rmSync(b.dir, { recursive: true, force: true });
    const { buildDenseIndex } = await import("../dense/index.js");
    type DenseBuildParams = import("../dense/index.js").DenseBuildParams;
    // Universal Sentence Encoder lite is the one real encoder that installs offline: the default.
    const dense = { encoder: { type: "use-lite" }, ...b.params, unit: b.unit, source: b.source } as DenseBuildParams;
    // With progress reported, count the units first (cheap next to encoding them) so the line has an ETA.
    const report = b.onProgress ?? (() => {});
    let total: number | undefined;
    if (b.onProgress) {
      total = 0;
      for await (const _ of b.units()) total++;
    }
    const bar: ProgressEvent = { label: "index dense: encoding", unit: `${b.unit} units`, totalItems: total, countItems: true, items: 0 };
    let encoded = false;
    try {
      const m = await buildDenseIndex(b.units(), b.dir, dense, (p) => {
        if (p.phase === "encode") report({ ...bar, items: p.done });
        else {
          if (!encoded) report({ ...bar, done: true });
          encoded = true;
          report({ label: "index dense", status: () => `HNSW graph: ${formatCount(p.done)} vectors added` });
        }
      });
      if (!encoded) report({ ...bar, done: true });
      return { units: m.units, detail: `${String((m.params as { dim?: number }).dim ?? "?")}-d ${dense.encoder.type} vectors` };
    } finally {
      report({ label: "index dense", status: () => "", done: true });
    }
  },
  async open(dir, _manifest, options) {
    return (await import("../dense/index.js")).openDense(dir, { threads: options?.threads });
  },
};

/** `--vectors`: a compressed (or exact, `quantize: "none"`) index of precomputed vectors, resumable. */
async function buildFromVectors(b: KindBuildInput): Promise<KindBuildResult> {
  const v = b.vectors!;
  const { buildDenseFromVectors } = await import("../dense/from-vectors.js");
  const p = { ...b.params } as { quantize?: import("../dense/quantizer.js").QuantizeKind | "none"; encoder?: import("../dense/encoder.js").EncoderSpec; k1?: number; k2?: number; pqM?: number; sample?: number; nprobe?: number; refine?: number; rerank?: number };
  // `rerank` is refine's old name (deprecated): a library caller's params still set the depth.
  if (p.refine === undefined && p.rerank !== undefined) p.refine = p.rerank;
  delete p.rerank;
  let ks: import("../../knowledge/source.js").KnowledgeSourceReader | undefined;
  if (v.dprPassages !== undefined) {
    if (b.ks === undefined) throw new Error("--dpr-passages needs the knowledge source its titles are looked up in (--ks DIR)");
    ks = b.openKs ? await b.openKs() : (await import("../../knowledge/store.js")).KnowledgeSource.open(b.ks);
  }
  const report = b.onProgress ?? (() => {});
  const bars = new Map<string, ProgressEvent>();
  const labels: Record<string, string> = { units: "index dense: units", train: "index dense: training", assign: "index dense: assigning lists", layout: "index dense: laying out" };
  try {
    const r = await buildDenseFromVectors(
      { vectors: v.file, ids: v.ids, units: b.table, dprPassages: v.dprPassages, ks, dim: v.dim, dtype: v.dtype, unit: b.unit, threads: b.threads, ...p },
      b.dir,
      (e) => {
        let bar = bars.get(e.phase);
        if (!bar) {
          for (const [phase, other] of bars) {
            report({ ...other, done: true });
            bars.delete(phase);
          }
          bar = { label: labels[e.phase], unit: e.phase === "train" ? "steps" : "vectors", totalItems: e.total, countItems: true, items: 0 };
          bars.set(e.phase, bar);
        }
        report({ ...bar, items: e.done });
      },
      (line) => process.stderr.write(`${line}\n`),
    );
    const m = r.manifest.params as { dim: number; quantize: string; lists?: number; codeBytes?: number };
    const dpr = r.dpr ? `; ${formatCount(r.dpr.passages)} DPR passages placed${r.dpr.pageOnly ? ` (${formatCount(r.dpr.pageOnly)} page-level only: their words were not found in the page)` : ""}` : "";
    return { units: r.manifest.units, detail: `${m.dim}-d precomputed vectors, ${m.quantize === "none" ? "exact" : `${m.quantize} codes in ${formatCount(m.lists ?? 0)} lists`}${dpr}` };
  } finally {
    for (const bar of bars.values()) report({ ...bar, done: true });
    const c = ks as { close?: () => unknown } | undefined;
    await c?.close?.();
  }
}
