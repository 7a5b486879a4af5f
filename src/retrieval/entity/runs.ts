// Sorted run files of the entity build (./build.ts): records spilled in sorted order when the memory
// budget is reached, read back through a bounded buffer, and merged k ways with a heap (in cascades when
// there are more runs than a merge may open at once). A run is a build temporary inside the build
// directory, written through an exclusive temporary name (util/safe-output.ts) and renamed when complete.
//
// Run file: "TENTRUN1", then the records back to back. A number is a varint (7 bits a byte, low first;
// values < 2^53); a string is varint(byte length × 2 + utf16) then its bytes: UTF-8, or UTF-16LE for a
// string with lone surrogates (so every string reads back exactly as it was written).

import { closeSync, fstatSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { commitTemp, createTempFor, discardTemp, type TempFile } from "../../util/safe-output.js";

const RUN_MAGIC = Buffer.from("TENTRUN1", "latin1");

const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Appends records to a new run file through a buffer; `close()` renames it into place. */
export class RunWriter {
  private readonly temp: TempFile;
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  /** Bytes written so far. */
  bytes = 0;
  records = 0;

  constructor(readonly path: string) {
    this.temp = createTempFor(path, () => {});
    this.raw(RUN_MAGIC);
  }

  private room(n: number): void {
    if (this.used + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private flush(): void {
    let at = 0;
    while (at < this.used) at += writeSync(this.temp.fd, this.buf, at, this.used - at);
    this.used = 0;
  }

  private raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.used);
    this.used += bytes.length;
    this.bytes += bytes.length;
  }

  varint(n: number): void {
    this.room(8);
    const start = this.used;
    while (n >= 0x80) {
      this.buf[this.used++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.buf[this.used++] = n;
    this.bytes += this.used - start;
  }

  str(s: string): void {
    const utf16 = !isWellFormed(s);
    const bytes = Buffer.from(s, utf16 ? "utf16le" : "utf8");
    this.varint(bytes.length * 2 + (utf16 ? 1 : 0));
    this.raw(bytes);
  }

  /** Flushes and moves the run into place; returns its size in bytes. */
  close(): number {
    try {
      this.flush();
      closeSync(this.temp.fd);
    } catch (e) {
      discardTemp(this.temp);
      throw e;
    }
    commitTemp(this.temp, this.path);
    return this.bytes;
  }

  /** Drops the unfinished run. */
  abort(): void {
    discardTemp(this.temp, this.temp.fd);
  }
}

/** Reads a run file's records in order through a buffer of about `chunk` bytes. */
export class RunReader {
  private readonly fd: number;
  private readonly size: number;
  private buf: Buffer;
  private pos = 0;
  private end = 0;
  private at = 0;

  constructor(
    readonly path: string,
    chunk = 1 << 20,
  ) {
    this.fd = openSync(path, "r");
    this.size = fstatSync(this.fd).size;
    this.buf = Buffer.allocUnsafe(Math.max(64, chunk));
    this.need(RUN_MAGIC.length);
    if (!this.buf.subarray(0, RUN_MAGIC.length).equals(RUN_MAGIC)) throw new Error(`${path}: not an entity build run`);
    this.pos += RUN_MAGIC.length;
  }

  /** True when every record has been read. */
  get done(): boolean {
    return this.pos === this.end && this.at === this.size;
  }

  /** Makes `n` bytes available at `pos`, or throws naming the file (a run is never cut short when whole). */
  private need(n: number): void {
    if (this.end - this.pos >= n) return;
    this.buf.copy(this.buf, 0, this.pos, this.end);
    this.end -= this.pos;
    this.pos = 0;
    if (n > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
      this.buf.copy(bigger, 0, 0, this.end);
      this.buf = bigger;
    }
    while (this.end < this.buf.length && this.at < this.size) {
      const got = readSync(this.fd, this.buf, this.end, Math.min(this.buf.length - this.end, this.size - this.at), this.at);
      if (got === 0) break;
      this.end += got;
      this.at += got;
    }
    if (this.end - this.pos < n) throw new Error(`${this.path}: truncated entity build run (delete the build directory and rebuild)`);
  }

  varint(): number {
    this.need(Math.min(8, this.end - this.pos + this.size - this.at));
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      if (this.pos >= this.end) this.need(1);
      const b = this.buf[this.pos++];
      n += (b & 0x7f) * scale;
      if (b < 0x80) return n;
      scale *= 0x80;
    }
    throw new Error(`${this.path}: bad number in entity build run (corrupt)`);
  }

  str(): string {
    const head = this.varint();
    const len = Math.floor(head / 2);
    this.need(len);
    const s = this.buf.toString(head % 2 === 1 ? "utf16le" : "utf8", this.pos, this.pos + len);
    this.pos += len;
    return s;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** How one kind of record is written, read and ordered. */
export interface RunCodec<T> {
  write(w: RunWriter, r: T): void;
  read(r: RunReader): T;
  compare(a: T, b: T): number;
}

/** Writes `records` (already in `codec` order) as the run `path`; returns its size. */
export function writeRun<T>(path: string, codec: RunCodec<T>, records: Iterable<T>): number {
  const w = new RunWriter(path);
  try {
    for (const r of records) {
      codec.write(w, r);
      w.records++;
    }
  } catch (e) {
    w.abort();
    throw e;
  }
  return w.close();
}

/** The records of all `paths`, merged in `codec` order (equal records in path order). */
export function* mergeRuns<T>(paths: readonly string[], codec: RunCodec<T>, chunk: number): Generator<T> {
  const readers: RunReader[] = [];
  try {
    for (const p of paths) readers.push(new RunReader(p, chunk));
    // A binary heap of reader indexes by their current record (ties: lower index first).
    const head: (T | undefined)[] = readers.map((r) => (r.done ? undefined : codec.read(r)));
    const heap: number[] = [];
    const less = (a: number, b: number) => {
      const c = codec.compare(head[a]!, head[b]!);
      return c < 0 || (c === 0 && a < b);
    };
    const down = (i: number) => {
      for (;;) {
        const l = 2 * i + 1;
        if (l >= heap.length) return;
        const m = l + 1 < heap.length && less(heap[l + 1], heap[l]) ? l + 1 : l;
        if (!less(heap[m], heap[i])) return;
        [heap[i], heap[m]] = [heap[m], heap[i]];
        i = m;
      }
    };
    for (let i = 0; i < readers.length; i++) if (head[i] !== undefined) heap.push(i);
    for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
    while (heap.length > 0) {
      const top = heap[0];
      const rec = head[top]!;
      const r = readers[top];
      if (r.done) {
        head[top] = undefined;
        heap[0] = heap[heap.length - 1];
        heap.pop();
      } else head[top] = codec.read(r);
      if (heap.length > 0) down(0);
      yield rec;
    }
  } finally {
    for (const r of readers) r.close();
  }
}

/**
 * Reduces `paths` to at most `fanIn` runs by merging groups of them into new runs named by `name(i)`
 * (inputs listed in `keep` are left on disk, the other inputs are deleted once merged); returns the runs left.
 */
export function cascadeRuns<T>(paths: readonly string[], codec: RunCodec<T>, fanIn: number, chunk: number, name: (i: number) => string, keep: ReadonlySet<string>): string[] {
  let runs = [...paths];
  let made = 0;
  while (runs.length > fanIn) {
    const next: string[] = [];
    for (let i = 0; i < runs.length; i += fanIn) {
      const group = runs.slice(i, i + fanIn);
      if (group.length === 1) {
        next.push(group[0]);
        continue;
      }
      const out = name(made++);
      writeRun(out, codec, mergeRuns(group, codec, chunk));
      for (const g of group) if (!keep.has(g)) rmSync(g, { force: true });
      next.push(out);
    }
    runs = next;
  }
  return runs;
}
