// The entity alias file (`entity.aliases`, format version 2): what the entity retriever reads at open.
//
// Header (64 bytes): "TARTENTY" | u32 format version | u32 header bytes (64) | f64 file bytes |
//   f64 aliases | f64 units | 16-byte build id (the first 16 bytes of the body's SHA-256, repeated in
//   manifest.json as params.buildId) | 8 zero bytes.
// Body: one JSON line per alias, sorted by key (UTF-16 code-unit order, JavaScript's `<`), with no
//   duplicates: {"m": key, "c": [[unit, links], …]} with candidates by links descending, then unit
//   ascending. The body is byte for byte format 1's `aliases.jsonl`.
//
// Opening checks the header against the file (size, version) and the manifest (build id, units), then
// reads the body once, checking its SHA-256 and every line (JSON, shape, unit range, key order): a
// truncated, corrupt or mixed file is refused naming it, never loaded into wrong hits.

import { constants } from "node:buffer";
import { closeSync, fstatSync, openSync, writeSync } from "node:fs";
import { createHash, type Hash } from "node:crypto";
import { readExactly } from "../buffered-file.js";
import { commitTemp, createTempFor, discardTemp, type TempFile } from "../../util/safe-output.js";

export const ENTITY_FORMAT_VERSION = 2;
export const ALIASES_FILE = "entity.aliases";
export const ALIASES_MAGIC = "TARTENTY";
export const ALIASES_HEADER_BYTES = 64;

/** One alias: a mention key and its candidate units with link counts (count desc, unit asc). */
export interface AliasLine {
  m: string;
  c: [number, number][];
}

function header(fileBytes: number, aliases: number, units: number, buildId: string): Buffer {
  const h = Buffer.alloc(ALIASES_HEADER_BYTES);
  h.write(ALIASES_MAGIC, 0, "latin1");
  h.writeUInt32LE(ENTITY_FORMAT_VERSION, 8);
  h.writeUInt32LE(ALIASES_HEADER_BYTES, 12);
  h.writeDoubleLE(fileBytes, 16);
  h.writeDoubleLE(aliases, 24);
  h.writeDoubleLE(units, 32);
  Buffer.from(buildId, "hex").copy(h, 40);
  return h;
}

/** Writes an alias file through an exclusive temporary name; `close()` fills in the header and renames it. */
export class AliasFileWriter {
  private readonly temp: TempFile;
  private readonly hash: Hash = createHash("sha256");
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  private bytes = ALIASES_HEADER_BYTES;
  aliases = 0;

  constructor(
    readonly path: string,
    private readonly units: number,
  ) {
    this.temp = createTempFor(path, () => {});
    writeSync(this.temp.fd, Buffer.alloc(ALIASES_HEADER_BYTES));
  }

  private flush(): void {
    const chunk = this.buf.subarray(0, this.used);
    this.hash.update(chunk);
    let at = 0;
    while (at < chunk.length) at += writeSync(this.temp.fd, chunk, at, chunk.length - at);
    this.used = 0;
  }

  /** Appends one alias (keys must come in increasing order). */
  add(line: AliasLine): void {
    const text = `${JSON.stringify(line)}\n`;
    const max = text.length * 3;
    if (this.used + max > this.buf.length) {
      this.flush();
      if (max > this.buf.length) this.buf = Buffer.allocUnsafe(max);
    }
    const n = this.buf.write(text, this.used, "utf8");
    this.used += n;
    this.bytes += n;
    this.aliases++;
  }

  /** Finishes the file: header with size, counts and build id, then the rename. */
  close(): { bytes: number; aliases: number; buildId: string } {
    let buildId: string;
    try {
      this.flush();
      buildId = this.hash.digest("hex").slice(0, 32);
      const h = header(this.bytes, this.aliases, this.units, buildId);
      writeSync(this.temp.fd, h, 0, h.length, 0);
      closeSync(this.temp.fd);
    } catch (e) {
      discardTemp(this.temp);
      throw e;
    }
    commitTemp(this.temp, this.path);
    return { bytes: this.bytes, aliases: this.aliases, buildId };
  }

  /** Drops the unfinished file. */
  abort(): void {
    discardTemp(this.temp, this.temp.fd);
  }
}

/**
 * Reads and checks the alias file `path` of an index with `units` units and build id `buildId` (from its
 * manifest), calling `onAlias` for each alias in key order with its number; returns the body and the
 * byte offset of each line in it (one more than there are aliases). Throws naming the file on any mismatch.
 */
export function readAliasFile(path: string, expect: { units: number; buildId: unknown }, onAlias?: (line: AliasLine, index: number) => void): { body: Buffer; starts: Float64Array } {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    throw new Error(`${path}: missing (${(e as Error).message})`);
  }
  try {
    const size = fstatSync(fd).size;
    if (size < ALIASES_HEADER_BYTES) throw new Error(`${path}: truncated (${size} bytes, less than its ${ALIASES_HEADER_BYTES}-byte header)`);
    const h = Buffer.alloc(ALIASES_HEADER_BYTES);
    readExactly(fd, h, 0, ALIASES_HEADER_BYTES, 0, path);
    if (h.toString("latin1", 0, 8) !== ALIASES_MAGIC) throw new Error(`${path}: not a tartan entity alias file (bad magic)`);
    const version = h.readUInt32LE(8);
    if (version !== ENTITY_FORMAT_VERSION) throw new Error(`${path}: entity alias format ${version}, this tartan reads ${ENTITY_FORMAT_VERSION} (rebuild the index)`);
    if (h.readUInt32LE(12) !== ALIASES_HEADER_BYTES) throw new Error(`${path}: bad header length ${h.readUInt32LE(12)} (corrupt)`);
    const fileBytes = h.readDoubleLE(16);
    if (fileBytes !== size) throw new Error(`${path}: ${size} bytes, its header says ${fileBytes} (${size < fileBytes ? "truncated" : "changed"}; rebuild the index)`);
    const aliases = h.readDoubleLE(24);
    const units = h.readDoubleLE(32);
    const id = h.toString("hex", 40, 56);
    if (id !== expect.buildId) throw new Error(`${path}: from another build (build id ${id}, manifest.json says ${String(expect.buildId)})`);
    if (units !== expect.units) throw new Error(`${path}: written for ${units} units, manifest.json says ${expect.units} (from another build)`);
    // The shortest line, {"m":"x","c":[[0,1]]}, is 22 bytes.
    if (!Number.isInteger(aliases) || aliases < 0 || aliases * 22 > size - ALIASES_HEADER_BYTES) throw new Error(`${path}: ${aliases} aliases in ${size} bytes (corrupt; rebuild the index)`);
    if (size - ALIASES_HEADER_BYTES > constants.MAX_LENGTH) throw new Error(`${path}: ${size} bytes, more than this Node.js can hold in one buffer`);

    const body = Buffer.allocUnsafe(size - ALIASES_HEADER_BYTES);
    readExactly(fd, body, 0, body.length, ALIASES_HEADER_BYTES, path);
    if (createHash("sha256").update(body).digest("hex").slice(0, 32) !== id) throw new Error(`${path}: contents differ from its checksum (corrupt; rebuild the index)`);
    const starts = new Float64Array(aliases + 1);
    let n = 0;
    let prev: string | null = null;
    const bad = (why: string): Error => new Error(`${path}: alias ${n + 1}: ${why} (corrupt; rebuild the index)`);
    let start = 0;
    for (let nl = body.indexOf(10, start); start < body.length; nl = body.indexOf(10, start)) {
      if (nl < 0) throw bad("the last line has no newline");
      if (n === aliases) throw new Error(`${path}: more aliases than its header's ${aliases} (corrupt; rebuild the index)`);
      let v: unknown;
      try {
        v = JSON.parse(body.toString("utf8", start, nl));
      } catch {
        throw bad("not valid JSON");
      }
      const a = v as AliasLine;
      if (a === null || typeof a !== "object" || typeof a.m !== "string" || !Array.isArray(a.c) || a.c.length === 0) throw bad('not {"m": key, "c": [[unit, links], …]}');
      // The retriever reads keys straight from the lines: each must start as the writer starts it.
      const head = `{"m":${JSON.stringify(a.m)},"c":`;
      if (body.toString("utf8", start, Math.min(nl, start + Buffer.byteLength(head))) !== head) throw bad(`does not start ${head}`);
      if (prev !== null && !(prev < a.m)) throw bad("keys out of order");
      for (const p of a.c) {
        if (!Array.isArray(p) || p.length !== 2 || !Number.isInteger(p[0]) || p[0] < 0 || p[0] >= units || typeof p[1] !== "number" || !(p[1] > 0) || !Number.isFinite(p[1])) throw bad(`bad candidate ${JSON.stringify(p)} (units 0..${units - 1})`);
      }
      prev = a.m;
      starts[n] = start;
      onAlias?.(a, n);
      n++;
      start = nl + 1;
    }
    if (n !== aliases) throw new Error(`${path}: ${n} aliases, its header says ${aliases} (corrupt; rebuild the index)`);
    starts[n] = body.length;
    return { body, starts };
  } finally {
    closeSync(fd);
  }
}
