// The catalogue of prebuilt artefacts (JSON, like Pyserini's prebuilt-index list): each entry names an
// archive made by `tartan index pack` with its URL, size and sha256, so a lab can publish its own
// (docs/repro.md). A relative URL is resolved against the catalogue's own location (a directory or an
// http(s) URL), so a catalogue and its archives can be published side by side. Errors name the file,
// the entry and the field.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { downloadFile } from "../util/download.js";
import { readJsonFile } from "../util/json-file.js";
import { writeFileSafe } from "../util/safe-output.js";

/** The catalogue's format marker and version. */
export const CATALOGUE_FORMAT = "tartan-artefact-catalogue";
/** The catalogue format version this tartan reads and writes. */
export const CATALOGUE_VERSION = 1;

/** One published artefact. */
export interface CatalogueEntry {
  /** Name used with `tartan index pull NAME --catalogue FILE`. */
  name: string;
  /** http(s):// or file:// URL, a path, or a path relative to the catalogue. */
  url: string;
  bytes: number;
  sha256: string;
  /** What it holds ("bm25 paragraph index", "knowledge-source"), informative. */
  kind?: string;
  description?: string;
}

/** A catalogue file's content. */
export interface ArtefactCatalogue {
  format: typeof CATALOGUE_FORMAT;
  version: number;
  artefacts: CatalogueEntry[];
}

/** Checks a parsed catalogue field by field; throws naming `file`, the entry and the field. */
export function checkCatalogue(value: unknown, file: string): ArtefactCatalogue {
  const bad = (where: string, why: string): never => {
    throw new Error(`${file}: ${where} ${why}`);
  };
  if (value === null || typeof value !== "object" || Array.isArray(value)) bad("(top level)", "is not an object");
  const c = value as Record<string, unknown>;
  if (c.format !== CATALOGUE_FORMAT) bad("format", `is ${JSON.stringify(c.format)}, expected "${CATALOGUE_FORMAT}"`);
  if (c.version !== CATALOGUE_VERSION) bad("version", `is ${JSON.stringify(c.version)}, this tartan reads version ${CATALOGUE_VERSION}`);
  if (!Array.isArray(c.artefacts)) bad("artefacts", "is not a list");
  const seen = new Set<string>();
  (c.artefacts as unknown[]).forEach((e, i) => {
    const o = e as Record<string, unknown>;
    const at = `artefacts[${i}]`;
    if (o === null || typeof o !== "object") bad(at, "is not an object");
    if (typeof o.name !== "string" || o.name === "") bad(`${at}.name`, "is not a non-empty string");
    if (seen.has(o.name as string)) bad(`${at}.name`, `${JSON.stringify(o.name)} appears twice`);
    seen.add(o.name as string);
    if (typeof o.url !== "string" || o.url === "") bad(`${at}.url`, "is not a non-empty string");
    if (typeof o.bytes !== "number" || !Number.isSafeInteger(o.bytes) || o.bytes <= 0) bad(`${at}.bytes`, "is not a size in bytes");
    if (typeof o.sha256 !== "string" || !/^[0-9a-f]{64}$/u.test(o.sha256)) bad(`${at}.sha256`, "is not 64 lower-case hex digits");
  });
  return c as unknown as ArtefactCatalogue;
}

/** Reads and checks a catalogue file. */
export function readCatalogue(file: string): ArtefactCatalogue {
  return checkCatalogue(readJsonFile(file, "the catalogue"), file);
}

/**
 * Reads and checks a catalogue from a file or an http(s) URL (fetched to a temporary directory, removed
 * after reading, whatever happens; network failures are retried `retries` times).
 */
export async function loadCatalogue(where: string, options: { retries?: number } = {}): Promise<ArtefactCatalogue> {
  if (!/^https?:\/\//iu.test(where)) return readCatalogue(where);
  const dir = mkdtempSync(join(tmpdir(), "tartan-catalogue-"));
  try {
    const file = join(dir, "catalogue.json");
    await downloadFile(where, file, { retries: options.retries ?? 2 });
    return checkCatalogue(readJsonFile(file, "the catalogue", where), where);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The entry called `name`, with its URL resolved against the catalogue's location; throws listing the names there are. */
export function findArtefact(catalogue: ArtefactCatalogue, name: string, catalogueFile: string): CatalogueEntry {
  const e = catalogue.artefacts.find((a) => a.name === name);
  if (!e) throw new Error(`${catalogueFile}: no artefact named ${JSON.stringify(name)} (there are: ${catalogue.artefacts.map((a) => a.name).join(", ") || "none"})`);
  return { ...e, url: resolveUrl(e.url, catalogueFile) };
}

/** `url` as written in a catalogue at `catalogueFile`: absolute URLs and paths as they are, relative ones next to the catalogue. */
export function resolveUrl(url: string, catalogueFile: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//iu.test(url) || url.startsWith("/")) return url;
  if (/^https?:\/\//iu.test(catalogueFile)) return new URL(url, catalogueFile).href;
  return join(dirname(resolve(catalogueFile)), url);
}

/** Adds `entry` to the catalogue at `file` (created if missing), replacing an entry of the same name; written atomically. */
export function addToCatalogue(file: string, entry: CatalogueEntry): ArtefactCatalogue {
  const cat: ArtefactCatalogue = existsSync(file) ? readCatalogue(file) : { format: CATALOGUE_FORMAT, version: CATALOGUE_VERSION, artefacts: [] };
  checkCatalogue({ ...cat, artefacts: [entry] }, `${file} (new entry)`);
  const artefacts = cat.artefacts.filter((a) => a.name !== entry.name);
  artefacts.push(entry);
  const next = { ...cat, artefacts };
  writeFileSafe(file, `${JSON.stringify(next, null, 2)}\n`);
  return next;
}
