// Building and opening dense index directories with a small deterministic encoder (hashed bag of words):
// manifest, unit store, vectors file, exact and HNSW search through the Retriever interface.

import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildDenseIndex, openDense, unitText } from "../../../src/retrieval/dense/index.js";
import { dotF32 } from "../../../src/retrieval/dense/simd.js";
import { DIM, HashEncoder, makeUnits, slowly } from "./hash-encoder.js";

describe("dense index directories", () => {
  const units = makeUnits(300);

  it("writes units, unit vectors, an HNSW graph and the manifest; searches exactly and approximately", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tartan-dense-"));
    const enc = new HashEncoder();
    const progress: string[] = [];
    const m = await buildDenseIndex(slowly(units), dir, { encoder: enc.spec, unit: "paragraph", source: "test", batchSize: 128, hnsw: { M: 8, efConstruction: 64 } }, (p) => progress.push(`${p.phase}:${p.done}`), { encoder: enc });
    expect(m).toMatchObject({ kind: "dense", unit: "paragraph", units: 300, source: "test", formatVersion: 1 });
    expect(m.params).toMatchObject({ dim: DIM, title: true, titleSeparator: ". ", vectors: "vectors.f32", search: "exact", hnsw: { M: 8, efConstruction: 64, ef: 128, seed: 100 } });
    expect(m.params.encoder).toEqual(enc.spec);
    expect(JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"))).toEqual(m);
    expect(statSync(join(dir, "vectors.f32")).size).toBe(300 * DIM * 4);
    expect(existsSync(join(dir, "hnsw.bin"))).toBe(true);
    expect(progress).toEqual(["encode:128", "encode:256", "encode:300"]);
    expect(enc.calls.map((c) => c.length)).toEqual([128, 128, 44]);
    expect(enc.calls[0][7]).toBe(`Page 1. ${units[7].text}`);
    expect(enc.closed).toBe(false);

    const vectors = new Float32Array(readFileSync(join(dir, "vectors.f32")).buffer.slice(0));
    const query = "castle music bridge";
    const qv = (await enc.encodeQueries([query])).slice();
    const brute = units
      .map((_, i) => ({ unit: i, score: dotF32(vectors, i * DIM, qv, 0, DIM) }))
      .sort((a, b) => b.score - a.score || a.unit - b.unit)
      .slice(0, 10);

    const exact = await openDense(dir, { encoder: enc, threads: 2 });
    try {
      expect(exact.kind).toBe("dense");
      expect(exact.units.count).toBe(300);
      expect(await exact.search(query, 10)).toEqual(brute);
      const batch = await exact.searchBatch([query, "opera harbour", ""], 10);
      expect(batch[0]).toEqual(brute);
      expect(batch[1][0].score).toBeGreaterThan(0.5);
      // an empty query is a zero vector: every score 0, ties to the lowest units
      expect(batch[2].map((h) => h.unit)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(exact.units.get(brute[0].unit)).toEqual(units[brute[0].unit]);
    } finally {
      await exact.close();
    }
    expect(enc.closed).toBe(false);

    const approx = await openDense(dir, { encoder: enc, search: "hnsw", ef: 200 });
    try {
      // the hashed encoder gives many equal scores: compare scores (HNSW does not order ties by unit)
      const hits = await approx.search(query, 10);
      expect(hits.length).toBe(10);
      hits.forEach((h, i) => expect(Math.abs(h.score - brute[i].score)).toBeLessThan(1e-5));
    } finally {
      await approx.close();
    }
  });

  it("can encode the text without its title", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tartan-dense-"));
    const enc = new HashEncoder();
    await buildDenseIndex(units.slice(0, 3), dir, { encoder: enc.spec, title: false }, undefined, { encoder: enc });
    expect(enc.calls).toEqual([units.slice(0, 3).map((u) => u.text)]);
    expect(unitText(units[0], { titleSeparator: " | " })).toBe(`Page 0 | ${units[0].text}`);
    await expect(openDense(dir, { search: "hnsw" })).rejects.toThrow(/without an HNSW graph/);
  });

  it("opens an index of no units", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tartan-dense-"));
    const enc = new HashEncoder();
    const m = await buildDenseIndex([], dir, { encoder: enc.spec }, undefined, { encoder: enc });
    expect(m.units).toBe(0);
    const r = await openDense(dir, { encoder: enc });
    expect(await r.search("castle", 5)).toEqual([]);
    await r.close();
  });

  it("rejects what is not a dense index", async () => {
    await expect(openDense(mkdtempSync(join(tmpdir(), "tartan-dense-")))).rejects.toThrow(/no manifest.json/);
    await expect(buildDenseIndex([], mkdtempSync(join(tmpdir(), "tartan-dense-")), { encoder: { type: "use-lite" }, search: "hnsw" })).rejects.toThrow(/needs hnsw/);
  });
});
