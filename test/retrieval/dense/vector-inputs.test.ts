// Dense inputs that hold nothing or do not belong: vector files of no rows or of zero-dimensional rows
// (.npy of shape (0, d) and (n, 0), an empty .fvecs, an empty raw file) are refused at build naming the
// file; an exact index's vectors file from another build, or truncated, is refused at open naming the
// file (the size and CRC-32 recorded at build), for indexes from precomputed vectors and encoded ones.

import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildDenseFromVectors } from "../../../src/retrieval/dense/from-vectors.js";
import { buildDenseIndex, openDense } from "../../../src/retrieval/dense/index.js";
import { crc32 } from "node:zlib";
import { HashEncoder, makeUnits } from "./hash-encoder.js";
import { npyBytes } from "./npy.js";
import { unitVectors as vectors } from "./clustered.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-vecin-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));


writeFileSync(join(tmp, "ids.txt"), "1\n2\n3\n4\n5\n");

describe("empty and zero-dimensional vector files", () => {
  const cases: [string, Buffer, object, string][] = [
    ["rows0.npy", npyBytes(0, 16, new Float32Array(0)), {}, "shape (0, 16): no vectors"],
    ["dim0.npy", npyBytes(5, 0, new Float32Array(0)), {}, "shape (5, 0): zero-dimensional vectors"],
    ["empty.fvecs", Buffer.alloc(0), {}, "empty .fvecs file: no vectors"],
    ["empty.f32", Buffer.alloc(0), { dim: 16 }, "empty file: no vectors"],
  ];
  for (const [name, bytes, opts, message] of cases) {
    it(`refuses ${name} at build, naming the file, and writes nothing`, async () => {
      const file = join(tmp, name);
      writeFileSync(file, bytes);
      const out = join(tmp, `out-${name}`);
      await expect(buildDenseFromVectors({ vectors: file, ids: join(tmp, "ids.txt"), quantize: "none", ...opts }, out)).rejects.toThrow(`${file}: ${message}`);
      expect(existsSync(out)).toBe(false);
    });
  }
});

describe("through the CLI", () => {
  it("index build --vectors of shape (0, 16) exits 2 naming the file, and writes no index", () => {
    const file = join(tmp, "cli-rows0.npy");
    writeFileSync(file, npyBytes(0, 16, new Float32Array(0)));
    const out = join(tmp, "cli-out");
    const p = spawnSync(process.execPath, [join(process.cwd(), "dist", "src", "cli", "main.js"), "index", "build", "--kind", "dense", "--vectors", file, "--ids", join(tmp, "ids.txt"), "--quantize", "none", "--out", out], { encoding: "utf8" });
    expect(p.status).toBe(2);
    expect(p.stderr).toContain(`${file}: shape (0, 16): no vectors`);
    expect(existsSync(out)).toBe(false);
  });
});

describe("an exact index's vectors file", () => {
  const dim = 16;
  const build = async (name: string, seed: number): Promise<string> => {
    const file = join(tmp, `${name}.npy`);
    writeFileSync(file, npyBytes(5, dim, vectors(5, dim, seed)));
    const dir = join(tmp, name);
    await buildDenseFromVectors({ vectors: file, ids: join(tmp, "ids.txt"), quantize: "none" }, dir);
    return dir;
  };

  it("records its size and CRC-32 at build", async () => {
    const dir = await build("rec", 3);
    const m = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
    const bytes = readFileSync(join(dir, "vectors.f32"));
    expect(m.params.vectorsIdentity).toEqual({ bytes: 5 * dim * 4, crc32: (crc32(bytes) >>> 0).toString(16).padStart(8, "0") });
    const r = await openDense(dir, { threads: 0 });
    expect((await r.searchVectors(vectors(5, dim, 3).slice(2 * dim, 3 * dim), 1))[0][0].unit).toBe(2);
    await r.close();
  });

  it("refuses another build's file of the same shape at open, naming it", async () => {
    const a = await build("a", 5);
    const b = await build("b", 7);
    copyFileSync(join(b, "vectors.f32"), join(a, "vectors.f32"));
    const want = JSON.parse(readFileSync(join(a, "manifest.json"), "utf8")).params.vectorsIdentity.crc32;
    const got = (crc32(readFileSync(join(b, "vectors.f32"))) >>> 0).toString(16).padStart(8, "0");
    await expect(openDense(a, { threads: 0 })).rejects.toThrow(`${join(a, "vectors.f32")}: checksum ${got}, the index recorded ${want} at build (a vectors file of another build, or corrupt; rebuild the index)`);
  });

  it("refuses a truncated file at open, naming it", async () => {
    const dir = await build("cut", 9);
    truncateSync(join(dir, "vectors.f32"), 4 * dim * 4);
    await expect(openDense(dir, { threads: 0 })).rejects.toThrow(`${join(dir, "vectors.f32")}: 256 bytes, the index recorded 320 at build (truncated; rebuild the index)`);
  });

  it("refuses a manifest whose recorded identity is not one, naming the field", async () => {
    const dir = await build("badid", 11);
    const file = join(dir, "manifest.json");
    const m = JSON.parse(readFileSync(file, "utf8"));
    m.params.vectorsIdentity = { bytes: "320", crc32: 7 };
    writeFileSync(file, JSON.stringify(m));
    await expect(openDense(dir, { threads: 0 })).rejects.toThrow(`${file}: params.vectorsIdentity must be { bytes, crc32 } (an integer and 8 hex digits), got {"bytes":"320","crc32":7}`);
  });

  it("holds for an encoded index too", async () => {
    const enc = new HashEncoder();
    const units = makeUnits(6);
    const a = join(tmp, "enc-a");
    const b = join(tmp, "enc-b");
    await buildDenseIndex(units, a, { encoder: enc.spec }, undefined, { encoder: enc });
    await buildDenseIndex([...units].reverse(), b, { encoder: enc.spec }, undefined, { encoder: enc });
    const r = await openDense(a, { threads: 0, encoder: enc });
    await r.close();
    copyFileSync(join(b, "vectors.f32"), join(a, "vectors.f32"));
    await expect(openDense(a, { threads: 0, encoder: enc })).rejects.toThrow(`${join(a, "vectors.f32")}: checksum`);
  });
});
