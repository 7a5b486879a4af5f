// The dense build's files are created exclusively under unique temporary names and renamed into place:
// links planted at the old fixed temporary name (`vectors.f32.partial`) or at the final names are never
// followed, a failed build leaves no temporary file, and a killed build's file is removed by the next one.

import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildDenseIndex } from "../../../src/retrieval/dense/index.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";
import { DIM, HashEncoder, makeUnits, slowly } from "./hash-encoder.js";

const VICTIM_TEXT = "precious data that must survive\n";

function setup(): { dir: string; out: string; victim: string } {
  const dir = mkdtempSync(join(tmpdir(), "tartan-dense-safe-"));
  const victim = join(dir, "victim.txt");
  writeFileSync(victim, VICTIM_TEXT);
  return { dir, out: join(dir, "index"), victim };
}

describe("dense build: temporary files", () => {
  it("never follows a link planted at vectors.f32.partial", async () => {
    const { out, victim } = setup();
    mkdirSync(out);
    symlinkSync(victim, join(out, "vectors.f32.partial"));
    const enc = new HashEncoder();
    const m = await buildDenseIndex(slowly(makeUnits(40)), out, { encoder: enc.spec }, undefined, { encoder: enc });
    expect(m.units).toBe(40);
    expect(readFileSync(victim, "utf8")).toBe(VICTIM_TEXT);
    expect(lstatSync(join(out, "vectors.f32")).isFile()).toBe(true);
    expect(readFileSync(join(out, "vectors.f32")).length).toBe(40 * DIM * 4);
    // the planted link is left alone (it is not ours), and no temporary file of this build is left
    expect(readdirSync(out).filter((n) => n.endsWith(".partial"))).toEqual(["vectors.f32.partial"]);
  });

  it("replaces links planted at vectors.f32 and hnsw.bin instead of writing through them", async () => {
    const { out, victim } = setup();
    const enc = new HashEncoder();
    await buildDenseIndex(slowly(makeUnits(30)), out, { encoder: enc.spec, hnsw: { M: 8, efConstruction: 32 } }, undefined, { encoder: enc });
    for (const name of ["vectors.f32", "hnsw.bin"]) {
      const victim2 = `${victim}.${name}`;
      writeFileSync(victim2, VICTIM_TEXT);
      const path = join(out, name);
      unlinkSync(path); // the first build's file

      symlinkSync(victim2, path);
    }
    const enc2 = new HashEncoder();
    await buildDenseIndex(slowly(makeUnits(30)), out, { encoder: enc2.spec, hnsw: { M: 8, efConstruction: 32 } }, undefined, { encoder: enc2 });
    for (const name of ["vectors.f32", "hnsw.bin"]) {
      expect(readFileSync(`${victim}.${name}`, "utf8")).toBe(VICTIM_TEXT);
      expect(lstatSync(join(out, name)).isSymbolicLink()).toBe(false);
    }
    expect(readFileSync(join(out, "vectors.f32")).length).toBe(30 * DIM * 4);
  });

  it("removes its temporary file when encoding fails, and a killed build's file on the next build", async () => {
    const { out } = setup();
    const failing = new HashEncoder();
    let calls = 0;
    failing.encodePassages = async (texts) => {
      if (++calls === 2) throw new Error("encoder went away");
      return HashEncoder.prototype.encodePassages.call(failing, texts);
    };
    await expect(buildDenseIndex(slowly(makeUnits(20)), out, { encoder: failing.spec, batchSize: 8 }, undefined, { encoder: failing })).rejects.toThrow("encoder went away");
    expect(readdirSync(out).filter((n) => n.includes("vectors.f32"))).toEqual([]);
    // a temporary file left by a process that is gone (pid 2^22 + 1 is above the largest pid Linux allows)
    const stale = join(out, `vectors.f32.${(1 << 22) + 1}-0badc0de.partial`);
    writeFileSync(stale, "half a build");
    const enc = new HashEncoder();
    const units: Unit[] = makeUnits(20);
    await buildDenseIndex(slowly(units), out, { encoder: enc.spec }, undefined, { encoder: enc });
    expect(existsSync(stale)).toBe(false);
    expect(readdirSync(out).filter((n) => n.endsWith(".partial"))).toEqual([]);
  });
});
