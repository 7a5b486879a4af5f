// Building an index directory of any kind (the kind's own build comes from the registry, ./kinds/):
// the units or pages from a pages file, a store directory, a unit table or a page stream a backend
// gives; the build goes into a sibling temporary directory (`.NAME.building`) that replaces the old
// index only when complete and sealed (every file's size and checksum in the manifest), so a killed
// build never leaves a half-old, half-new index, and a killed build of a resumable kind (BM25, entity)
// goes on from that directory when run again with the same arguments. The build holds `OUT.lock`
// (src/util/lock.ts) for its whole run; a full disk removes `.NAME.building` and names the index.

import { existsSync, renameSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { KiltPage } from "../records/types.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import { makeDirs } from "../util/safe-output.js";
import { lockOutput } from "../util/lock.js";
import { diskError, diskErrorCode } from "../util/disk-errors.js";
import { formatCount as fmt, type OnProgress } from "../util/progress.js";
import { pageFeed, type PageFeed } from "./entity/source.js";
import { indexKind, type IndexKind } from "./kinds/index.js";
import type { VectorsInput } from "./kinds/kind.js";
export type { VectorsInput } from "./kinds/kind.js";
import { readManifest, sealIndex } from "./manifest.js";
import { unitsFrom, unitsFromPages, type UnitOptions } from "./sources.js";
import { TableUnitStore } from "./units/table.js";
import type { RetrieverKind, UnitKind } from "./types.js";
import type { Unit } from "./units/unit.js";

/** What {@link buildIndex} builds, and from what. */
export interface IndexBuildOptions {
  /** Pages JSONL file. */
  pages?: string;
  /** Knowledge-source store directory. */
  ks?: string;
  /** A unit table from `tartan ks passages --ks DIR --table UNITS` (passages already cut; text read from the store). */
  units?: string;
  /**
   * The pages of a knowledge source that is not a directory (a backend's, e.g. ClickHouse's, given by
   * src/backends/open.ts), with `ks` naming it for the manifest; called once per pass over the pages.
   */
  pageStream?: () => AsyncIterable<KiltPage>;
  /**
   * Opens `ks` through its backend (given by src/backends/open.ts, which knows every kind of location);
   * without it a `ks` directory is opened as the embedded store. Dense builds from a DPR passage file
   * look titles up there.
   */
  openKs?: () => Promise<KnowledgeSourceReader>;
  kind: Exclude<RetrieverKind, "hybrid">;
  unit?: UnitKind;
  /** Passage size in words (unit passage). */
  words?: number;
  /** The index directory (default `index-KIND-UNIT`). */
  out?: string;
  /** Kind-specific parameters (tfidf: ngram, hashBits, title; entity: titleCount, maxMentionTokens; dense: encoder, …). */
  params?: Record<string, unknown>;
  /** BM25, entity: bytes the build may use (default 3 GiB). */
  memory?: number;
  /** BM25: analysis threads (default: the number of cores). */
  threads?: number;
  /**
   * Dense: precomputed vectors instead of encoding the units (`index build --kind dense --vectors FILE`).
   * Row i is unit i of `vectors.ids`, of `units` (a unit table) or of `vectors.dprPassages` (placed through `ks`).
   */
  vectors?: VectorsInput;
  /** Where the build reports its progress (the kind's count and status lines); absent: nothing is reported or drawn. */
  onProgress?: OnProgress;
}

/** What {@link buildIndex} did. */
export interface IndexBuildResult {
  out: string;
  unit: UnitKind;
  units: number;
  seconds: number;
  detail: string;
}

/** The temporary directory an index is built in before it replaces `out`. */
export function buildingDir(out: string): string {
  return join(dirname(out), `.${basename(out)}.building`);
}

/** Replaces `out` with the finished `tmp` (the old index stays whole until the last rename). */
function swapInto(tmp: string, out: string): void {
  const old = join(dirname(out), `.${basename(out)}.old`);
  rmSync(old, { recursive: true, force: true });
  if (existsSync(out)) renameSync(out, old);
  renameSync(tmp, out);
  rmSync(old, { recursive: true, force: true });
}

/** The unit a kind indexes by default: DrQA's TF-IDF and the entity retriever are page level. */
export function defaultUnit(kind: RetrieverKind): UnitKind {
  return kind === "hybrid" ? "passage" : indexKind(kind, "--kind").defaultUnit;
}

/** The source's unit, kind and location, checked: one source, a unit the kind can index. */
export function resolveSource(o: Pick<IndexBuildOptions, "pages" | "ks" | "units" | "unit" | "kind" | "vectors">): { kind: IndexKind; unit: UnitKind; source: string } {
  if (o.vectors) {
    const kind = indexKind(o.kind, "--kind");
    if (!kind.vectors) throw new Error(`--vectors builds dense and impact indexes, not ${kind.name}`);
    if (o.pages) throw new Error("--vectors takes what its rows are from --ids FILE, --units TABLE or --dpr-passages FILE --ks DIR, not --pages");
    let unit = o.unit ?? "passage";
    if (o.vectors.fromBm25) return { kind, unit: readManifest(o.vectors.file).unit, source: o.vectors.file };
    if (o.units !== undefined) {
      const t = TableUnitStore.open(o.units);
      unit = (t.description.unit as UnitKind | undefined) ?? unit;
      t.close();
    }
    return { kind, unit, source: o.vectors.file };
  }
  const kind = indexKind(o.kind, "--kind");
  let tableUnit: UnitKind | undefined;
  if (o.units !== undefined) {
    if (o.pages || o.ks) throw new Error("give one source: --pages FILE, --ks DIR or --units DIR");
    const t = TableUnitStore.open(o.units);
    tableUnit = t.description.unit as UnitKind | undefined;
    t.close();
    if (tableUnit === undefined) throw new Error(`${o.units}: the unit table does not say what its units are (make it with tartan ks passages --table)`);
    if (o.unit !== undefined && o.unit !== tableUnit) throw new Error(`${o.units} holds ${tableUnit} units, not ${o.unit}`);
  } else if (!o.pages === !o.ks) throw new Error("give the pages with --pages FILE or a knowledge source with --ks DIR");
  const source = (o.units ?? o.ks ?? o.pages)!;
  const unit = tableUnit ?? o.unit ?? kind.defaultUnit;
  if (kind.units && !kind.units.includes(unit)) throw new Error(`${kind.name} indexes are ${kind.units.join(" or ")} level: use --unit ${kind.units[0]} (or leave --unit out)`);
  return { kind, unit, source };
}

/** The units of the source, cut as `options` says (a backend's page stream, or files and directories). */
export function sourceUnits(o: Pick<IndexBuildOptions, "pages" | "ks" | "units" | "pageStream">, options: UnitOptions): AsyncIterable<Unit> {
  return o.pageStream ? unitsFromPages(o.pageStream(), options) : unitsFrom({ pages: o.pages, ks: o.ks, units: o.units }, options);
}

/** Builds one index directory with the atomic swap (resuming a killed build of a resumable kind); `log` gets the summary line. */
export async function buildIndex(o: IndexBuildOptions, log: (s: string) => void): Promise<IndexBuildResult> {
  const { kind, unit, source } = resolveSource(o);
  if (o.units !== undefined && kind.fromTable === false) throw new Error(`${kind.name} indexes are built from pages: give --pages FILE or --ks DIR`);
  const out = o.out ?? `index-${kind.name}-${unit}`;
  const lock = lockOutput(out, log); // the default name too; re-entrant with the command's own lock
  // A previous swap killed between its renames left the old index at .NAME.old: put it back.
  const old = join(dirname(out), `.${basename(out)}.old`);
  const tmp = buildingDir(out);
  let r: { units: number; detail: string };
  const t0 = performance.now();
  try {
    if (!existsSync(out) && existsSync(old)) renameSync(old, out);
    // Only resumable kinds go on from what a killed build left; the others start afresh.
    if (!kind.resumes) rmSync(tmp, { recursive: true, force: true });
    makeDirs(tmp); // errors name the directory and the parent that refused it
    const pages = (): PageFeed => (o.pageStream ? { pages: o.pageStream(), bytes: () => 0 } : pageFeed({ pages: o.pages, ks: o.ks }));
    try {
      r = await kind.build({
        dir: tmp,
        unit,
        source,
        params: o.params ?? {},
        units: () => sourceUnits(o, { unit, words: o.words }),
        pages,
        table: o.units,
        memory: o.memory,
        threads: o.threads,
        vectors: o.vectors,
        ks: o.ks,
        openKs: o.openKs,
        onProgress: o.onProgress,
      });
      sealIndex(tmp);
      swapInto(tmp, out);
    } catch (e) {
      // A full disk: nothing of this build is kept (not even to resume), the previous index is untouched.
      if (diskErrorCode(e) === undefined) throw e;
      rmSync(tmp, { recursive: true, force: true });
      throw diskError(out, e, { cleanup: `removed ${tmp}${existsSync(out) ? `; the previous index in ${out} is untouched` : ""}` });
    }
  } finally {
    lock.release();
  }
  const seconds = (performance.now() - t0) / 1000;
  log(`${kind.name} index of ${fmt(r.units)} ${unit} units${r.detail ? ` (${r.detail})` : ""} from ${source} → ${out} in ${seconds.toFixed(1)} s`);
  return { out, unit, units: r.units, seconds, detail: r.detail };
}
