// The compressed dense index built from precomputed vectors: every vector-file format and its refusals,
// each quantizer's recall against exact search on a fixed set, the SIMD Hamming kernel against its
// JavaScript reference, a killed build resumed to the same index, and refusal of corrupt, truncated and
// mixed index files.

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";
import { ExactIndex } from "../../../src/retrieval/dense/exact.js";
import { arraySource, openVectorFile } from "../../../src/retrieval/dense/vector-files.js";
import { buildIvfIndex } from "../../../src/retrieval/dense/ivf-build.js";
import { IvfIndex } from "../../../src/retrieval/dense/ivf-search.js";
import { Prober } from "../../../src/retrieval/dense/ivf-probe.js";
import { Quantizer } from "../../../src/retrieval/dense/quantizer.js";
import { IVF_FILES } from "../../../src/retrieval/dense/ivf-files.js";
import { Int8RowMemory, Int8Scorer } from "../../../src/retrieval/dense/int8-kernel.js";
import { HammingMemory, hammingJs } from "../../../src/retrieval/dense/hamming.js";
import { openDense } from "../../../src/retrieval/dense/index.js";
import { readManifest, sealIndex, verifyIndex } from "../../../src/retrieval/manifest.js";
import type { Hit } from "../../../src/retrieval/types.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";
import { npyBytes } from "./npy.js";
import { clustered, rng } from "./clustered.js";

function noisyQueries(base: Float32Array, dim: number, nq: number, seed: number): Float32Array {
  const r = rng(seed);
  const n = base.length / dim;
  const q = new Float32Array(nq * dim);
  for (let j = 0; j < nq; j++) {
    const p = (j * 7919) % n;
    for (let d = 0; d < dim; d++) q[j * dim + d] = base[p * dim + d] + 0.15 * r();
  }
  return normalizeRows(q, dim);
}

function recall(approx: Hit[][], exact: Hit[][], k: number): number {
  let found = 0;
  approx.forEach((a, q) => {
    const truth = new Set(exact[q].slice(0, k).map((h) => h.unit));
    found += a.slice(0, k).filter((h) => truth.has(h.unit)).length;
  });
  return found / (k * exact.length);
}

function units(n: number): Unit[] {
  return Array.from({ length: n }, (_, i) => ({ wikipedia_id: String(1000 + Math.floor(i / 3)), wikipedia_title: "", start_paragraph_id: (i % 3) + 1, end_paragraph_id: (i % 3) + 1, text: "" }));
}

const npy = (rows: number, dim: number, descr: string, body: Uint8Array, fortran = false): Buffer => npyBytes(rows, dim, body, descr, fortran);

function f16(x: number): number {
  // exact for the small dyadic values used here
  const f = new Float32Array([x]);
  const b = new Uint32Array(f.buffer)[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = ((b >>> 23) & 0xff) - 127 + 15;
  const mant = (b >>> 13) & 0x3ff;
  return x === 0 ? 0 : sign | (exp << 10) | mant;
}

const tmp = mkdtempSync(join(tmpdir(), "tartan-ivf-"));

describe("vector files", () => {
  const values = Float32Array.from([0.5, -0.25, 1, 0, 2, -4, 0.125, 8, -1, 0.75, 3, 0.5]); // 4 rows × 3
  it("reads .npy float32 and float16, .fvecs and raw float32/float16 rows by range", () => {
    const f32 = join(tmp, "v.npy");
    writeFileSync(f32, npy(4, 3, "<f4", new Uint8Array(values.buffer)));
    const h = Uint16Array.from(values, f16);
    const f16file = join(tmp, "h.npy");
    writeFileSync(f16file, npy(4, 3, "<f2", new Uint8Array(h.buffer)));
    const fv = Buffer.alloc(4 * 16);
    for (let r = 0; r < 4; r++) {
      fv.writeInt32LE(3, r * 16);
      for (let d = 0; d < 3; d++) fv.writeFloatLE(values[r * 3 + d], r * 16 + 4 + 4 * d);
    }
    writeFileSync(join(tmp, "v.fvecs"), fv);
    writeFileSync(join(tmp, "v.f32"), new Uint8Array(values.buffer));
    writeFileSync(join(tmp, "v.f16"), new Uint8Array(h.buffer));
    for (const [file, o] of [[f32, {}], [f16file, {}], [join(tmp, "v.fvecs"), {}], [join(tmp, "v.f32"), { dim: 3 }], [join(tmp, "v.f16"), { dim: 3 }]] as const) {
      const s = openVectorFile(file, o);
      expect([s.count, s.dim]).toEqual([4, 3]);
      expect(Array.from(s.read(0, 4))).toEqual(Array.from(values));
      expect(Array.from(s.read(2, 1))).toEqual([0.125, 8, -1]);
      s.close();
    }
  });

  it("refuses truncated files, other shapes and dtypes, and NaN or infinite rows, naming file and row", () => {
    const body = new Uint8Array(values.buffer);
    const cut = join(tmp, "cut.npy");
    writeFileSync(cut, npy(4, 3, "<f4", body.subarray(0, 40)));
    expect(() => openVectorFile(cut)).toThrow(`${cut}: truncated: the header says 4 rows of 3 float32 (176 bytes), the file has 168 bytes (row 3 is the first missing)`);
    const f8 = join(tmp, "f8.npy");
    writeFileSync(f8, npy(2, 3, "<f8", new Uint8Array(48)));
    expect(() => openVectorFile(f8)).toThrow(`${f8}: dtype <f8; expected little-endian float32 (<f4) or float16 (<f2)`);
    const fort = join(tmp, "fort.npy");
    writeFileSync(fort, npy(4, 3, "<f4", body, true));
    expect(() => openVectorFile(fort)).toThrow("Fortran-ordered");
    const nan = Float32Array.from(values);
    nan[7] = NaN;
    const nanFile = join(tmp, "nan.npy");
    writeFileSync(nanFile, npy(4, 3, "<f4", new Uint8Array(nan.buffer)));
    const s = openVectorFile(nanFile);
    expect(() => s.read(0, 4)).toThrow(`${nanFile}: row 2 has a NaN value (dimension 1)`);
    s.close();
    const inf = Float32Array.from(values);
    inf[11] = Infinity;
    expect(() => arraySource(inf, 3, "inf").read(0, 4)).toThrow("inf: row 3 has a infinite value (dimension 2)");
    const raw = join(tmp, "odd.f32");
    writeFileSync(raw, body.subarray(0, 44));
    expect(() => openVectorFile(raw, { dim: 3 })).toThrow(`${raw}: truncated: 44 bytes is not a whole number of 3-d float32 rows (row 3 is cut)`);
    expect(() => openVectorFile(raw)).toThrow("needs its dimension (--dim)");
    const fv = Buffer.alloc(2 * 16);
    fv.writeInt32LE(3, 0);
    fv.writeInt32LE(2, 16);
    const bad = join(tmp, "bad.fvecs");
    writeFileSync(bad, fv);
    const b = openVectorFile(bad);
    expect(() => b.read(0, 2)).toThrow(`${bad}: row 1 says it has 2 dimensions, the first row 3`);
    b.close();
    expect(() => openVectorFile(f8.replace("f8", "v"), { dim: 4 })).toThrow();
  });
});

describe("Hamming kernel", () => {
  it("equals the JavaScript count on every code", () => {
    const n = 3000;
    const h = HammingMemory.create(n, 48, n);
    const codes = h.codes();
    const r = rng(9);
    for (let i = 0; i < codes.length; i++) codes[i] = Math.floor((r() + 0.5) * 256);
    const q = Uint8Array.from({ length: 48 }, () => Math.floor((r() + 0.5) * 256));
    h.setQuery(q);
    const d = Array.from(h.scan(0, n));
    expect(d).toEqual(Array.from({ length: n }, (_, i) => hammingJs(codes, i * 48, q, 0, 48)));
    expect(Array.from(h.scan(100, 3))).toEqual(d.slice(100, 103));
  });

  it("sums a table over the codes in byte order, four codes at a time and the rest alone, as float64 in JavaScript", () => {
    const n = 1031;
    for (const cb of [96, 13]) {
      const h = HammingMemory.create(n, cb, 16);
      const codes = h.codes();
      const r = rng(cb);
      for (let i = 0; i < codes.length; i++) codes[i] = Math.floor((r() + 0.5) * 256);
      const table = Float32Array.from({ length: cb * 256 }, () => r() * 3);
      h.setTable(table);
      const js = (p: number): number => {
        let v = 0;
        for (let b = 0; b < cb; b++) v += table[b * 256 + codes[p * cb + b]];
        return v;
      };
      // ranges of every length 1 … 7 (tails of 0 … 3 after the groups of four) and a long one
      for (const [start, len] of [[0, 1], [5, 2], [9, 3], [17, 4], [40, 5], [77, 7], [0, 1024], [1024, 7]]) {
        expect(Array.from(h.rangeTableScores(start, len))).toEqual(Array.from({ length: len }, (_, i) => js(start + i)));
      }
      const positions = Float64Array.from([1030, 3, 999, 3, 512, 0]);
      expect(Array.from(h.tableScores(positions, 1, 5))).toEqual([3, 999, 3, 512, 0].map(js));
    }
  });
});

describe("int8 rescoring kernel", () => {
  it("gives the JavaScript route's scores, which are the float inner product within 1e-4 of the largest score", () => {
    for (const dim of [768, 64, 40]) {
      const n = 500;
      const r = rng(dim);
      const simdScorer = new Int8Scorer(dim, n);
      const jsScorer = new Int8Scorer(dim, n, false);
      const rows = Int8Array.from({ length: n * dim }, () => Math.max(-128, Math.min(127, Math.round(r() * 256))));
      const weights = Float32Array.from({ length: dim }, () => r() * 0.01);
      for (const s of [simdScorer, jsScorer]) {
        s.rows(n).set(new Uint8Array(rows.buffer));
        s.setQuery(weights, 0.25);
      }
      const a = Array.from(simdScorer.score(n));
      const b = Array.from(jsScorer.score(n));
      expect(a).toEqual(b);
      let maxErr = 0;
      let maxAbs = 0;
      for (let i = 0; i < n; i++) {
        let v = 0.25;
        for (let d = 0; d < dim; d++) v += weights[d] * rows[i * dim + d];
        maxErr = Math.max(maxErr, Math.abs(v - a[i]));
        maxAbs = Math.max(maxAbs, Math.abs(v));
      }
      expect(maxErr / maxAbs).toBeLessThan(1e-4);
      expect(maxErr).toBeGreaterThan(0); // the weights are rounded: not the float arithmetic by accident
    }
    // the extreme rows and weights cannot overflow the 32-bit sums
    const big = new Int8Scorer(1024, 1);
    big.rows(1).fill(0x80); // −128 everywhere
    big.setQuery(new Float32Array(1024).fill(-1), 0);
    expect(big.score(1)[0]).toBe(1024 * 128);
  });

  it("scores rows where they lie (the gathering kernel, any thread's slot): the same scores as rows copied to the kernel", () => {
    for (const dim of [768, 64]) {
      const n = 300;
      const r = rng(dim + 1);
      const mem = Int8RowMemory.create(n, dim, 3, 64);
      const bytes = mem.bytes();
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256) & 255;
      const weights = Float32Array.from({ length: dim }, () => r() - 0.5);
      const at = Float64Array.from({ length: 100 }, (_, i) => (i * 37 + 11) % n);
      const copy = new Int8Scorer(dim, 40);
      copy.setQuery(weights, -0.5);
      const rows = copy.rows(40);
      for (let j = 0; j < 40; j++) rows.set(bytes.subarray(at[30 + j] * dim, (at[30 + j] + 1) * dim), j * dim);
      const want = Array.from(copy.score(40));
      mem.setQuery(weights, -0.5);
      expect(Array.from(mem.scoreAt(at, 30, 40))).toEqual(want);
      const other = Int8RowMemory.attach(mem.share(), 2);
      other.setQuery(new Float32Array(dim).fill(1), 0); // another thread's query leaves slot 0's alone
      expect(Array.from(mem.scoreAt(at, 30, 40))).toEqual(want);
      expect(() => mem.scoreAt(at, 0, 65)).toThrow("65 rows: at most 64");
    }
    expect(Int8RowMemory.fits(100, 40, 1, 64)).toBe(false); // 40-byte rows: the copying route
    expect(() => Int8RowMemory.attach(Int8RowMemory.create(4, 16, 2, 8).share(), 2)).toThrow("scratch slot 2 of 2");
  });
});

describe("compressed dense index", () => {
  const dim = 64;
  const n = 6000;
  const vectors = clustered(n, dim, 60, 1);
  const qs = noisyQueries(vectors, dim, 60, 2);
  let exact: Hit[][];
  beforeAll(async () => {
    const e = new ExactIndex(vectors, dim, { threads: 0 });
    exact = await e.search(qs, 100);
    await e.close();
  });

  const build = (kind: "binary" | "pq" | "pq4" | "int8" | "rabitq", dir: string, extra = {}) => buildIvfIndex(arraySource(vectors, dim), units(n), dir, { quantize: kind, sample: 3000, k1: 8, k2: 8, ...extra });

  for (const [kind, r10, r100, fullR10] of [
    ["binary", 0.9867, 0.9948, 0.9867],
    ["pq", 0.9867, 0.9982, 0.9867],
    ["pq4", 0.9867, 0.998, 0.9867],
    ["int8", 0.9867, 0.9983, 0.9867],
    ["rabitq", 0.9867, 0.9982, 0.9867],
  ] as const) {
    it(`${kind}: recall against exact search on a fixed set`, async () => {
      const dir = join(tmp, `idx-${kind}`);
      const m = await build(kind, dir);
      expect(m.units).toBe(n);
      expect(m.params).toMatchObject({ quantize: kind, dim, lists: 64, k1: 8, k2: 8, codeBytes: { binary: 16, pq: 8, pq4: 8, int8: 0, rabitq: 16 }[kind] });
      const idx = IvfIndex.open(dir, readManifest(dir));
      const got = idx.search(qs, 100, { nprobe: 16, refine: 400 });
      await idx.close();
      expect({ r10: Number(recall(got, exact, 10).toFixed(4)), r100: Number(recall(got, exact, 100).toFixed(4)) }).toEqual({ r10, r100 });
      // a batch on two worker threads, attached to the same codes in shared memory: the same hits
      const two = IvfIndex.open(dir, readManifest(dir), { threads: 2 });
      expect(await two.searchBatch(qs, 100, { nprobe: 16, refine: 400 })).toEqual(got);
      await two.close();
      // the int8 rows held in memory (and attached by the workers): the same hits as read from disk
      const mem = IvfIndex.open(dir, readManifest(dir), { threads: 2, rowsInMemory: true });
      expect(mem.search(qs, 100, { nprobe: 16, refine: 400 })).toEqual(got);
      expect(await mem.searchBatch(qs, 100, { nprobe: 16, refine: 400 })).toEqual(got);
      await mem.close();
      // every list probed and every candidate rescored: the int8 ranking (near-ties of the clustered set swap)
      const all = IvfIndex.open(dir, readManifest(dir));
      const full = all.search(qs, 10, { nprobe: 64, refine: n });
      all.close();
      expect(Number(recall(full, exact, 10).toFixed(4))).toBe(fullR10);
      for (const hits of full) for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score > hits[i].score || (hits[i - 1].score === hits[i].score && hits[i - 1].unit < hits[i].unit)).toBe(true);
    });
  }

  it("one-level lists (k2 = 1) probe the nprobe nearest of all centroids, nearest first, with their scores", async () => {
    const dir = join(tmp, "idx-flat");
    const m = await build("rabitq", dir, { k1: 16, k2: 1 });
    expect(m.params).toMatchObject({ lists: 16, k1: 16, k2: 1 });
    const q = Quantizer.load(join(dir, IVF_FILES.quantizer), (m.params as { build: string }).build);
    const nq = qs.length / dim;
    const { lists, scores } = new Prober(q).probeScored(qs, nq, 5, 4);
    for (let i = 0; i < nq; i++) {
      const dots = Array.from({ length: 16 }, (_, c) => {
        let s = 0;
        for (let d = 0; d < dim; d++) s += qs[i * dim + d] * q.sub[c * dim + d];
        return s;
      });
      const want = dots.map((_, c) => c).sort((a, b) => dots[b] - dots[a] || a - b).slice(0, 5);
      expect(Array.from(lists[i])).toEqual(want); // all 16 ranked, not only those under 4 top centroids
      for (let j = 0; j < 5; j++) expect(Math.abs(scores[i][j] - dots[want[j]])).toBeLessThan(1e-5);
    }
    const idx = IvfIndex.open(dir, readManifest(dir), { threads: 2 });
    const got = idx.search(qs, 100, { nprobe: 4, refine: 400 });
    expect(Number(recall(got, exact, 100).toFixed(4))).toBe(0.9933);
    expect(await idx.searchBatch(qs, 100, { nprobe: 4, refine: 400 })).toEqual(got);
    await idx.close();
  });

  it("rows of a width the gathering kernel cannot take (40 bytes) are held in memory by copy: the same hits as from disk", async () => {
    const d40 = 40;
    const v40 = clustered(1500, d40, 20, 7);
    const q40 = noisyQueries(v40, d40, 20, 8);
    const dir = join(tmp, "idx-rabitq-d40");
    await buildIvfIndex(arraySource(v40, d40), units(1500), dir, { quantize: "rabitq", sample: 1500, k1: 4, k2: 4 });
    const disk = IvfIndex.open(dir, readManifest(dir));
    const got = disk.search(q40, 20, { nprobe: 6, refine: 120 });
    await disk.close();
    expect(got.every((h) => h.length === 20)).toBe(true);
    const mem = IvfIndex.open(dir, readManifest(dir), { threads: 2, rowsInMemory: true });
    expect(mem.search(q40, 20, { nprobe: 6, refine: 120 })).toEqual(got);
    expect(await mem.searchBatch(q40, 20, { nprobe: 6, refine: 120 })).toEqual(got);
    await mem.close();
  });

  it("opens as a dense Retriever: query vectors in, KILT units out; text queries need an encoder", async () => {
    const dir = join(tmp, "idx-binary");
    sealIndex(dir);
    const r = await openDense(dir);
    const hits = await r.searchVectors(qs.subarray(0, dim), 5);
    expect(hits[0][0].unit).toBe(exact[0][0].unit);
    expect(r.units.get(hits[0][0].unit).wikipedia_id).toBe(String(1000 + Math.floor(exact[0][0].unit / 3)));
    await expect(r.search("who wrote it", 5)).rejects.toThrow("built from precomputed vectors and names no encoder");
    await r.close();
    expect(verifyIndex(dir).problems).toEqual([]);
  });

  it("refuses a row count that differs from the units', naming the file", async () => {
    await expect(buildIvfIndex(arraySource(vectors.subarray(0, 10 * dim), dim, "ten.npy"), units(11), join(tmp, "mismatch"), { quantize: "binary" })).rejects.toThrow("ten.npy has 10 rows, the units go on past that (unit 11: 1003)");
    await expect(buildIvfIndex(arraySource(vectors.subarray(0, 10 * dim), dim, "ten.npy"), units(9), join(tmp, "mismatch2"), { quantize: "binary" })).rejects.toThrow("ten.npy has 10 rows, the units 9: row i must be unit i");
  });

  it("refuses files of another build, truncated files and damaged bytes", async () => {
    const a = join(tmp, "idx-a");
    const b = join(tmp, "idx-b");
    await build("binary", a);
    await build("binary", b);
    sealIndex(a);
    copyFileSync(join(b, "codes.bin"), join(a, "codes.bin"));
    expect(() => IvfIndex.open(a, readManifest(a))).toThrow(/codes\.bin: from build [0-9a-f]{16}, the index is build [0-9a-f]{16} \(files of two builds mixed; rebuild the index\)/);
    await expect(openDense(a)).rejects.toThrow("files of two builds mixed");
    const c = join(tmp, "idx-c");
    await build("int8", c);
    const rescore = join(c, "rescore.i8");
    const bytes = readFileSync(rescore);
    writeFileSync(rescore, bytes.subarray(0, bytes.length - 64));
    expect(() => IvfIndex.open(c, readManifest(c))).toThrow(`${rescore}: ${bytes.length - 64} bytes, its header says ${bytes.length} (truncated)`);
    writeFileSync(rescore, bytes);
    sealIndex(c);
    const fd = openSync(rescore, "r+");
    writeSync(fd, Buffer.from([0x55]), 0, 1, bytes.length - 5);
    closeSync(fd);
    expect(verifyIndex(c).problems).toEqual([expect.stringContaining(`${rescore}: checksum`)]);
  });

  for (const kind of ["binary", "rabitq"] as const)
    it(`${kind}: a killed build resumes from its checkpoint and gives the same index as a fresh build`, async () => {
      const file = join(tmp, `kill-${kind}.npy`);
      writeFileSync(file, npy(n, dim, "<f4", new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength)));
      const dir = join(tmp, `idx-killed-${kind}`);
      const script = `
        import { buildIvfIndex } from ${JSON.stringify(join(process.cwd(), "dist/src/retrieval/dense/ivf-build.js"))};
        import { openVectorFile } from ${JSON.stringify(join(process.cwd(), "dist/src/retrieval/dense/vector-files.js"))};
        const units = Array.from({ length: ${n} }, (_, i) => ({ wikipedia_id: String(1000 + Math.floor(i / 3)), wikipedia_title: "", start_paragraph_id: (i % 3) + 1, end_paragraph_id: (i % 3) + 1, text: "" }));
        await buildIvfIndex(openVectorFile(${JSON.stringify(file)}), units, ${JSON.stringify(dir)}, { quantize: "${kind}", sample: 3000, k1: 8, k2: 8 }, { batch: 100, inputFiles: [${JSON.stringify(file)}],
          onProgress: (p) => { if (p.phase === "assign" && p.done >= 2500) process.kill(process.pid, "SIGKILL"); } });
      `;
      const killed = spawnSync(process.execPath, ["--input-type=module", "-e", script]);
      expect({ signal: killed.signal, stderr: killed.stderr.toString() }).toEqual({ signal: "SIGKILL", stderr: "" });
      const state = JSON.parse(readFileSync(join(dir, "build.json"), "utf8")) as { assigned: number; trained: boolean };
      expect(state.trained).toBe(true);
      expect(state.assigned).toBe(1600); // the last checkpoint: every 16 batches of 100
      const lines: string[] = [];
      const src = openVectorFile(file);
      await buildIvfIndex(src, units(n), dir, { quantize: kind, sample: 3000, k1: 8, k2: 8 }, { batch: 100, inputFiles: [file], log: (l) => lines.push(l) });
      src.close();
      expect(lines).toEqual([`${dir}: resuming an interrupted build (trained, 1,600 of 6,000 rows assigned)`]);
      const fresh = join(tmp, `idx-fresh-${kind}`);
      const src2 = openVectorFile(file);
      await buildIvfIndex(src2, units(n), fresh, { quantize: kind, sample: 3000, k1: 8, k2: 8 }, { batch: 100, inputFiles: [file] });
      src2.close();
      const body = (d: string, f: string) => {
        const b = readFileSync(join(d, f));
        return b.subarray(4 + b.readUInt32LE(0));
      };
      for (const f of ["ids.bin", "codes.bin", "lists.bin", "rescore.i8", "units.jsonl"]) expect(body(dir, f).equals(body(fresh, f))).toBe(true);
      // other inputs: the interrupted state is not reused
      const again: string[] = [];
      writeFileSync(join(dir, "build.json"), JSON.stringify({ ...state, identity: "something else" }));
      await buildIvfIndex(arraySource(vectors, dim), units(n), dir, { quantize: kind, sample: 3000, k1: 8, k2: 8 }, { log: (l) => again.push(l) });
      expect(again).toEqual([`${dir}: the inputs or parameters changed since the interrupted build: starting over`]);
    });

  it("cleans up", () => {
    rmSync(tmp, { recursive: true, force: true });
  });
});
