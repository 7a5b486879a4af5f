// Tests for the progress line: silent unless the stream is a TTY (or forced), throttled redraws,
// pages / MB / percentage / MB/s / ETA with a fake clock, rates that leave out a resumed job's start.

import { describe, expect, it } from "vitest";
import { formatBytes, formatDuration, Progress } from "../../src/util/progress.js";

function fakeStream(isTTY: boolean) {
  const writes: string[] = [];
  return { isTTY, writes, write: (s: string) => writes.push(s) };
}

describe("Progress", () => {
  it("writes nothing when the stream is not a terminal", () => {
    const stream = fakeStream(false);
    const p = new Progress({ label: "ingest", stream, totalBytes: 100 });
    p.update(5, 50);
    p.done();
    expect(p.enabled).toBe(false);
    expect(stream.writes).toEqual([]);
  });

  it("draws pages, bytes, percentage, rate and ETA in place, at most once per interval", () => {
    const stream = fakeStream(true);
    let t = 0;
    const p = new Progress({ label: "ingest", unit: "pages", stream, totalBytes: 100e6, now: () => t, intervalMs: 250 });
    t = 5000;
    p.update(1000, 50e6);
    t = 5100;
    p.update(1100, 55e6); // within the interval: not drawn
    t = 8000;
    p.done();
    expect(stream.writes).toEqual([
      "\ringest  1,000 pages  50.0 MB / 100.0 MB (50%)  10.0 MB/s  ETA 5s\x1b[K",
      "\ringest  1,100 pages  55.0 MB / 100.0 MB (55%)  6.9 MB/s  ETA 7s\x1b[K\n",
    ]);
  });

  it("measures the rate from where a resumed job started", () => {
    let t = 0;
    const p = new Progress({ label: "x", unit: "pages", stream: fakeStream(true), totalBytes: 100e6, startBytes: 40e6, now: () => t });
    t = 2000;
    p.update(10, 60e6);
    expect(p.line()).toBe("x  10 pages  60.0 MB / 100.0 MB (60%)  10.0 MB/s  ETA 4s");
  });

  it("can be forced on for a non-terminal stream", () => {
    const stream = fakeStream(false);
    const p = new Progress({ label: "x", stream, enabled: true, now: () => 1000 });
    p.update(1, 1000);
    expect(stream.writes).toEqual(["\rx  1 items  1 kB  0.0 MB/s\x1b[K"]);
  });
});

describe("Progress counted in items", () => {
  it("draws done / total, percentage, items per second and ETA", () => {
    const stream = fakeStream(true);
    let t = 0;
    const p = new Progress({ label: "answering", unit: "questions", totalItems: 4874, countItems: true, stream, now: () => t });
    t = 10_000;
    p.update(1000);
    t = 40_000;
    p.update(4874);
    p.done();
    expect(stream.writes).toEqual([
      "\ranswering  1,000 / 4,874 questions (21%)  100 questions/s  ETA 39s\x1b[K",
      "\ranswering  4,874 / 4,874 questions (100%)  122 questions/s  ETA 0s\x1b[K",
      "\ranswering  4,874 / 4,874 questions (100%)  122 questions/s  ETA 0s\x1b[K\n",
    ]);
  });

  it("without a total: items and rate; slow rates keep two decimals; a resumed start is left out of the rate", () => {
    let t = 0;
    const p = new Progress({ label: "encode", unit: "passages", countItems: true, stream: fakeStream(true), now: () => t });
    t = 4000;
    p.update(1234);
    expect(p.line()).toBe("encode  1,234 passages  309 passages/s");
    const q = new Progress({ label: "x", unit: "pages", totalItems: 100, startItems: 50, countItems: true, stream: fakeStream(true), now: () => t });
    t = 104_000;
    q.update(60);
    expect(q.line()).toBe("x  60 / 100 pages (60%)  0.10 pages/s  ETA 6m40s");
  });

  it("stays silent when piped", () => {
    const stream = fakeStream(false);
    const p = new Progress({ label: "answering", unit: "questions", totalItems: 10, countItems: true, stream });
    p.update(5);
    p.done();
    expect(stream.writes).toEqual([]);
  });
});

describe("formatting", () => {
  it("formats durations and sizes", () => {
    expect([formatDuration(42.4), formatDuration(185), formatDuration(7620), formatDuration(Infinity)]).toEqual(["42s", "3m05s", "2h07m", "?"]);
    expect([formatBytes(812e3), formatBytes(12.34e6), formatBytes(6.4e9)]).toEqual(["812 kB", "12.3 MB", "6.40 GB"]);
  });
});

describe("Progress rate over a short time (issue 27)", () => {
  it("shows no items-per-second rate before half a second of work", () => {
    let t = 0;
    const p = new Progress({ label: "retrieving", unit: "questions", totalItems: 4987, countItems: true, stream: fakeStream(true), now: () => t });
    t = 0.4;
    p.update(4987);
    expect(p.line()).toBe("retrieving  4,987 / 4,987 questions (100%)  - questions/s  ETA 0s");
    t = 20;
    p.update(10);
    expect(p.line()).toBe("retrieving  10 / 4,987 questions (0%)  - questions/s  ETA ?");
    t = 500;
    expect(p.line()).toBe("retrieving  10 / 4,987 questions (0%)  20.0 questions/s  ETA 4m09s");
  });
});
