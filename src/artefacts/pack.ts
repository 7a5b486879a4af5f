// `tartan index pack DIR --out FILE`: an index directory (any kind) or a knowledge-source store as one
// tar archive whose first entry is the manifest (tartan-artefact.json: what it holds, the versions that
// built it, every file's size and sha256). The directory is checked first (an index must verify, a
// store must be complete and not in use); links and other non-regular files are refused, never
// followed; each file is hashed, then written and hashed again (a file that changes in between stops
// the pack); the archive is written through a temporary file renamed into place, never inside DIR.

import { closeSync, createReadStream, lstatSync, readdirSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, relative, resolve, sep } from "node:path";
import { MANIFEST_FILE, TARTAN_VERSION, readManifest, verifyIndex } from "../retrieval/manifest.js";
import { readStoreInfo } from "../knowledge/store.js";
import { STORE_FILE } from "../knowledge/format.js";
import { commitTemp, createTempFor, discardTemp } from "../util/safe-output.js";
import { ARTEFACT_FORMAT_VERSION, ARTEFACT_MANIFEST, READABLE_STORE_FORMAT, type ArtefactFile, type ArtefactManifest } from "./manifest.js";
import { TAR_END, tarHeader, tarPadding, writeAll } from "./tar.js";

/** Options of {@link packArtefact}. */
export interface PackOptions {
  out: string;
  /** Called with the file bytes written so far, their total and the files done. */
  onProgress?: (done: number, total: number, files: number) => void;
  /** Called with each line worth telling the user (what is packed, notes). */
  log?: (line: string) => void;
}

/** What {@link packArtefact} wrote. */
export interface PackResult {
  file: string;
  bytes: number;
  sha256: string;
  manifest: ArtefactManifest;
}

/** Every regular file under `dir` (relative "/" paths, sorted); throws naming a link or special file. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const st = lstatSync(path);
      if (st.isSymbolicLink()) throw new Error(`${path}: a symbolic link inside the directory: refusing to pack it (links are never followed)`);
      if (st.isDirectory()) walk(path);
      else if (st.isFile()) out.push(relative(dir, path).split(sep).join("/"));
      else throw new Error(`${path}: not a regular file: refusing to pack it`);
    }
  };
  walk(dir);
  return out;
}

async function sha256Of(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/** What `dir` holds, checked: an index that verifies, or a complete store not in use. */
function describe(dir: string, files: string[]): Pick<ArtefactManifest, "kind" | "index" | "store"> & { skip: Set<string>; indexTartan?: string } {
  const skip = new Set<string>();
  if (files.includes(MANIFEST_FILE)) {
    const m = readManifest(dir);
    // a sealed index (its files' checksums in manifest.json) must verify; an unsealed one (built by the
    // library without sealIndex) is packed as it is: the archive's manifest holds its files' sha256 anyway
    if (m.files) {
      const v = verifyIndex(dir);
      if (v.problems.length > 0) throw new Error(`${dir}: the index does not verify, refusing to pack it: ${v.problems.join("; ")}`);
    }
    return { kind: "index", index: { kind: m.kind, unit: m.unit, units: m.units, formatVersion: m.formatVersion }, skip, indexTartan: m.tartanVersion };
  }
  if (files.includes(STORE_FILE)) {
    for (const f of files) {
      if (!/-(journal|wal|shm)$/u.test(f)) continue;
      if (lstatSync(join(dir, f)).size > 0) throw new Error(`${join(dir, f)}: the store is in use or was not closed cleanly (non-empty ${f}): open it once with tartan ks stats, then pack`);
      skip.add(f); // an empty journal carries nothing
    }
    const info = readStoreInfo(dir);
    if (info.complete !== 1) throw new Error(`${dir}: the ingest is not complete (stopped after line ${info.checkpoint_line}): finish it before packing`);
    if (info.format !== READABLE_STORE_FORMAT) throw new Error(`${dir}: store format ${String(info.format)}, this tartan reads ${READABLE_STORE_FORMAT}`);
    return { kind: "knowledge-source", store: { format: String(info.format), pages: info.pages }, skip };
  }
  throw new Error(`${dir}: neither an index directory (no ${MANIFEST_FILE}) nor a knowledge-source store (no ${STORE_FILE})`);
}

/** Packs `dir` into `options.out` (see the module comment); returns the archive's size and sha256 and its manifest. */
export async function packArtefact(dir: string, options: PackOptions): Promise<PackResult> {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st) throw new Error(`${dir}: no such directory`);
  if (st.isSymbolicLink()) throw new Error(`${dir}: a symbolic link: give the directory itself`);
  if (!st.isDirectory()) throw new Error(`${dir}: not a directory`);
  const absDir = resolve(dir);
  const absOut = resolve(options.out);
  if (absOut === absDir || absOut.startsWith(absDir + sep)) throw new Error(`${options.out}: inside ${dir}, the directory being packed: choose another output path`);
  const all = listFiles(dir);
  const what = describe(dir, all);
  const names = all.filter((f) => !what.skip.has(f));
  const files: ArtefactFile[] = [];
  for (const path of names) files.push({ path, bytes: lstatSync(join(dir, path)).size, sha256: await sha256Of(join(dir, path)) });
  const manifest: ArtefactManifest = {
    format: "tartan-artefact",
    formatVersion: ARTEFACT_FORMAT_VERSION,
    kind: what.kind,
    ...(what.index ? { index: what.index } : {}),
    ...(what.store ? { store: what.store } : {}),
    builtBy: { tartan: TARTAN_VERSION, node: process.version, ...(what.indexTartan ? { indexTartan: what.indexTartan } : {}) },
    created: new Date().toISOString(),
    files,
  };
  const total = files.reduce((s, f) => s + f.bytes, 0);
  const temp = createTempFor(options.out, options.log);
  const whole = createHash("sha256");
  let written = 0;
  const put = (buf: Buffer) => {
    writeAll(temp.fd, buf);
    whole.update(buf);
    written += buf.length;
  };
  try {
    const json = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
    put(tarHeader(ARTEFACT_MANIFEST, json.length));
    put(json);
    put(tarPadding(json.length));
    let done = 0;
    for (const [index, f] of files.entries()) {
      const path = join(dir, f.path);
      put(tarHeader(f.path, f.bytes));
      const h = createHash("sha256");
      let n = 0;
      for await (const chunk of createReadStream(path)) {
        const b = chunk as Buffer;
        n += b.length;
        if (n > f.bytes) break;
        h.update(b);
        put(b);
        done += b.length;
        options.onProgress?.(done, total, index);
      }
      if (n !== f.bytes || h.digest("hex") !== f.sha256) throw new Error(`${path}: changed while being packed (is something writing to ${dir}?)`);
      put(tarPadding(f.bytes));
    }
    put(TAR_END);
    closeSync(temp.fd);
    commitTemp(temp, options.out);
  } catch (e) {
    discardTemp(temp, temp.fd);
    throw e;
  }
  return { file: options.out, bytes: written, sha256: whole.digest("hex"), manifest };
}

