// The defaults of a dense index from precomputed vectors (issue 34): exact search below 20,000 × 768
// values; above it (or asked for), a compressed index whose starting depth is read from its lists and size,
// measured at build time against exact search on the collection's own vectors, deepened until recall@100
// reaches 0.95, and said in the build's output and kept in the manifest.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultQuantize, startingDepth, tuneDepth } from "../../../src/retrieval/dense/default-depth.js";
import { openVectorFile } from "../../../src/retrieval/dense/vector-files.js";
import { readManifest } from "../../../src/retrieval/manifest.js";
import { clustered } from "./clustered.js";
import { npyBytes } from "./npy.js";

const CLI = join(process.cwd(), "dist", "src", "cli", "main.js");
const tmp = mkdtempSync(join(tmpdir(), "tartan-dense-defaults-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const tartan = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });
// SQuAD's size: 2,067 paragraph vectors
const N = 2067;
const DIM = 64;

beforeAll(() => {
  writeFileSync(join(tmp, "v.npy"), npyBytes(N, DIM, clustered(N, DIM, 40, 5)));
  writeFileSync(join(tmp, "ids.txt"), Array.from({ length: N }, (_, i) => `${i}\t1\t1\n`).join(""));
});

describe("dense defaults on small collections", () => {
  it("chooses exact search up to 20,000 × 768 values, PQ above", () => {
    expect(defaultQuantize(2067, 512)).toBe("none");
    expect(defaultQuantize(20_000, 768)).toBe("none");
    expect(defaultQuantize(20_001, 768)).toBe("pq");
    expect(defaultQuantize(1_000_000, 768)).toBe("pq");
  });

  it("starts from a depth read from the lists and the size", () => {
    // SQuAD's 169 lists over 2,067 vectors: 14 lists (the old rule probed 8), every vector a candidate
    expect(startingDepth(169, 2067)).toEqual({ nprobe: 14, refine: 2067 });
    // the 200k benchmark's 1,764 lists: 142 lists, 4,000 candidates (0.97 recall@100 there: docs/benchmarks.md)
    expect(startingDepth(1764, 200_000)).toEqual({ nprobe: 142, refine: 4000 });
    expect(startingDepth(3969, 1_000_000)).toEqual({ nprobe: 318, refine: 10_000 });
  });

  it("builds exact by default at SQuAD's size, and says so", () => {
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "v.npy"), "--ids", join(tmp, "ids.txt"), "--out", join(tmp, "auto"));
    expect(b.status, b.stderr).toBe(0);
    expect(b.stderr).toContain("dense: 2,067 × 64 vectors, at most 20,000 × 768: exact search by default");
    expect((readManifest(join(tmp, "auto")).params as { quantize: string }).quantize).toBe("none");
  });

  it("measures a compressed build's default recall, deepens it to the target and records it", async () => {
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "v.npy"), "--ids", join(tmp, "ids.txt"), "--quantize", "pq", "--out", join(tmp, "pq"));
    expect(b.status, b.stderr).toBe(0);
    const m = readManifest(join(tmp, "pq"));
    const p = m.params as { lists: number; nprobe: number; refine: number; defaultRecall: { recallAt100: number; queries: number; tuned: boolean } };
    // 14 lists (the start) and 21 fall short of 0.95; 32 reach 0.9855
    expect([p.lists, p.nprobe, p.refine]).toEqual([169, 32, 2067]);
    expect(p.defaultRecall).toEqual({ recallAt100: 0.9855, queries: 100, tuned: true });
    expect(b.stderr).toContain(`dense: the default search probes ${p.nprobe} of 169 lists and rescores ${p.refine.toLocaleString("en-US")} candidates${p.defaultRecall.tuned ? " (deepened to reach the target)" : ""}: recall@100 ${p.defaultRecall.recallAt100.toFixed(3)} of exact search on 100 of the collection's own vectors as queries`);
    // the old default (8 lists) measured the same way: far below
    const src = openVectorFile(join(tmp, "v.npy"));
    try {
      const old = await tuneDepth(src, join(tmp, "pq"), m, { nprobe: 8, refine: 4000 }, false);
      expect(old.recall!).toBeLessThan(0.9);
      const again = await tuneDepth(src, join(tmp, "pq"), m, { nprobe: p.nprobe, refine: p.refine }, false);
      expect(again.recall).toBe(p.defaultRecall.recallAt100);
    } finally {
      src.close();
    }
  });

  it("keeps a depth the user gave, and still says what it trades", () => {
    const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "v.npy"), "--ids", join(tmp, "ids.txt"), "--quantize", "pq", "--nprobe", "4", "--refine", "200", "--out", join(tmp, "given"));
    expect(b.status, b.stderr).toBe(0);
    const p = readManifest(join(tmp, "given")).params as { nprobe: number; refine: number; defaultRecall: { recallAt100: number; tuned: boolean } };
    expect([p.nprobe, p.refine, p.defaultRecall.tuned]).toEqual([4, 200, false]);
    expect(p.defaultRecall.recallAt100.toFixed(3)).toBe("0.506");
    expect(b.stderr).toContain("recall@100 0.506 of exact search on 100 of the collection's own vectors as queries (below 0.95: retrieve --nprobe --refine go deeper)");
    expect(readFileSync(join(tmp, "given", "manifest.json"), "utf8")).toContain('"defaultRecall"');
  });
});
