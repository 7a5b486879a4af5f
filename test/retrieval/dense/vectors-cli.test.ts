// Precomputed vectors end to end through the CLI: `index build --kind dense --vectors --ids` (compressed
// and exact), `retrieve --query-vectors` writing KILT guesses with provenance and TREC runs, the fusion of
// the dense index with BM25 over the same SQuAD paragraphs (the dense member searches the vectors, BM25
// the text), and the refusals of a wrong row count and of flags without --vectors.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../../src/knowledge/build.js";
import { buildIndex } from "../../../src/retrieval/build.js";
import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";
import { UnitStore } from "../../../src/retrieval/units/store.js";
import { npyBytes } from "./npy.js";

const V11 = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = join(process.cwd(), "dist", "src", "cli", "main.js");
const tmp = mkdtempSync(join(tmpdir(), "tartan-veccli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const dim = 32;

const npy = (rows: number, v: Float32Array): Buffer => npyBytes(rows, dim, v);

function rand(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296 - 0.5;
  };
}

const tartan = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8" });

let n = 0;
let gold: number[] = [];
beforeAll(async () => {
  const pages = join(tmp, "pages.jsonl");
  await fromSquad(V11, pages, () => {});
  // the first 3 articles' paragraphs, as BM25 indexes them
  const head = readFileSync(pages, "utf8").split("\n").slice(0, 3).join("\n") + "\n";
  writeFileSync(join(tmp, "pages3.jsonl"), head);
  // a knowledge-source store and a unit table of its paragraphs: BM25 and the dense index share the units
  for (const args of [["ks", "ingest", join(tmp, "pages3.jsonl"), "--out", join(tmp, "ks")], ["ks", "passages", "--ks", join(tmp, "ks"), "--table", join(tmp, "units"), "--unit", "paragraph"]]) {
    const p = tartan(...args);
    if (p.status !== 0) throw new Error(p.stderr);
  }
  await buildIndex({ kind: "bm25", units: join(tmp, "units"), out: join(tmp, "bm25") }, () => {});
  const units = UnitStore.open(join(tmp, "bm25"));
  n = units.count;
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const u = units.get(i);
    ids.push(`${u.wikipedia_id}\t${u.start_paragraph_id}\t${u.end_paragraph_id}`);
  }
  units.close();
  writeFileSync(join(tmp, "ids.txt"), `${ids.join("\n")}\n`);
  const r = rand(7);
  const v = normalizeRows(Float32Array.from({ length: n * dim }, r), dim);
  writeFileSync(join(tmp, "passages.npy"), npy(n, v));
  // 20 queries: the first words of every 7th paragraph; query i's vector is a noisy copy of that paragraph's
  const records: string[] = [];
  gold = [];
  const units2 = UnitStore.open(join(tmp, "bm25"));
  for (let i = 0; i < 20; i++) {
    const g = i * 7;
    gold.push(g);
    records.push(JSON.stringify({ id: `q${i}`, input: units2.get(g).text.split(/\s+/).slice(0, 10).join(" ") }));
  }
  units2.close();
  writeFileSync(join(tmp, "records.jsonl"), `${records.join("\n")}\n`);
  const q = new Float32Array(records.length * dim);
  gold.forEach((g, i) => {
    for (let d = 0; d < dim; d++) q[i * dim + d] = v[g * dim + d] + 0.1 * r();
  });
  writeFileSync(join(tmp, "queries.npy"), npy(records.length, normalizeRows(q, dim)));
});

describe("precomputed vectors through the CLI", () => {
  it("builds compressed and exact indexes and retrieves with query vectors, alone and fused with BM25", () => {
    expect(n).toBe(148);
    for (const quantize of ["binary", "none"]) {
      const b = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "passages.npy"), "--ids", join(tmp, "ids.txt"), "--unit", "paragraph", "--quantize", quantize, "--lists", "3", "--out", join(tmp, `dense-${quantize}`));
      expect(b.status, b.stderr).toBe(0);
      expect(b.stderr).toContain(`dense index of 148 paragraph units (32-d precomputed vectors, ${quantize === "none" ? "exact" : "binary codes in 9 lists"})`);
      const r = tartan("retrieve", "--index", join(tmp, `dense-${quantize}`), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, `run-${quantize}.jsonl`), "--top-k", "5", ...(quantize === "none" ? [] : ["--nprobe", "9", "--refine", "148"]));
      expect(r.status, r.stderr).toBe(0);
      const guesses = readFileSync(join(tmp, `run-${quantize}.jsonl`), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; output: { provenance: { wikipedia_id: string; start_paragraph_id: number }[] }[] });
      expect(guesses).toHaveLength(20);
      const ids = readFileSync(join(tmp, "ids.txt"), "utf8").trim().split("\n");
      guesses.forEach((g, i) => {
        const [wid, p] = ids[gold[i]].split("\t");
        expect(g.output[0].provenance[0]).toMatchObject({ wikipedia_id: wid, start_paragraph_id: Number(p) });
      });
    }
    // fused with BM25: the dense index over the same unit table
    const t = tartan("index", "build", "--kind", "dense", "--vectors", join(tmp, "passages.npy"), "--units", join(tmp, "units"), "--lists", "3", "--out", join(tmp, "dense-table"));
    expect(t.status, t.stderr).toBe(0);
    const h = tartan("retrieve", "--index", join(tmp, "dense-table"), join(tmp, "bm25"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "hybrid.trec"), "--format", "trec", "--top-k", "3");
    expect(h.status, h.stderr).toBe(0);
    const lines = readFileSync(join(tmp, "hybrid.trec"), "utf8").trim().split("\n");
    expect(lines).toHaveLength(60);
    // both members rank the gold paragraph first (dense by its vector, BM25 by its first ten words): 2/61
    const ids = readFileSync(join(tmp, "ids.txt"), "utf8").trim().split("\n");
    const top = lines.filter((l) => l.split(" ")[3] === "1");
    expect(top.map((l) => l.split(" ").slice(0, 3).join(" "))).toEqual(gold.map((g, i) => `q${i} Q0 ${ids[g].split("\t").slice(0, 2).join("+")}`));
    for (const l of top) expect(Number(l.split(" ")[4])).toBeCloseTo(2 / 61, 12);
  });

  it("refuses query vectors of another count and vector flags without --vectors", () => {
    writeFileSync(join(tmp, "q3.npy"), npy(3, normalizeRows(Float32Array.from({ length: 3 * dim }, rand(1)), dim)));
    const r = tartan("retrieve", "--index", join(tmp, "dense-binary"), "--query-vectors", join(tmp, "q3.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "x.jsonl"));
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(`${join(tmp, "q3.npy")}: 3 query vectors for 20 records (row i is the query of record i)`);
    const b = tartan("index", "build", "--kind", "dense", "--pages", join(tmp, "pages3.jsonl"), "--quantize", "binary", "--out", join(tmp, "nope"));
    expect(b.status).not.toBe(0);
    expect(b.stderr).toContain("--ids, --dpr-passages, --dim, --dtype, --quantize, --lists, --nprobe and --refine go with --vectors FILE");
    const t = tartan("retrieve", "--index", join(tmp, "bm25"), "--query-vectors", join(tmp, "queries.npy"), "--input", join(tmp, "records.jsonl"), "--out", join(tmp, "y.jsonl"));
    expect(t.status).not.toBe(0);
    expect(t.stderr).toContain("query vectors given, but no index is dense");
  });
});
