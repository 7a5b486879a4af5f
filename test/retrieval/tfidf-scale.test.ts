import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, cpSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromSquad } from "../../src/knowledge/build.js";
import { buildTfidfIndex } from "../../src/retrieval/tfidf/build.js";
import { openTfidf } from "../../src/retrieval/tfidf/search.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { seededRandom } from "../../src/util/random.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-tfidf-scale-"));
const pages = join(tmp, "pages.jsonl");
const FILES = ["tfidf.buckets", "tfidf.offsets", "tfidf.docs", "tfidf.tfs", "units.jsonl", "units.offsets"];
const QUESTIONS = ["Which NFL team represented the AFC at Super Bowl 50?", "What is the capital of Poland?", "Who did Tesla work for in Paris?", "When was the University of Chicago founded?"];

beforeAll(async () => {
  await fromSquad(V11, pages, () => {});
  await buildTfidfIndex(unitsFromPagesFile(pages, { unit: "paragraph" }), join(tmp, "one"), { unit: "paragraph", source: pages });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("TF-IDF built in segments", () => {
  it("gives the same files, byte for byte, and the same rankings as one build in memory", async () => {
    const stats = await buildTfidfIndex(unitsFromPagesFile(pages, { unit: "paragraph" }), join(tmp, "many"), { unit: "paragraph", source: pages }, undefined, { segmentPostings: 5000 });
    expect(stats).toEqual({ units: 2067, buckets: 73085, postings: 187516, segments: 38 });
    expect(readdirSync(join(tmp, "many")).filter((f) => f.startsWith("tfidf.segment"))).toEqual([]);
    for (const f of FILES) expect(readFileSync(join(tmp, "many", f)).equals(readFileSync(join(tmp, "one", f))), f).toBe(true);
    const a = await openTfidf(join(tmp, "one"));
    const b = await openTfidf(join(tmp, "many"));
    for (const q of QUESTIONS) expect(b.searchSync(q, 100)).toEqual(a.searchSync(q, 100));
    await a.close();
    await b.close();
  });
});

describe("TF-IDF refuses corrupt files, naming them", () => {
  const corrupt = (name: string, f: string, change: (b: Buffer) => Buffer) => {
    const dir = join(tmp, name);
    rmSync(dir, { recursive: true, force: true });
    cpSync(join(tmp, "one"), dir, { recursive: true });
    writeFileSync(join(dir, f), change(readFileSync(join(dir, f))));
    return dir;
  };

  it("random bytes in tfidf.offsets: an error at open, not a search that spins", async () => {
    const rand = seededRandom(7);
    const dir = corrupt("random-offsets", "tfidf.offsets", (b) => Buffer.from(b.map(() => Math.floor(rand() * 256))));
    await expect(openTfidf(dir)).rejects.toThrow(new RegExp(`${dir}/tfidf\\.offsets: offset \\d+ \\(.*\\) is not an increasing position`));
  });

  it("a truncated file, bucket order, counts for another build, unit numbers out of range", async () => {
    let dir = corrupt("short-docs", "tfidf.docs", (b) => b.subarray(0, b.length - 4));
    await expect(openTfidf(dir)).rejects.toThrow(`${dir}/tfidf.tfs: 187516 counts for 187515 postings in ${dir}/tfidf.docs`);
    dir = corrupt("odd-buckets", "tfidf.buckets", (b) => b.subarray(0, b.length - 1));
    await expect(openTfidf(dir)).rejects.toThrow(`${dir}/tfidf.buckets: 292339 bytes, not a whole number of 4-byte entries`);
    dir = corrupt("swapped-buckets", "tfidf.buckets", (b) => {
      const c = Buffer.from(b);
      c.copy(c, 0, 4, 8);
      return c;
    });
    await expect(openTfidf(dir)).rejects.toThrow(`${dir}/tfidf.buckets: entry 1 `);
    dir = corrupt("big-docs", "tfidf.docs", (b) => Buffer.from(b).fill(0xff));
    const r = await openTfidf(dir);
    expect(() => r.searchSync(QUESTIONS[0], 10)).toThrow(new RegExp(`${dir}/tfidf\\.docs: unit 4294967295 at posting \\d+ is out of range 0\\.\\.2066`));
    await r.close();
  });
});
