// `tartan index pull FILE|URL|NAME --out DIR`: a packed artefact into a directory. A URL is downloaded
// resumably (beside DIR, through a .part file); the archive's sha256 is checked when it is known (given
// or from the catalogue); its manifest is checked against the versions this tartan reads; every file
// is unpacked into a fresh temporary directory beside DIR and checked (type, name, size, sha256), and
// only when all of them match, and an index also verifies, is the directory renamed into place.
// Links, paths escaping DIR, entries the manifest does not list and truncated archives are refused,
// naming what is wrong. A downloaded archive that is kept (--keep-archive) has its URL and sha256
// recorded beside it and is used again only for that URL and checksum. The temporary directories of a
// pull that was killed are removed by the next pull (or `tartan index verify`) once their process is gone.

import { constants, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { downloadFile, localSource, sha256File, type DownloadOptions } from "../util/download.js";
import { readManifest, verifyIndex } from "../retrieval/manifest.js";
import { ARTEFACT_MANIFEST, checkArtefactManifest, checkEntryPath, type ArtefactManifest } from "./manifest.js";
import { TarReader, writeAll } from "./tar.js";
import { alive, makeDirs, writeFileSafe } from "../util/safe-output.js";

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
  archive: { path: string; sha256?: string; downloaded: boolean; resumedFrom: number; redirectedTo?: string };
}

/** Where a downloaded archive for `out` is kept while it downloads. */
export function archiveCachePath(out: string): string {
  return join(dirname(out), `.${basename(out)}.artefact.tar`);
}

/** Where the URL and sha256 a kept archive was downloaded for are recorded. */
export function archiveRecordPath(out: string): string {
  return `${archiveCachePath(out)}.json`;
}

function readArchiveRecord(out: string): { url: string; sha256: string } | null {
  try {
    if (!lstatSync(archiveRecordPath(out)).isFile()) return null;
    const r = JSON.parse(readFileSync(archiveRecordPath(out), "utf8")) as { url?: unknown; sha256?: unknown };
    return typeof r.url === "string" && typeof r.sha256 === "string" ? { url: r.url, sha256: r.sha256 } : null;
  } catch {
    return null;
  }
}

function removeArchive(out: string): void {
  rmSync(archiveCachePath(out), { force: true });
  rmSync(archiveRecordPath(out), { force: true });
}

/**
 * Removes what pulls into `out` that were killed left beside it, once their process is gone: their
 * temporary directories (`.DIR.pulling-PID`), and a replaced directory (`.DIR.old-PID`), which is put
 * back as DIR when the pull was killed between its two renames (DIR missing). Returns what it did,
 * one line each.
 */
export function cleanStalePulls(out: string): string[] {
  const parent = dirname(out) || ".";
  const base = basename(out);
  const said: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return said;
  }
  const stale = (name: string, kind: string) => {
    const prefix = `.${base}.${kind}-`;
    const pid = name.startsWith(prefix) ? name.slice(prefix.length) : "";
    return /^\d+$/u.test(pid) && Number(pid) !== process.pid && !alive(Number(pid));
  };
  for (const name of names) {
    const path = join(parent, name);
    if (stale(name, "old") && lstatSync(out, { throwIfNoEntry: false }) === undefined && lstatSync(path).isDirectory()) {
      renameSync(path, out);
      said.push(`${out}: put back from ${path}, left by a pull that was killed while replacing it`);
    }
  }
  for (const name of names) {
    const path = join(parent, name);
    if (!stale(name, "pulling") && !stale(name, "old")) continue;
    if (lstatSync(path, { throwIfNoEntry: false }) === undefined) continue; // put back above
    rmSync(path, { recursive: true, force: true }); // a link is removed itself, never followed
    said.push(`removed ${path}, left by a pull that was killed`);
  }
  return said;
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
  for (const line of cleanStalePulls(out)) options.log?.(line);
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
  let redirectedTo: string | undefined;
  if (archive === null) {
    archive = archiveCachePath(out);
    // a kept archive stands only for the URL and checksum it was downloaded for
    const kept = lstatSync(archive, { throwIfNoEntry: false });
    if (kept?.isFile()) {
      const rec = readArchiveRecord(out);
      const why =
        rec === null
          ? "no record of where it came from"
          : rec.url !== source
            ? `it was downloaded from ${rec.url}`
            : expect !== undefined && rec.sha256 !== expect
              ? `its sha256 is ${rec.sha256}, expected ${expect}`
              : null;
      if (why !== null) {
        removeArchive(out);
        options.log?.(`${archive}: kept archive removed (${why}), downloading ${source}`);
      }
    }
    const dl: DownloadOptions = {
      sha256: expect,
      bytes: options.bytes,
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      format: "tar",
      log: options.log,
      onProgress: options.onProgress ? (d, t, s) => options.onProgress!("download", d, t, s) : undefined,
    };
    const r = await downloadFile(source, archive, dl);
    downloaded = !r.present;
    resumedFrom = r.resumedFrom;
    redirectedTo = r.redirectedTo;
    sha = r.sha256;
    if (downloaded) writeFileSafe(archiveRecordPath(out), `${JSON.stringify({ url: source, sha256: sha })}\n`);
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
    if (cached) removeArchive(out);
    throw new Error(`${archive}: ${(e as Error).message}${cached ? ` (${archive} removed)` : ""}`);
  }
  if (outStat) {
    const old = join(dirname(out), `.${basename(out)}.old-${process.pid}`);
    renameSync(out, old);
    renameSync(tmp, out);
    rmSync(old, { recursive: true, force: true });
  } else renameSync(tmp, out);
  if (archive === archiveCachePath(out) && !options.keepArchive) removeArchive(out);
  return { dir: out, manifest: result.manifest, files: result.manifest.files.length, bytes: result.bytes, archive: { path: archive, sha256: sha, downloaded, resumedFrom, ...(redirectedTo ? { redirectedTo } : {}) } };
}
