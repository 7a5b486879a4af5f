// The JSONL reader on hostile input: a line longer than the limit (also inside a gzip bomb) stops with
// file:line, a line spread over many gzip chunks is assembled whole, FIFOs and character devices are
// refused (standard input is `-`), invalid UTF-8 names its line and byte offset, corrupt gzip names the file.

import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { invalidUtf8At, LineError, readJsonl, readJsonlAll, scanJsonl } from "../../src/records/jsonl.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-hostile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function drain(file: string, options: Parameters<typeof readJsonl>[1] = {}): Promise<number> {
  let n = 0;
  for await (const _ of readJsonl(file, options)) n++;
  return n;
}

describe("line length", () => {
  it("assembles a 3 MB line spread over many gzip chunks, and stops a longer line than --max-line-bytes with file:line", async () => {
    const text = "x".repeat(3_000_000);
    const file = join(dir, "long.jsonl.gz");
    writeFileSync(file, gzipSync(`{"id":1}\n{"id":2,"t":"${text}"}\n{"id":3}\n`));
    const all = await readJsonlAll<{ id: number; t?: string }>(file);
    expect(all.map((r) => r.id)).toEqual([1, 2, 3]);
    expect(all[1].t?.length).toBe(3_000_000);
    await expect(drain(file, { maxLineBytes: 1_000_000 })).rejects.toThrow(`${file}:2: line longer than 1000000 bytes`);
  });

  it("bounds a gzip bomb: 64 MiB of zeros without a newline stops at the limit", async () => {
    const file = join(dir, "bomb.jsonl.gz");
    writeFileSync(file, gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 }));
    const err = await drain(file, { maxLineBytes: 4 * 1024 * 1024 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LineError);
    expect(String((err as Error).message)).toBe(`${file}:1: line longer than 4194304 bytes (raise --max-line-bytes to read it)`);
  });
});

describe("what is not a regular file", () => {
  it("refuses a FIFO and a character device instead of blocking", async () => {
    const fifo = join(dir, "fifo.jsonl");
    execFileSync("mkfifo", [fifo]);
    await expect(drain(fifo)).rejects.toThrow(`${fifo}: a FIFO, not a regular file (give standard input as -)`);
    await expect(scanJsonl("/dev/zero", () => {})).rejects.toThrow("/dev/zero: a character device, not a regular file");
  });
});

describe("invalid UTF-8", () => {
  it("locates the first invalid byte", () => {
    expect(invalidUtf8At(Buffer.from("caf\u00e9 \ud83d\ude00"), 0, 10)).toBe(-1);
    expect(invalidUtf8At(Buffer.from([0x61, 0x62, 0xff, 0x63]), 0, 4)).toBe(2);
    expect(invalidUtf8At(Buffer.from([0x61, 0xc3]), 0, 2)).toBe(1); // truncated sequence
    expect(invalidUtf8At(Buffer.from([0xed, 0xa0, 0x80]), 0, 3)).toBe(0); // an encoded surrogate
    expect(invalidUtf8At(Buffer.from([0xc0, 0xaf]), 0, 2)).toBe(0); // overlong
  });

  it("is a malformed line named by line and byte offset (or a callback's business)", async () => {
    const file = join(dir, "latin1.jsonl");
    writeFileSync(file, Buffer.concat([Buffer.from('{"id":"a"}\n{"id":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n{"id":"c"}\n')]));
    await expect(drain(file)).rejects.toThrow(`${file}:2: invalid UTF-8 at byte 21 of the file (byte 10 of the line)`);
    const seen: string[] = [];
    const ids: string[] = [];
    for await (const { value } of readJsonl<{ id: string }>(file, { onInvalidUtf8: (e) => seen.push(e.message) })) ids.push(value.id);
    expect(ids).toEqual(["a", "caf\ufffd", "c"]);
    expect(seen).toEqual([`${file}:2: invalid UTF-8 at byte 21 of the file (byte 10 of the line)`]);
  });
});

describe("corrupt gzip", () => {
  it("names the file", async () => {
    const file = join(dir, "cut.jsonl.gz");
    const gz = gzipSync(Buffer.from('{"id":1}\n'.repeat(10_000)));
    writeFileSync(file, gz.subarray(0, gz.length >> 1));
    await expect(drain(file)).rejects.toThrow(`${file}: corrupt gzip data (unexpected end of file)`);
    writeFileSync(file, Buffer.from("not gzip at all\n"));
    await expect(drain(file)).rejects.toThrow(`${file}: corrupt gzip data (incorrect header check)`);
  });
});
