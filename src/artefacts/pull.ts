// `tartan index pull FILE|URL|NAME --out DIR`: a packed artefact into a directory. A URL is downloaded
// resumably (beside DIR, through a .part file); the archive's sha256 is checked when it is known (given
// or from the catalogue); its manifest is checked against the versions this tartan reads; every file
// is unpacked into a fresh temporary directory beside DIR and checked (type, name, size, sha256), and
// only when all of them match, and an index also verifies, is the directory renamed into place.
// Links, paths escaping DIR, entries the manifest does not list and truncated archives are refused,
// naming what is wrong.

import { constants, closeSync, existsSync, lstatSync, mkdirSync, openSync, renameSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { downloadFile, localSource, sha256File, type DownloadOptions } from "../util/download.js";
import { readManifest, verifyIndex } from "../retrieval/manifest.js";
import { ARTEFACT_MANIFEST, checkArtefactManifest, checkEntryPath, type ArtefactManifest } from "./manifest.js";
import { TarReader, writeAll } from "./tar.js";
import { makeDirs } from "../util/safe-output.js";

/** Options of {@link pullArtefact}. */
export interface PullOptions {
  out: string;
  /** Expected sha256 of the archive. */
  sha256?: string;
  /** Expected size of the archive. */
  bytes?: number;
  /** Replace an existing DIR (default: refuse). */
  force?: boolean;
  /** Keep a downloaded archive (default: removed once unpacked). */
  keepArchive?: boolean;
  /** Download retries (see downloadFile). */
  retries?: number;
  retryDelayMs?: number;
  /** Progress: the phase ("download", "unpack"), bytes done and the total when known. */
  onProgress?: (phase: "download" | "unpack", done: number, total: number | undefined, startBytes: number) => void;
  /** Called with each line worth telling the user (resumes, retries, notes). */
  log?: (line: string) => void;
}

/** What {@link pullArtefact} did. */
export interface PullResult {
  dir: string;
  manifest: ArtefactManifest;
  files: number;
  bytes: number;
  archive: { path: string; sha256?: string; downloaded: boolean; resumedFrom: number };
}

/** Where a downloaded archive for `out` is kept while it downloads. */
export function archiveCachePath(out: string): string {
  return join(dirname(out), `.${basename(out)}.artefact.tar`);
}

/** Reads the manifest entry, checks it, then unpacks and checks every file into `tmp` (a fresh directory). */
async function unpack(archive: string, tmp: string, onProgress?: (done: number, total: number) => void): Promise<{ manifest: ArtefactManifest; bytes: number }> {
  const reader = new TarReader(archive);
  try {
    const first = reader.next();
    if (first === null || first.name !== ARTEFACT_MANIFEST || first.type !== "0") throw new Error(`not a tartan artefact: the first entry is ${first ? JSON.stringify(first.name) : "missing"}, not ${ARTEFACT_MANIFEST}`);
    if (first.size > 64 << 20) throw new Error(`${ARTEFACT_MANIFEST} is ${first.size} bytes: refused`);
    const parts: Buffer[] = [];
    reader.read(first, (c) => parts.push(Buffer.from(c)));
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(parts).toString("utf8"));
    } catch (e) {
      throw new Error(`${ARTEFACT_MANIFEST}: not valid JSON (${(e as Error).message})`);
    }
    const manifest = await checkArtefactManifest(parsed, ""); // the caller prefixes the archive
    const seen = new Set<string>();
    for (const f of manifest.files) {
      checkEntryPath(f.path, `${ARTEFACT_MANIFEST}`);
      if (f.path === ARTEFACT_MANIFEST || seen.has(f.path)) throw new Error(`${ARTEFACT_MANIFEST}: ${f.path} listed twice`);
      seen.add(f.path);
    }
    const total = manifest.files.reduce((s, f) => s + f.bytes, 0);
    mkdirSync(tmp);
    let done = 0;
    for (const [i, f] of manifest.files.entries()) {
      const e = reader.next();
      if (e === null) {
        const missing = manifest.files.slice(i).map((x) => x.path);
        throw new Error(`truncated: the archive ends before ${missing.slice(0, 3).join(", ")}${missing.length > 3 ? ` and ${missing.length - 3} more` : ""}`);
      }
      if (e.type === "2" || e.type === "1") throw new Error(`entry ${JSON.stringify(e.name)} is a ${e.type === "2" ? "symbolic" : "hard"} link to ${JSON.stringify(e.linkName)}: refused`);
      if (e.type !== "0") throw new Error(`entry ${JSON.stringify(e.name)} is not a regular file (tar type ${JSON.stringify(e.type)}): refused`);
      checkEntryPath(e.name, "the archive");
      if (e.name !== f.path) throw new Error(`tampered: entry ${JSON.stringify(e.name)} where the manifest lists ${JSON.stringify(f.path)}`);
      if (e.size !== f.bytes) throw new Error(`tampered: ${f.path} is ${e.size.toLocaleString("en-US")} bytes in the archive, the manifest says ${f.bytes.toLocaleString("en-US")}`);
      const path = join(tmp, ...f.path.split("/"));
      mkdirSync(dirname(path), { recursive: true });
      const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
      const h = createHash("sha256");
      try {
        reader.read(e, (chunk) => {
          h.update(chunk);
          writeAll(fd, chunk);
          done += chunk.length;
          onProgress?.(done, total);
        });
      } finally {
        closeSync(fd);
      }
      const got = h.digest("hex");
      if (got !== f.sha256) throw new Error(`tampered: ${f.path} has sha256 ${got}, the manifest says ${f.sha256}`);
    }
    const extra = reader.next();
    if (extra !== null) throw new Error(`entry ${JSON.stringify(extra.name)} is not in the manifest: refused`);
    if (manifest.kind === "index" && readManifest(tmp).files) {
      const v = verifyIndex(tmp);
      if (v.problems.length > 0) throw new Error(`the unpacked index does not verify: ${v.problems.join("; ")}`);
    }
    return { manifest, bytes: total };
  } finally {
    reader.close();
  }
}

/**
 * Pulls the artefact at `source` (a path, file:// URL or http(s) URL) into `options.out`; see the
 * module comment. Throws naming the archive and what is wrong; DIR is untouched on any failure.
 */
export async function pullArtefact(source: string, options: PullOptions): Promise<PullResult> {
  const out = options.out;
  const outStat = lstatSync(out, { throwIfNoEntry: false });
  if (outStat?.isSymbolicLink()) throw new Error(`${out}: a symbolic link: refusing to replace or follow it`);
  if (outStat && !options.force) throw new Error(`${out}: already exists: give --force to replace it (it is replaced only once the artefact is verified)`);
  if (outStat && !outStat.isDirectory()) throw new Error(`${out}: exists and is not a directory`);
  makeDirs(dirname(out) || ".");
  const expect = options.sha256?.toLowerCase();
  let archive = localSource(source);
  let downloaded = false;
  let resumedFrom = 0;
  let sha: string | undefined;
  if (archive === null) {
    archive = archiveCachePath(out);
    const dl: DownloadOptions = {
      sha256: expect,
      bytes: options.bytes,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      log: options.log,
      onProgress: options.onProgress ? (d, t, s) => options.onProgress!("download", d, t, s) : undefined,
    };
    const r = await downloadFile(source, archive, dl);
    downloaded = !r.present;
    resumedFrom = r.resumedFrom;
    sha = r.sha256;
  } else {
    if (!existsSync(archive)) throw new Error(`${archive}: no such file`);
    if (options.bytes !== undefined && lstatSync(archive).size !== options.bytes) throw new Error(`${archive}: ${lstatSync(archive).size.toLocaleString("en-US")} bytes, the catalogue says ${options.bytes.toLocaleString("en-US")} (truncated or a different archive)`);
    if (expect !== undefined) {
      sha = await sha256File(archive);
      if (sha !== expect) throw new Error(`${archive}: sha256 ${sha}, expected ${expect} (tampered, truncated or a different archive)`);
    }
  }
  const tmp = join(dirname(out), `.${basename(out)}.pulling-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  let result: { manifest: ArtefactManifest; bytes: number };
  try {
    result = await unpack(archive, tmp, options.onProgress ? (d, t) => options.onProgress!("unpack", d, t, 0) : undefined);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    // a downloaded archive that fails is removed, so the next pull downloads it again
    const cached = archive === archiveCachePath(out);
    if (cached) rmSync(archive, { force: true });
    throw new Error(`${archive}: ${(e as Error).message}${cached ? ` (${archive} removed)` : ""}`);
  }
  if (outStat) {
    const old = join(dirname(out), `.${basename(out)}.old-${process.pid}`);
    renameSync(out, old);
    renameSync(tmp, out);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(tmp, out);
  if (archive === archiveCachePath(out) && !options.keepArchive) rmSync(archive, { force: true });
  return { dir: out, manifest: result.manifest, files: result.manifest.files.length, bytes: result.bytes, archive: { path: archive, sha256: sha, downloaded, resumedFrom } };
}
