// The manifest of a tartan artefact (`tartan-artefact.json`, the first entry of the archive): what
// the archive holds (an index of some kind or a knowledge-source store), the versions that built it,
// and every file with its size and sha256. Also: the versions this tartan reads, and the check of a
// manifest against them, naming what is wrong.

import { KINDS } from "../retrieval/kinds/index.js";
import { FORMAT as STORE_FORMAT } from "../knowledge/format.js";

/** The manifest's entry name, first in every artefact. */
export const ARTEFACT_MANIFEST = "tartan-artefact.json";
/** The archive layout this tartan writes and reads. */
export const ARTEFACT_FORMAT_VERSION = 1;

/** One packed file. */
export interface ArtefactFile {
  /** Path inside the directory, "/"-separated. */
  path: string;
  bytes: number;
  sha256: string;
}

/** What an artefact holds and what built it. */
export interface ArtefactManifest {
  format: "tartan-artefact";
  formatVersion: number;
  /** "index" (any retriever kind) or "knowledge-source" (a `tartan ks ingest` store). */
  kind: "index" | "knowledge-source";
  /** Index: its manifest's kind, unit, units and format version. */
  index?: { kind: string; unit: string; units: number; formatVersion: number };
  /** Store: its format, page count. */
  store?: { format: string; pages: number };
  /** The versions that built it. */
  builtBy: { tartan: string; node: string; indexTartan?: string };
  created: string;
  files: ArtefactFile[];
}

/** The index format version this tartan reads for `kind` (its descriptor's version), or undefined for a kind it does not know. */
export async function readableIndexVersion(kind: string): Promise<number | undefined> {
  return KINDS.find(kind)?.version;
}

/** The store format this tartan reads. */
export const READABLE_STORE_FORMAT = STORE_FORMAT;

/**
 * Checks a parsed manifest (from `where`) field by field and against the versions this tartan reads;
 * throws naming the field or the version that is wrong.
 */
export async function checkArtefactManifest(m: unknown, where: string): Promise<ArtefactManifest> {
  const bad = (field: string, why: string): never => {
    throw new Error(`${where ? `${where}: ` : ""}${ARTEFACT_MANIFEST}: ${field} ${why}`);
  };
  if (m === null || typeof m !== "object" || Array.isArray(m)) bad("(top level)", "is not an object");
  const o = m as Record<string, unknown>;
  if (o.format !== "tartan-artefact") bad("format", `is ${JSON.stringify(o.format)}, not "tartan-artefact" (not a tartan artefact)`);
  if (o.formatVersion !== ARTEFACT_FORMAT_VERSION) bad("formatVersion", `is ${JSON.stringify(o.formatVersion)}: wrong version, this tartan reads artefacts of version ${ARTEFACT_FORMAT_VERSION} (built by tartan ${String((o.builtBy as { tartan?: unknown } | undefined)?.tartan)})`);
  if (o.kind !== "index" && o.kind !== "knowledge-source") bad("kind", `is ${JSON.stringify(o.kind)}, expected "index" or "knowledge-source"`);
  if (!Array.isArray(o.files)) bad("files", "is not a list");
  const files = o.files as unknown[];
  files.forEach((f, i) => {
    const e = f as Record<string, unknown>;
    if (typeof e?.path !== "string") bad(`files[${i}].path`, "is not a string");
    if (typeof e.bytes !== "number" || !Number.isSafeInteger(e.bytes) || e.bytes < 0) bad(`files[${i}].bytes`, "is not a size in bytes");
    if (typeof e.sha256 !== "string" || !/^[0-9a-f]{64}$/u.test(e.sha256)) bad(`files[${i}].sha256`, "is not 64 lower-case hex digits");
  });
  const built = String((o.builtBy as { tartan?: unknown } | undefined)?.tartan ?? "?");
  if (o.kind === "index") {
    const ix = o.index as ArtefactManifest["index"];
    if (!ix || typeof ix.kind !== "string" || typeof ix.formatVersion !== "number") bad("index", "lacks kind or formatVersion");
    const readable = await readableIndexVersion(ix!.kind);
    if (readable === undefined) bad("index.kind", `is ${JSON.stringify(ix!.kind)}, an index kind this tartan does not know`);
    if (ix!.formatVersion !== readable) bad("index.formatVersion", `is ${ix!.formatVersion}: wrong version, this tartan reads ${ix!.kind} indexes of format ${readable} (the artefact was built by tartan ${built})`);
  } else {
    const st = o.store as ArtefactManifest["store"];
    if (!st || typeof st.format !== "string") bad("store", "lacks format");
    if (st!.format !== READABLE_STORE_FORMAT) bad("store.format", `is ${JSON.stringify(st!.format)}: wrong version, this tartan reads stores of format ${READABLE_STORE_FORMAT} (the artefact was built by tartan ${built})`);
  }
  return o as unknown as ArtefactManifest;
}

/**
 * Throws unless `path` is a plain relative path that stays inside the directory: "/"-separated, no
 * empty, "." or ".." component, no leading "/", no backslash or NUL.
 */
export function checkEntryPath(path: string, where: string): void {
  const parts = path.split("/");
  if (path === "" || path.startsWith("/") || /[\\\0]/u.test(path) || parts.some((p) => p === "" || p === "." || p === ".."))
    throw new Error(`${where}: entry ${JSON.stringify(path)} is not a plain relative path inside the directory: refused`);
}
