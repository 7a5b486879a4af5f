// Dense retrieval on the ClickHouse cluster (src/backends/clickhouse/dense.ts) against the embedded
// compressed index it was copied from (IvfIndex), on 1 and 2 shards: clustered vectors with repeated
// rows (equal codes and int8 rows: ties at the Hamming cut and in the final scores), 60 queries, and
// parameter sets that take each path of the search (refined by the look-up table, cut without
// refining, every probed code rescored): the same units, order and scores.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIndexAt, describeIndex, openRetriever } from "../../src/backends/open.js";
import { openClickHouseDense } from "../../src/backends/clickhouse/dense.js";
import { arraySource } from "../../src/retrieval/dense/vector-files.js";
import { buildIvfIndex } from "../../src/retrieval/dense/ivf-build.js";
import { IvfIndex, type IvfSearchOptions } from "../../src/retrieval/dense/ivf-search.js";
import { normalizeRows } from "../../src/retrieval/dense/encoder.js";
import { readManifest } from "../../src/retrieval/manifest.js";
import type { Unit } from "../../src/retrieval/units/unit.js";
import { clustered, rng } from "../retrieval/dense/clustered.js";
import { startTestCluster } from "./cluster-fixture.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-ch-dense-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const dim = 96;
const n = 6000;
/** Clustered unit vectors; every 40th repeats the one before it. */
const vectors = clustered(n, dim, 60, 11);
for (let i = 39; i < n; i += 40) vectors.copyWithin(i * dim, (i - 1) * dim, i * dim);
const units: Unit[] = Array.from({ length: n }, (_, i) => ({ wikipedia_id: String(1000 + i), wikipedia_title: `T${i}`, start_paragraph_id: 1, end_paragraph_id: 1, text: `passage ${i}` }) as unknown as Unit);

function queries(nq: number, seed: number): Float32Array {
  const r = rng(seed);
  const q = new Float32Array(nq * dim);
  for (let j = 0; j < nq; j++) for (let d = 0; d < dim; d++) q[j * dim + d] = vectors[((j * 97) % n) * dim + d] + 0.2 * r();
  return normalizeRows(q, dim);
}
const qs = queries(60, 5);

const cases: [number, IvfSearchOptions][] = [
  [100, { nprobe: 12, refine: 150 }], // 600 nearest codes, refined to 150
  [10, { nprobe: 3, refine: 40, refineFactor: 1 }], // cut at 40 codes, no refining
  [10, { nprobe: 1, refine: 5000 }], // every probed code rescored
  [100, { nprobe: 64, refine: 100, refineFactor: 8, topProbe: 8 }],
];

describe("dense index on ClickHouse equals the embedded compressed index", () => {
  const dir = join(tmp, "ivf");
  let ivf: IvfIndex;
  beforeAll(async () => {
    await buildIvfIndex(arraySource(vectors, dim), units, dir, { quantize: "binary", sample: 3000, k1: 8, k2: 8 });
    ivf = IvfIndex.open(dir, readManifest(dir), { threads: 1 });
  }, 120_000);
  afterAll(async () => ivf?.close());

  it.each([1, 2])("%i shard(s): the same hits and scores for every query and parameter set", async (shards) => {
    const cluster = await startTestCluster(shards);
    try {
      const url = cluster.url("dense", "vecs");
      const built = await buildIndexAt({ kind: "dense", backend: url, fromIndex: dir }, () => {});
      expect(built).toMatchObject({ out: url, unit: "passage", units: n });
      const r = await openClickHouseDense(url, { batch: 25 });
      try {
        const { files: _files, ...manifest } = readManifest(dir);
        expect(r.manifest).toEqual(manifest);
        expect(r.manifest.units).toBe(n);
        for (const [k, o] of cases) {
          const want = ivf.search(qs, k, o);
          const got = await r.searchVectors(qs, k, o);
          expect(got.map((h) => h.length)).toEqual(want.map((h) => h.length));
          expect(want.filter((_, i) => JSON.stringify(got[i]) !== JSON.stringify(want[i])).length).toBe(0);
          expect(got).toEqual(want);
        }
        // the repeated rows tie: both units of a pair come back with equal scores, the lower first
        const flat = (await r.searchVectors(qs, 100, cases[0][1])).flat();
        const pairs = flat.filter((h, i) => i > 0 && flat[i - 1].unit === h.unit - 1 && h.unit % 40 === 39 && flat[i - 1].score === h.score);
        expect(pairs.length).toBeGreaterThan(10);
        // hits' units are readable after a search
        expect(r.units.get(flat[0].unit)).toMatchObject({ wikipedia_id: String(1000 + flat[0].unit) });
      } finally {
        await r.close();
      }
      // opened through the backend seam: a dense retriever with the embedded index's manifest
      const seam = await openRetriever(url);
      try {
        expect(seam.kind).toBe("dense");
        expect((await describeIndex(url)).params).toEqual(readManifest(dir).params);
        await expect(seam.search("who", 5)).rejects.toThrow("names no encoder");
      } finally {
        await seam.close();
      }
    } finally {
      await cluster.stop();
    }
  }, 300_000);

  it("refuses a directory that is not a binary compressed index, and a build without --from-index", { timeout: 60_000 }, async () => {
    await expect(buildIndexAt({ kind: "dense", backend: "clickhouse://127.0.0.1:1/db/x", fromIndex: join(tmp, "none") }, () => {})).rejects.toThrow(/manifest/);
    await expect(buildIndexAt({ kind: "dense", backend: "clickhouse://127.0.0.1:1/db/x" }, () => {})).rejects.toThrow("give --from-index DIR");
    const pq = join(tmp, "pq");
    await buildIvfIndex(arraySource(vectors.subarray(0, 2000 * dim), dim), units.slice(0, 2000), pq, { quantize: "pq", sample: 2000, k1: 4, k2: 4 });
    await expect(buildIndexAt({ kind: "dense", backend: "clickhouse://127.0.0.1:1/db/x", fromIndex: pq }, () => {})).rejects.toThrow(`${pq}: pq codes; only binary codes are copied into ClickHouse (manifest.json: params.quantize)`);
    await expect(buildIndexAt({ kind: "bm25", backend: "clickhouse://127.0.0.1:1/db/x", fromIndex: dir }, () => {})).rejects.toThrow("--from-index DIR copies a compressed dense index into ClickHouse");
  });
});
