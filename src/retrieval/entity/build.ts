// Builds the entity retriever's alias table from KILT pages, the CPU stand-in for BLINK in KILT: every
// anchor's text counts one link to its target page (resolved by wikipedia_id, else by title), and every
// page's title, its title without a "(…)" qualifier or ", …" suffix, and its Wikidata label and aliases
// add `titleCount` pseudo-links. p(page | mention) = links(mention → page) / links(mention → any page).
// Units are pages (sources.ts `page` units), so entity hits fuse with page-level TF-IDF.
//
// In bounded memory, whatever the source's size, in three passes over sorted runs (./runs.ts):
//   1. pages stream in (each written to the unit store); title aliases (key, unit), anchors (target, key)
//      with counts, and the pages' names (id or title → unit) collect in memory until their share of the
//      budget is reached, then go to disk as three sorted runs. Finished runs are recorded in a state file,
//      so a killed build resumes after the last pages they cover.
//   2. anchor runs (by target) are merged against name runs (by name): each target becomes a unit (by
//      id the last page with it, by title the first), giving (key, unit, links) runs.
//   3. all (key, unit) runs are merged by key into the alias file (./format.ts).
// The alias file is the same byte for byte whatever the budget (one run or hundreds).

import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { displayTitle } from "../../knowledge/wiki-title.js";
import type { KiltPage } from "../../records/types.js";
import { inputIdentity, type FileIdentity } from "../../util/input-identity.js";
import { readBuildState, writeBuildState } from "../../util/build-state.js";
import { writeManifest } from "../manifest.js";
import { pageUnit } from "../sources.js";
import { UnitWriter } from "../units/store.js";
import { ALIASES_FILE, AliasFileWriter, ENTITY_FORMAT_VERSION, type AliasLine } from "./format.js";
import { mentionKey } from "./mentions.js";
import { cascadeRuns, mergeRuns, writeRun, type RunCodec } from "./runs.js";

export { ALIASES_FILE, ENTITY_FORMAT_VERSION, type AliasLine } from "./format.js";

/** What an entity index is built with. */
export interface EntityParams {
  /** Pseudo-links a page's title (and title variants, Wikidata label/aliases) adds. Default 1. */
  titleCount: number;
  /** Longest mention looked for, in tokens. Default 12. */
  maxMentionTokens: number;
}

/** The entity index's default parameters. */
export const DEFAULT_ENTITY_PARAMS: EntityParams = { titleCount: 1, maxMentionTokens: 12 };

/** Default memory budget of a build: 3 GiB for the whole process (as BM25's). */
export const DEFAULT_ENTITY_MEMORY = 3 * 1024 ** 3;

/** What an entity-index build counted: pages, aliases, anchors, and anchors to pages not in the source. */
export interface EntityBuildStats {
  units: number;
  aliases: number;
  anchors: number;
  unresolvedAnchors: number;
  /** Sorted runs written in the first pass (0 when everything fitted in memory), including a resumed build's. */
  runs: number;
  /** Pages whose aliases a killed build had already collected (0 unless resumed). */
  resumedPages: number;
}

/** Where an entity-index build is: the phase and the pages read so far. */
export interface EntityBuildProgress {
  phase: "read" | "resolve" | "merge";
  /** Pages read so far. */
  pages: number;
  /** Runs written so far (first pass). */
  runs: number;
  /** Aliases written so far (phase "merge"). */
  aliases?: number;
}

/** Options of an entity-index build that are not recorded in the manifest (memory, resume). */
export interface EntityBuildOptions {
  /** Bytes the whole build process may use (peak RSS); default 3 GiB. Runs are spilled to stay under it. */
  memory?: number;
  /** Called as pages stream in, then while targets are resolved and aliases merged. */
  onProgress?: (p: EntityBuildProgress) => void;
  /** Resume a killed build found in the directory (same arguments); default true. */
  resume?: boolean;
  /** Hears that a killed build's state was dropped because its source changed; default standard error. */
  log?: (line: string) => void;
  /** The directory belongs to this build (a temporary one): a fresh start empties it. */
  ownDir?: boolean;
  /** Bytes of records held before a spill (overrides the share of `memory`; tests use tiny values to force many runs). */
  runBytes?: number;
}

/** The title variants a page is known by: the title, without "(…)" qualifier, before ", ". */
export function titleVariants(title: string): string[] {
  const out = new Set<string>([title]);
  const paren = title.replace(/\s*\([^()]*\)\s*$/u, "");
  if (paren.length > 0) out.add(paren);
  const comma = paren.indexOf(", ");
  if (comma > 0) out.add(paren.slice(0, comma));
  return [...out];
}

function wikidataNames(page: KiltPage): string[] {
  const info = page.wikidata_info;
  const out: string[] = [];
  if (info && typeof info.wikidata_label === "string") out.push(info.wikidata_label);
  // KILT stores Wikidata aliases as a list of strings, or as {"alias": [...]}.
  const raw = info?.aliases;
  const list: unknown = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? (raw as { alias?: unknown }).alias : undefined;
  if (Array.isArray(list)) for (const a of list) if (typeof a === "string") out.push(a);
  return out;
}

/** The target an anchor names: `id:<wikipedia_id>` when it has one, else `title:<display title>`. */
function anchorTarget(a: NonNullable<KiltPage["anchors"]>[number]): string {
  return a.wikipedia_id !== undefined && a.wikipedia_id !== null && String(a.wikipedia_id) !== "" ? `id:${a.wikipedia_id}` : `title:${displayTitle(String(a.wikipedia_title ?? String(a.href ?? "").split("#")[0]))}`;
}

// ---- Run records ----------------------------------------------------------------------------------

/** (key, unit) with the title pseudo-link flag and anchor links; ordered by key, then unit. */
interface KeyUnit {
  key: string;
  unit: number;
  title: number;
  links: number;
}
/** Anchors from text `key` to target `ref`, `n` times; ordered by target, then key. */
interface AnchorRec {
  ref: string;
  key: string;
  n: number;
}
/** A page's name (`id:…` or `title:…`) and its unit; ordered by name, then unit. */
interface NameRec {
  ref: string;
  unit: number;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const KEY_UNIT: RunCodec<KeyUnit> = {
  write: (w, r) => (w.str(r.key), w.varint(r.unit), w.varint(r.links * 2 + r.title)),
  read: (r) => {
    const key = r.str();
    const unit = r.varint();
    const v = r.varint();
    return { key, unit, title: v % 2, links: Math.floor(v / 2) };
  },
  compare: (a, b) => cmp(a.key, b.key) || a.unit - b.unit,
};
const ANCHOR: RunCodec<AnchorRec> = {
  write: (w, r) => (w.str(r.ref), w.str(r.key), w.varint(r.n)),
  read: (r) => ({ ref: r.str(), key: r.str(), n: r.varint() }),
  compare: (a, b) => cmp(a.ref, b.ref) || cmp(a.key, b.key),
};
const NAME: RunCodec<NameRec> = {
  write: (w, r) => (w.str(r.ref), w.varint(r.unit)),
  read: (r) => ({ ref: r.str(), unit: r.varint() }),
  compare: (a, b) => cmp(a.ref, b.ref) || a.unit - b.unit,
};

// ---- Memory -----------------------------------------------------------------------------------------

/** Memory the process needs besides the collected records: the runtime, the page being read, buffers. */
const BASE_MEMORY = 256 * 1024 ** 2;
/** Most runs one merge reads at once. */
const FAN_IN = 64;
/** Estimated bytes a held record costs (V8 strings, Map or array slots) and its sorted copy at a spill, beyond 2 bytes a character. */
const ENTRY_BYTES = 160;

/** Bytes of records the collectors may hold before spilling: about a third of the budget left after the base. */
export function collectorBytes(memory: number): number {
  return Math.max(64 << 10, Math.floor((memory - BASE_MEMORY) / 3));
}

/** (key, unit) → links aggregated in memory, spilled as sorted KEY_UNIT runs. */
class KeyUnitCollector {
  private titles: { key: string; unit: number }[] = [];
  private links = new Map<string, number>();
  bytes = 0;

  title(key: string, unit: number): void {
    this.titles.push({ key, unit });
    this.bytes += ENTRY_BYTES + 2 * key.length;
  }

  link(key: string, unit: number, n: number): void {
    // Mention keys never hold U+0000 (DrQA tokens exclude control characters): a safe separator.
    const k = `${key}\u0000${unit}`;
    const had = this.links.get(k);
    if (had === undefined) this.bytes += ENTRY_BYTES + 2 * k.length;
    this.links.set(k, (had ?? 0) + n);
  }

  get empty(): boolean {
    return this.titles.length === 0 && this.links.size === 0;
  }

  /** The records sorted and merged (a title and links of one (key, unit) become one record). */
  sorted(): KeyUnit[] {
    const recs: KeyUnit[] = this.titles.map((t) => ({ key: t.key, unit: t.unit, title: 1, links: 0 }));
    for (const [k, links] of this.links) {
      const sep = k.indexOf("\u0000");
      recs.push({ key: k.slice(0, sep), unit: Number(k.slice(sep + 1)), title: 0, links });
    }
    this.titles = [];
    this.links = new Map();
    this.bytes = 0;
    recs.sort(KEY_UNIT.compare);
    const out: KeyUnit[] = [];
    for (const r of recs) {
      const last = out[out.length - 1];
      if (last && last.key === r.key && last.unit === r.unit) {
        last.title |= r.title;
        last.links += r.links;
      } else out.push(r);
    }
    return out;
  }
}

// ---- Build state (resume) ---------------------------------------------------------------------------

/** The build's state file: what a resumed build needs. */
export const STATE_FILE = "entity.build.json";
const RUN_PREFIX = "entity.run-";

interface BuildState {
  /** The arguments the build was started with; a different key starts afresh. */
  key: string;
  /** The source's identity when the build began (a changed source starts afresh, saying so). */
  inputs: FileIdentity[] | null;
  /** Pages whose records the listed runs hold (pages 0..pages-1), and their anchors. */
  pages: number;
  anchors: number;
  runs: { file: string; kind: "keys" | "anchors" | "names"; size: number }[];
}

function writeState(dir: string, state: BuildState): void {
  writeBuildState(dir, STATE_FILE, state);
}

/** A killed build's state when its arguments and run files are intact, else null. */
function readState(dir: string, key: string, inputs: FileIdentity[] | null, log: (line: string) => void): BuildState | null {
  return readBuildState<BuildState>(dir, STATE_FILE, key, (s) => s.runs, {
    inputs,
    onChanged: (why) => log(`tartan: entity build in ${dir}: ${why} since the build began: starting over`),
  });
}

// ---- The build --------------------------------------------------------------------------------------

/** Indexes `pages` into `outDir`: page units, the alias file and manifest.json. */
export async function buildEntityIndex(
  pages: AsyncIterable<KiltPage> | Iterable<KiltPage>,
  outDir: string,
  params: Partial<EntityParams> & { source: string },
  onProgress?: (pages: number) => void,
  options: EntityBuildOptions = {},
): Promise<EntityBuildStats> {
  const p: EntityParams = { titleCount: params.titleCount ?? DEFAULT_ENTITY_PARAMS.titleCount, maxMentionTokens: params.maxMentionTokens ?? DEFAULT_ENTITY_PARAMS.maxMentionTokens };
  if (!(p.titleCount >= 0)) throw new Error(`entity titleCount must be ≥ 0, got ${p.titleCount}`);
  if (!Number.isInteger(p.maxMentionTokens) || p.maxMentionTokens < 1) throw new Error(`entity maxMentionTokens must be a positive integer`);
  const memory = options.memory ?? DEFAULT_ENTITY_MEMORY;
  if (!(memory > 0)) throw new Error(`entity: memory budget must be positive, got ${memory}`);
  const cap = options.runBytes ?? collectorBytes(memory);
  mkdirSync(outDir, { recursive: true });

  const key = JSON.stringify({ params: p, source: params.source, cap, format: ENTITY_FORMAT_VERSION });
  const inputs = options.resume !== false ? inputIdentity(params.source) : null;
  const resumed = options.resume !== false ? readState(outDir, key, inputs, options.log ?? ((l) => process.stderr.write(`${l}\n`))) : null;
  if (!resumed && options.ownDir) for (const f of readdirSync(outDir)) rmSync(join(outDir, f), { recursive: true, force: true });
  const state: BuildState = resumed ?? { key, inputs, pages: 0, anchors: 0, runs: [] };
  // Run files the state does not list are from a build killed before recording them.
  const listed = new Set(state.runs.map((r) => r.file));
  for (const f of readdirSync(outDir)) if ((f.startsWith(RUN_PREFIX) && !listed.has(f)) || f.endsWith(".partial") || f === ALIASES_FILE) rmSync(join(outDir, f), { force: true });
  writeState(outDir, state);
  const resumedPages = state.pages;
  const runPath = (name: string) => join(outDir, `${RUN_PREFIX}${name}`);
  let seq = state.runs.length;
  const report = (phase: EntityBuildProgress["phase"], pages: number, aliases?: number) => options.onProgress?.({ phase, pages, runs: state.runs.length, aliases });

  // Pass 1: pages → units, and (for pages not in a finished run) title aliases, anchors and names.
  const units = new UnitWriter(outDir);
  const keys = new KeyUnitCollector();
  let anchors = new Map<string, number>(); // key \0 target → count
  let anchorBytes = 0;
  let names: NameRec[] = [];
  let anchorCount = state.anchors;
  let n = 0;
  const spill = () => {
    const parts: BuildState["runs"] = [];
    const s = seq++;
    if (!keys.empty) {
      const file = runPath(`${s}.keys`);
      parts.push({ file: `${RUN_PREFIX}${s}.keys`, kind: "keys", size: writeRun(file, KEY_UNIT, keys.sorted()) });
    }
    if (anchors.size > 0) {
      const recs: AnchorRec[] = [];
      for (const [k, count] of anchors) {
        const sep = k.indexOf("\u0000");
        recs.push({ ref: k.slice(sep + 1), key: k.slice(0, sep), n: count });
      }
      anchors = new Map();
      anchorBytes = 0;
      recs.sort(ANCHOR.compare);
      parts.push({ file: `${RUN_PREFIX}${s}.anchors`, kind: "anchors", size: writeRun(runPath(`${s}.anchors`), ANCHOR, recs) });
    }
    if (names.length > 0) {
      const recs = names.sort(NAME.compare);
      names = [];
      parts.push({ file: `${RUN_PREFIX}${s}.names`, kind: "names", size: writeRun(runPath(`${s}.names`), NAME, recs) });
    }
    state.runs.push(...parts);
    state.pages = n;
    state.anchors = anchorCount;
    writeState(outDir, state);
  };
  let nameBytes = 0;
  for await (const page of pages as AsyncIterable<KiltPage>) {
    const unit = await units.add(pageUnit(page));
    n = unit + 1;
    if (unit >= resumedPages) {
      const title = String(page.wikipedia_title ?? "");
      const id = `id:${String(page.wikipedia_id)}`;
      names.push({ ref: id, unit }, { ref: `title:${title}`, unit });
      nameBytes += 2 * ENTRY_BYTES + 2 * (id.length + title.length + 6);
      if (p.titleCount > 0) {
        const seen = new Set<string>();
        for (const name of [...titleVariants(title), ...wikidataNames(page)]) {
          const k = mentionKey(name);
          if (k !== null && !seen.has(k)) {
            seen.add(k);
            keys.title(k, unit);
          }
        }
      }
      for (const a of page.anchors ?? []) {
        const k = mentionKey(String(a.text ?? ""));
        if (k === null) continue;
        const ak = `${k}\u0000${anchorTarget(a)}`;
        const had = anchors.get(ak);
        if (had === undefined) anchorBytes += ENTRY_BYTES + 2 * ak.length;
        anchors.set(ak, (had ?? 0) + 1);
        anchorCount++;
      }
      if (keys.bytes + anchorBytes + nameBytes >= cap) {
        spill();
        nameBytes = 0;
      }
    }
    onProgress?.(n);
    report("read", n);
  }
  await units.close();
  const memoryOnly = state.runs.length === 0;
  const runsWritten = state.runs.length;

  // Merge read buffers: a share of the budget, 64 kB to 4 MB a run.
  const chunkFor = (runs: number) => Math.max(64 << 10, Math.min(4 << 20, Math.floor(cap / Math.max(1, runs))));
  const temps: string[] = [];
  const tempRun = (what: string) => (i: number) => {
    const f = runPath(`tmp-${what}-${seq}-${i}`);
    temps.push(f);
    return f;
  };
  const keep = new Set(state.runs.map((r) => join(outDir, r.file)));
  const runsOf = (kind: BuildState["runs"][number]["kind"]) => state.runs.filter((r) => r.kind === kind).map((r) => join(outDir, r.file));

  // Pass 2: anchors resolved against the pages' names, into (key, unit, links) records.
  let unresolved = 0;
  const resolvedRuns: string[] = [];
  const resolveInto = (collector: KeyUnitCollector, anchorRecs: Iterable<AnchorRec>, nameRecs: Iterator<NameRec>, onFull: () => void) => {
    let next = nameRecs.next();
    let ref: string | null = null;
    let target: number | undefined;
    let done = 0;
    for (const a of anchorRecs) {
      if (a.ref !== ref) {
        ref = a.ref;
        while (!next.done && next.value.ref < ref) next = nameRecs.next();
        target = undefined;
        // By id the last page with it (the highest unit), by title the first (the lowest).
        const byTitle = ref.startsWith("title:");
        while (!next.done && next.value.ref === ref) {
          if (target === undefined || !byTitle) target = next.value.unit;
          next = nameRecs.next();
        }
      }
      if (target === undefined) unresolved += a.n;
      else collector.link(a.key, target, a.n);
      if (collector.bytes >= cap) onFull();
      if (++done % 65536 === 0) report("resolve", n);
    }
  };

  const finalKeys = new KeyUnitCollector();
  if (memoryOnly) {
    // Everything fitted: resolve and merge in memory, through the same steps as the runs.
    const anchorRecs: AnchorRec[] = [];
    for (const [k, count] of anchors) {
      const sep = k.indexOf("\u0000");
      anchorRecs.push({ ref: k.slice(sep + 1), key: k.slice(0, sep), n: count });
    }
    anchors = new Map();
    anchorRecs.sort(ANCHOR.compare);
    names.sort(NAME.compare);
    resolveInto(keys, anchorRecs, names[Symbol.iterator](), () => {});
    names = [];
  } else {
    if (!keys.empty || anchors.size > 0 || names.length > 0) spill();
    const anchorRuns = cascadeRuns(runsOf("anchors"), ANCHOR, FAN_IN, chunkFor(FAN_IN), tempRun("anchors"), keep);
    const nameRuns = cascadeRuns(runsOf("names"), NAME, FAN_IN, chunkFor(FAN_IN), tempRun("names"), keep);
    const chunk = chunkFor(anchorRuns.length + nameRuns.length);
    let r = 0;
    const flushResolved = () => {
      const f = runPath(`resolved-${r++}`);
      temps.push(f);
      writeRun(f, KEY_UNIT, finalKeys.sorted());
      resolvedRuns.push(f);
    };
    resolveInto(finalKeys, mergeRuns(anchorRuns, ANCHOR, chunk), mergeRuns(nameRuns, NAME, chunk), flushResolved);
    if (!finalKeys.empty) flushResolved();
  }

  // Pass 3: every (key, unit) record merged by key into the alias file.
  report("merge", n, 0);
  const out = new AliasFileWriter(join(outDir, ALIASES_FILE), n);
  try {
    const records = memoryOnly ? keys.sorted() : mergeRuns(cascadeRuns([...runsOf("keys"), ...resolvedRuns], KEY_UNIT, FAN_IN, chunkFor(FAN_IN), tempRun("keys"), keep), KEY_UNIT, chunkFor(FAN_IN));
    let key: string | null = null;
    let c: [number, number][] = [];
    const emit = () => {
      if (key === null) return;
      c.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
      out.add({ m: key, c } satisfies AliasLine);
      if (out.aliases % 65536 === 0) report("merge", n, out.aliases);
    };
    let last: [number, number] | null = null;
    let lastTitle = 0;
    let lastLinks = 0;
    const closeUnit = () => {
      if (last) last[1] = lastTitle ? p.titleCount + lastLinks : lastLinks;
    };
    for (const r of records) {
      if (r.key !== key) {
        closeUnit();
        last = null;
        emit();
        key = r.key;
        c = [];
      }
      if (last && last[0] === r.unit) {
        lastTitle |= r.title;
        lastLinks += r.links;
      } else {
        closeUnit();
        last = [r.unit, 0];
        lastTitle = r.title;
        lastLinks = r.links;
        c.push(last);
      }
    }
    closeUnit();
    emit();
  } catch (e) {
    out.abort();
    throw e;
  }
  const file = out.close();
  report("merge", n, file.aliases);
  writeManifest(outDir, {
    kind: "entity",
    unit: "page",
    units: n,
    params: { ...p, aliases: file.aliases, anchors: anchorCount, unresolvedAnchors: unresolved, buildId: file.buildId },
    source: params.source,
    formatVersion: ENTITY_FORMAT_VERSION,
  });
  // Every run the state lists, the last spill's included (written after `keep` was taken), and the temporaries.
  for (const f of [...temps, ...keep, ...state.runs.map((r) => join(outDir, r.file))]) rmSync(f, { force: true });
  rmSync(join(outDir, STATE_FILE), { force: true });
  return { units: n, aliases: file.aliases, anchors: anchorCount, unresolvedAnchors: unresolved, runs: runsWritten, resumedPages };
}
