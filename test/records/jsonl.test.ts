// Tests for the streaming JSONL layer: round trips, the line rules (blank lines, CRLF, BOM, missing
// final newline), malformed lines reported as `file:line: reason`, and resuming from a byte offset.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import {
  JsonlWriter,
  LineError,
  readJsonl,
  readJsonlAll,
  scanJsonl,
  scanLines,
  writeJsonl,
  type JsonlItem,
} from "../../src/records/jsonl.js";

const SAMPLES = fileURLToPath(new URL("../../../shared/data/kilt-samples/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-jsonl-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tempFile(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

async function collect<T>(gen: AsyncIterable<JsonlItem<T>>): Promise<JsonlItem<T>[]> {
  const out: JsonlItem<T>[] = [];
  for await (const item of gen) out.push(item);
  return out;
}

/** The message JSON.parse gives for `text` on this Node version. */
function parseMessage(text: string): string {
  try {
    JSON.parse(text);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`${text} parses`);
}

const records = [
  { id: "a", input: "q1", output: [{ answer: "x" }] },
  { id: 2, input: "caf\u00e9 \u2234 \ud83d\ude00", output: [] },
  { id: "c", output: [{ provenance: [{ wikipedia_id: "1", start_paragraph_id: 1 }] }] },
];

describe("JsonlWriter and readJsonl", () => {
  it("round-trips a plain file and writes one line per value", async () => {
    const path = join(dir, "plain.jsonl");
    const w = new JsonlWriter(path);
    for (const r of records) await w.write(r);
    expect(existsSync(path)).toBe(false);
    await w.close();
    expect(existsSync(`${path}.partial`)).toBe(false);
    expect(w.count).toBe(3);
    const text = readFileSync(path, "utf8");
    expect(text).toBe(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const items = await collect(readJsonl(path));
    expect(items.map((i) => i.value)).toEqual(records);
    expect(items.map((i) => i.line)).toEqual([1, 2, 3]);
    const lineLengths = text.split("\n").slice(0, 3).map((l) => Buffer.byteLength(l) + 1);
    expect(items.map((i) => i.endByte)).toEqual([lineLengths[0], lineLengths[0] + lineLengths[1], Buffer.byteLength(text)]);
  });

  it("round-trips a .gz file, which is really gzip", async () => {
    const path = join(dir, "packed.jsonl.gz");
    expect(await writeJsonl(path, records)).toBe(3);
    const bytes = readFileSync(path);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(bytes).toString("utf8")).toBe(records.map((r) => `${JSON.stringify(r)}\n`).join(""));
    expect(await readJsonlAll(path)).toEqual(records);
    const items = await collect(readJsonl(path));
    expect(items.map((i) => i.line)).toEqual([1, 2, 3]);
  });

  it("abort leaves neither the partial file nor the final one", async () => {
    const path = join(dir, "aborted.jsonl");
    const w = new JsonlWriter(path);
    await w.write({ id: 1 });
    await w.abort();
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.partial`)).toBe(false);
  });

  it("writeJsonl removes the partial file when the values fail", async () => {
    const path = join(dir, "failing.jsonl");
    async function* values() {
      yield { id: 1 };
      throw new Error("source broke");
    }
    await expect(writeJsonl(path, values())).rejects.toThrow("source broke");
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.partial`)).toBe(false);
  });
});

describe("line rules", () => {
  it("reads the last line of a real file that lacks a final newline", async () => {
    const path = join(SAMPLES, "nq-dev-kilt.jsonl");
    const bytes = readFileSync(path);
    expect(bytes[bytes.length - 1]).not.toBe(0x0a);
    const items = await collect(readJsonl<{ id: string }>(path));
    expect(items.map((i) => i.value.id)).toEqual([
      "6915606477668963399",
      "-8366545547296627039",
      "-5004457603684974952",
      "7217222058435937287",
      "-143054837169120955",
    ]);
    expect(items[4].line).toBe(5);
    expect(items[4].endByte).toBe(bytes.length);
  });

  it("reads exactly 5 records from every kilt-samples file", async () => {
    for (const name of ["triviaqa-test_id_without_answers-kilt.jsonl", "eli5-dev-kilt.jsonl", "wow-train-kilt.jsonl"]) {
      const stats = await scanJsonl(join(SAMPLES, name), () => {});
      expect(stats).toMatchObject({ records: 5, blankLines: 0, badLines: 0 });
      expect(stats.bytes).toBe(readFileSync(join(SAMPLES, name)).length);
    }
  });

  it("skips blank and whitespace-only lines but keeps counting them", async () => {
    const path = tempFile("blank.jsonl", '\n{"id": 1}\n\n   \t\n{"id": 2}\n\n\n');
    const items = await collect(readJsonl(path));
    expect(items.map((i) => [i.value, i.line])).toEqual([
      [{ id: 1 }, 2],
      [{ id: 2 }, 5],
    ]);
    const stats = await scanJsonl(path, () => {});
    expect(stats).toEqual({ records: 2, blankLines: 5, badLines: 0, bytes: 29 });
  });

  it("tolerates CRLF line ends and does not leave \\r in the text", async () => {
    const path = tempFile("crlf.jsonl", '{"id": "a"}\r\n\r\n{"id": "b", "input": "x"}\r\n');
    const seen: [string, number][] = [];
    await scanLines(path, (text, line) => seen.push([text, line]));
    expect(seen).toEqual([
      ['{"id": "a"}', 1],
      ['{"id": "b", "input": "x"}', 3],
    ]);
    expect(await readJsonlAll(path)).toEqual([{ id: "a" }, { id: "b", input: "x" }]);
  });

  it("drops a UTF-8 BOM at the start of the file only", async () => {
    const path = tempFile("bom.jsonl", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"id": "a"}\n{"id": "\ufeffb"}\n')]));
    const seen: string[] = [];
    await scanLines(path, (text) => seen.push(text));
    expect(seen).toEqual(['{"id": "a"}', '{"id": "\ufeffb"}']);
    expect(await readJsonlAll(path)).toEqual([{ id: "a" }, { id: "\ufeffb" }]);
  });

  it("keeps line numbers right across chunk boundaries", async () => {
    const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ id: i, input: "x".repeat(i % 17) }));
    const path = tempFile("chunks.jsonl", lines.join("\n"));
    const items = await collect(readJsonl<{ id: number }>(path, { chunkSize: 7 }));
    expect(items.length).toBe(200);
    expect(items.every((it, i) => it.value.id === i && it.line === i + 1)).toBe(true);
  });

  it("gives the same lines and byte offsets for every read size, with a BOM, CRLF and blank lines", async () => {
    const body = ['{"id": "é1"}', "", '{"id": 2, "input": "a long line that spans several reads"}', "  ", '{"id": 3}'].join("\r\n");
    const path = tempFile("sizes.jsonl", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body)]));
    const expected = [
      [{ id: "é1" }, 1, 3 + 15],
      [{ id: 2 }, 3, 3 + 15 + 2 + 60],
      [{ id: 3 }, 5, 3 + 15 + 2 + 60 + 4 + 9],
    ];
    for (let chunkSize = 1; chunkSize <= 20; chunkSize++) {
      const items = await collect(readJsonl(path, { chunkSize }));
      expect([chunkSize, items.map((i) => [{ id: i.value.id }, i.line, i.endByte])]).toEqual([chunkSize, expected]);
    }
  });
});

describe("malformed lines", () => {
  const content = '{"id": 1}\n{"id": 2}\n{"id": 3,}\n{"id": 4}\n[1, 2]\n"text"\nnull\n{"id": 8}\n';

  it("reports `file:3: invalid JSON (...)` and still delivers the lines after it", async () => {
    const path = tempFile("bad.jsonl", content);
    const errors: LineError[] = [];
    const ids: number[] = [];
    const stats = await scanJsonl<{ id: number }>(path, (v) => ids.push(v.id), { onError: (e) => errors.push(e) });
    expect(ids).toEqual([1, 2, 4, 8]);
    expect(stats).toMatchObject({ records: 4, badLines: 4, blankLines: 0 });
    expect(errors.map((e) => e.message)).toEqual([
      `${path}:3: invalid JSON (${parseMessage('{"id": 3,}')})`,
      `${path}:5: expected a JSON object, found an array`,
      `${path}:6: expected a JSON object, found string`,
      `${path}:7: expected a JSON object, found null`,
    ]);
    expect(errors[0]).toBeInstanceOf(LineError);
    expect([errors[0].file, errors[0].line]).toEqual([path, 3]);
    expect(errors[0].reason.startsWith("invalid JSON (")).toBe(true);
  });

  it("readJsonl without onError throws at the bad line, after delivering the lines before it", async () => {
    const path = tempFile("bad-throw.jsonl", content);
    const ids: unknown[] = [];
    let thrown: unknown;
    try {
      for await (const item of readJsonl(path)) ids.push(item.value.id);
    } catch (e) {
      thrown = e;
    }
    expect(ids).toEqual([1, 2]);
    expect(thrown).toBeInstanceOf(LineError);
    expect((thrown as LineError).line).toBe(3);
    await expect(readJsonlAll(path)).rejects.toThrow(`${path}:3: invalid JSON (`);
  });

  it("readJsonl with onError goes on past bad lines", async () => {
    const path = tempFile("bad-go-on.jsonl", content);
    const lines: number[] = [];
    const items = await collect(readJsonl(path, { onError: (e) => lines.push(e.line) }));
    expect(items.map((i) => i.line)).toEqual([1, 2, 4, 8]);
    expect(lines).toEqual([3, 5, 6, 7]);
  });
});

describe("resuming", () => {
  it("starts after a delivered line with startByte = its endByte and startLine = its line", async () => {
    const path = tempFile("resume.jsonl", '{"id": "a"}\n\n{"id": "bé"}\r\n{"id": "c"}\n{"id": "d"}');
    const all = await collect(readJsonl<{ id: string }>(path));
    expect(all.map((i) => [i.value.id, i.line, i.endByte])).toEqual([
      ["a", 1, 12],
      ["bé", 3, 28],
      ["c", 4, 40],
      ["d", 5, 51],
    ]);
    const rest = await collect(readJsonl<{ id: string }>(path, { startByte: all[1].endByte, startLine: all[1].line }));
    expect(rest.map((i) => [i.value.id, i.line, i.endByte])).toEqual([
      ["c", 4, 40],
      ["d", 5, 51],
    ]);
    const end = await collect(readJsonl(path, { startByte: all[3].endByte, startLine: 5 }));
    expect(end).toEqual([]);
  });

  it("refuses a byte offset into a .gz file", async () => {
    const path = join(dir, "resume.jsonl.gz");
    await writeJsonl(path, [{ id: 1 }]);
    await expect(collect(readJsonl(path, { startByte: 5 }))).rejects.toThrow("resuming at a byte offset needs an uncompressed file");
  });
});
