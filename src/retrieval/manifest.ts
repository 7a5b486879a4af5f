// The manifest every index directory carries (`manifest.json`): its kind, unit, unit count, parameters,
// source, tartan version and format version, and the integrity of the directory: every file with its
// size and CRC-32 (`sealIndex`), checked cheaply (sizes) at every open (`checkIndexFiles`) and fully
// (checksums) by `verifyIndex` (`tartan index verify`). Every index kind reads and writes it here.

import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { readJsonFile } from "../util/json-file.js";
import { join } from "node:path";
import { createRequire } from "node:module";
import { crc32 } from "node:zlib";
import type { IndexFile, IndexManifest } from "./types.js";
import { writeFileSafe } from "../util/safe-output.js";

/** The name of an index directory's manifest. */
export const MANIFEST_FILE = "manifest.json";

/** tartan's package version (written into manifests): the nearest package.json above this module (src/ or dist/src/). */
export const TARTAN_VERSION: string = (() => {
  const require = createRequire(import.meta.url);
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = require(rel) as { name?: string; version?: string };
      if (pkg.name === "tartan" && typeof pkg.version === "string") return pkg.version;
    } catch {
      /* try the next level */
    }
  }
  return "unknown";
})();

/** Reads and checks `dir/manifest.json`. */
export function readManifest(dir: string): IndexManifest {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file)) throw new Error(`${dir}: no ${MANIFEST_FILE} (not an index directory?)`);
  const m = readJsonFile(file, "the index manifest") as IndexManifest;
  if (m === null || typeof m !== "object" || typeof m.kind !== "string" || typeof m.unit !== "string" || typeof m.units !== "number") throw new Error(`${file}: kind, unit and units are required`);
  return m;
}

/** Writes `dir/manifest.json`, filling in the creation time and tartan version. */
export function writeManifest(dir: string, m: Omit<IndexManifest, "created" | "tartanVersion">): IndexManifest {
  const full: IndexManifest = { kind: m.kind, unit: m.unit, units: m.units, params: m.params, source: m.source, created: new Date().toISOString(), tartanVersion: TARTAN_VERSION, formatVersion: m.formatVersion };
  if (m.files) full.files = m.files;
  const path = join(dir, MANIFEST_FILE);
  writeFileSafe(path, `${JSON.stringify(full, null, 2)}\n`);
  return full;
}

/** The manifests behind an index: a fusion's members (in order), else the index's own. */
export function memberManifests(m: IndexManifest): IndexManifest[] {
  return m.kind === "hybrid" ? ((m.params.members as IndexManifest[] | undefined) ?? []) : [m];
}

/** Whether the index is a compressed dense one (coarse lists probed, candidates refined: `nprobe`, `refine` apply). */
export function isCompressedDense(m: IndexManifest): boolean {
  const q = (m.params as { quantize?: string }).quantize;
  return m.kind === "dense" && q !== undefined && q !== "none";
}

/** Whether the index can search a text: every kind but a dense index that names no encoder (it takes query vectors). */
export function answersText(m: IndexManifest): boolean {
  return m.kind !== "dense" || (m.params.encoder !== null && m.params.encoder !== undefined);
}

/** What an index is, for a message: `bm25`, `dense (pq)`, `dense (exact)`; a fusion's members joined by commas. */
export function describeKind(m: IndexManifest): string {
  return memberManifests(m)
    .map((x) => (x.kind === "dense" ? `dense (${isCompressedDense(x) ? String((x.params as { quantize?: string }).quantize) : "exact"})` : x.kind))
    .join(", ");
}

/** A running CRC-32 (node:zlib's `crc32`) as the 8 hex digits manifests record. */
export function crcHex(crc: number): string {
  return (crc >>> 0).toString(16).padStart(8, "0");
}

/** CRC-32 (as 8 hex digits) and size of a file, read in chunks. */
export function fileChecksum(path: string): { bytes: number; crc32: string } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(Math.min(size, 8 << 20) || 1);
    let crc = 0;
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, size - at), at);
      if (n === 0) throw new Error(`${path}: shrank while being read`);
      crc = crc32(buf.subarray(0, n), crc);
      at += n;
    }
    return { bytes: size, crc32: crcHex(crc) };
  } finally {
    closeSync(fd);
  }
}

/** Lists every file of index directory `dir` (but the manifest) with its size and CRC-32 in its manifest. */
export function sealIndex(dir: string): IndexManifest {
  const m = readManifest(dir);
  const files: IndexFile[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === MANIFEST_FILE || !statSync(join(dir, name)).isFile()) continue;
    files.push({ name, ...fileChecksum(join(dir, name)) });
  }
  const path = join(dir, MANIFEST_FILE);
  const sealed: IndexManifest = { ...m, files };
  writeFileSafe(path, `${JSON.stringify(sealed, null, 2)}\n`);
  return sealed;
}

/** Cheap check at open: every file the manifest lists exists with its recorded size (throws naming the file). */
export function checkIndexFiles(dir: string, m: IndexManifest): void {
  if (!m.files) return;
  for (const f of m.files) {
    const path = join(dir, f.name);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      throw new Error(`${path}: missing (manifest.json lists it)`);
    }
    if (size !== f.bytes) throw new Error(`${path}: ${size} bytes, manifest.json says ${f.bytes} (${size < f.bytes ? "truncated" : "changed"}; rebuild the index)`);
  }
}

/**
 * Full check (`tartan index verify`): the directory holds exactly the files the manifest lists (an
 * extra file — a concurrent or killed build's leftover — is a problem too), each with its size and
 * CRC-32; returns the problems found, one per file.
 */
export function verifyIndex(dir: string, onFile?: (name: string) => void): { manifest: IndexManifest; problems: string[]; files: number; bytes: number } {
  const m = readManifest(dir);
  const problems: string[] = [];
  if (!m.files) return { manifest: m, problems: [`${join(dir, MANIFEST_FILE)}: lists no files with checksums (built before tartan recorded them; rebuild to verify)`], files: 0, bytes: 0 };
  let bytes = 0;
  for (const f of m.files) {
    onFile?.(f.name);
    const path = join(dir, f.name);
    if (!existsSync(path)) {
      problems.push(`${path}: missing`);
      continue;
    }
    const c = fileChecksum(path);
    bytes += c.bytes;
    if (c.bytes !== f.bytes) problems.push(`${path}: ${c.bytes} bytes, manifest.json says ${f.bytes}`);
    else if (c.crc32 !== f.crc32) problems.push(`${path}: checksum ${c.crc32}, manifest.json says ${f.crc32} (corrupt)`);
  }
  const listed = new Set(m.files.map((f) => f.name));
  for (const name of readdirSync(dir).sort()) {
    if (name === MANIFEST_FILE || listed.has(name) || statSync(join(dir, name)).isDirectory()) continue;
    problems.push(`${join(dir, name)}: not listed in manifest.json (a stray file, e.g. from another build into the same directory; rebuild the index)`);
  }
  return { manifest: m, problems, files: m.files.length, bytes };
}
