// Progress through callbacks: library jobs report `ProgressEvent`s and draw nothing; `progressDrawer`
// draws them as the Progress line would (counts) on a terminal, nothing on a pipe. Checked with an index
// build, whose kinds report a count line and a status line, with and without a callback.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildIndex } from "../../src/retrieval/build.js";
import { progressDrawer, type ProgressEvent } from "../../src/util/progress.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-progress-events-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (s: string) => writes.push(s) };
}

describe("progressDrawer", () => {
  it("draws a count line per label, its options from the first event, and ends it on done", () => {
    const stream = fakeStream(true);
    const draw = progressDrawer({ stream });
    const line = { label: "retrieve", unit: "queries", totalItems: 3, countItems: true };
    draw({ ...line, items: 1 });
    draw({ ...line, items: 3 });
    draw({ ...line, items: 0, done: true });
    expect(stream.writes[0]).toMatch(/^\rretrieve {2}1 \/ 3 queries \(33%\) {2}(?:[\d.,]+|-) queries\/s {2}ETA [^\n]+\x1b\[K$/);
    expect(stream.writes.at(-1)).toMatch(/^\rretrieve {2}3 \/ 3 queries \(100%\) {2}(?:[\d.,]+|-) queries\/s {2}ETA 0s\x1b\[K\n$/);
  });

  it("ends a line that had no count with its zero state, and erases a count line on clear", () => {
    const stream = fakeStream(true);
    const draw = progressDrawer({ stream });
    draw({ label: "ingest", unit: "pages", totalBytes: 100, items: 0, clear: true });
    expect(stream.writes).toEqual([]);
    draw({ label: "ingest", unit: "pages", totalBytes: 100, items: 4, bytes: 50 });
    draw({ label: "ingest", items: 0, clear: true });
    expect(stream.writes.at(-1)).toBe("\r\x1b[K");
    draw({ label: "index bm25", unit: "page units", items: 0, done: true });
    expect(stream.writes.at(-1)).toMatch(/^\rindex bm25 {2}0 page units {2}0 kB {2}0\.0 MB\/s\x1b\[K\n$/);
  });

  it("draws nothing on a pipe", () => {
    const stream = fakeStream(false);
    const draw = progressDrawer({ stream });
    draw({ label: "retrieve", unit: "queries", items: 1 });
    draw({ label: "retrieve", items: 1, done: true });
    expect(stream.writes).toEqual([]);
  });
});

describe("an index build", () => {
  const pages = join(tmp, "pages.jsonl");
  writeFileSync(pages, Array.from({ length: 6 }, (_, i) => JSON.stringify({ wikipedia_id: String(i + 1), wikipedia_title: `Page ${i}`, text: [`Page ${i}\n`, `The river ${i} and the castle.\n`] })).join("\n") + "\n");

  it("reports its count line and status line through onProgress, each ended once", async () => {
    const events: ProgressEvent[] = [];
    await buildIndex({ pages, kind: "bm25", unit: "paragraph", out: join(tmp, "bm25"), onProgress: (e) => events.push(e) }, () => {});
    const counts = events.filter((e) => e.items !== undefined);
    const statuses = events.filter((e) => e.items === undefined);
    expect(new Set(events.map((e) => e.label))).toEqual(new Set(["index bm25"]));
    expect(counts.filter((e) => e.done)).toHaveLength(1);
    expect(counts.filter((e) => !e.done).at(-1)).toMatchObject({ unit: "paragraph units", items: 6 });
    expect(statuses.at(-1)).toMatchObject({ done: true });
    expect(statuses.every((e) => typeof e.status === "function")).toBe(true);
  });

  it("reports through nothing and draws nothing without a callback", async () => {
    const writes: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    const tty = process.stderr.isTTY;
    process.stderr.isTTY = true; // as on a terminal: still nothing is drawn
    process.stderr.write = ((s: string) => (writes.push(s), true)) as typeof process.stderr.write;
    try {
      await buildIndex({ pages, kind: "tfidf", unit: "paragraph", out: join(tmp, "tfidf") }, () => {});
      await buildIndex({ pages, kind: "bm25", unit: "paragraph", out: join(tmp, "bm25-quiet") }, () => {});
    } finally {
      process.stderr.write = write;
      process.stderr.isTTY = tty;
    }
    expect(writes).toEqual([]);
  });
});
