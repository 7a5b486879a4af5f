// An impact index built by a SPLADE encoder run over real units (the paragraphs of SQuAD's first two
// articles) on the random BERT-MLM fixture (test/fixtures/splade-onnx/make.py): its postings are exactly
// the NumPy reference's weights quantized (round(w × 100); a weight within 1e-3 of a rounding boundary,
// where float32 may round the other way, takes either neighbour), with document top-k pruning too; one
// thread and two give the same index; a killed build resumes to it; the manifest records the encoder,
// and text queries are encoded with it (ranked as brute force over NumPy's query weights); an encoder
// directory missing vocab.txt and a manifest whose encoder is missing are refused, naming them.

import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildIndex } from "../../../src/retrieval/build.js";
import { readManifest } from "../../../src/retrieval/manifest.js";
import { verifyIndexDir } from "../../../src/retrieval/verify.js";
import { unitsFrom } from "../../../src/retrieval/sources.js";
import { unitText } from "../../../src/retrieval/dense/build.js";
import { fromSquad } from "../../../src/knowledge/build.js";
import { ImpactRetriever, ImpactSearcher } from "../../../src/retrieval/impact/search.js";
import { buildImpactFromEncoder, ENCODED_FILE } from "../../../src/retrieval/impact/encode.js";
import { spladeSpecFromDir } from "../../../src/retrieval/impact/splade.js";
import type { ImpactIndexParams } from "../../../src/retrieval/impact/build.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";
import { UnitStore } from "../../../src/retrieval/units/store.js";

const UnitStoreOf = (dir: string) => UnitStore.open(dir);
import { makeSpladeFixture, SQUAD, type SpladeRef } from "./splade-fixture.js";

const CLI = fileURLToPath(new URL("../../../dist/src/cli/main.js", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-splade-build-"));
const quiet = () => {};
const pages = join(tmp, "pages.jsonl");
let units: Unit[] = [];
let dir = "";
let ref: SpladeRef;
const SCALE = 100;

beforeAll(async () => {
  await fromSquad(SQUAD, join(tmp, "all-pages.jsonl"), quiet);
  writeFileSync(pages, readFileSync(join(tmp, "all-pages.jsonl"), "utf8").split("\n").slice(0, 2).join("\n") + "\n");
  for await (const u of unitsFrom({ pages }, { unit: "paragraph", words: 100 })) units.push(u);
  ({ dir, ref } = makeSpladeFixture(units.map((u) => unitText(u, { title: true })), 128));
}, 300_000);

/** The reference's postings: "term unit" → the impacts it may have (two near a rounding boundary). */
function expected(weights: Record<string, number>[], topK = Infinity): { exact: Map<string, number[]>; ambiguous: number } {
  const exact = new Map<string, number[]>();
  let ambiguous = 0;
  weights.forEach((w, unit) => {
    const kept = Object.entries(w).sort((a, b) => b[1] - a[1]).slice(0, topK);
    if (topK < Infinity && Object.keys(w).length > topK) expect(kept[topK - 1][1] - Object.values(w).sort((a, b) => b - a)[topK]).toBeGreaterThan(1e-5); // two weights each within 5e-6 of the reference (the encoder test's worst) cannot swap
    for (const [term, x] of kept) {
      const v = x * SCALE;
      const frac = v - Math.floor(v);
      const options = Math.abs(frac - 0.5) < 1e-3 ? [Math.floor(v), Math.ceil(v)] : [Math.round(v)];
      if (options.length > 1) ambiguous++;
      const allowed = options.filter((o) => o > 0);
      if (allowed.length > 0) exact.set(`${term} ${unit}`, options);
    }
  });
  return { exact, ambiguous };
}

function postings(index: string): Map<string, number> {
  const s = ImpactSearcher.open(index);
  try {
    const out = new Map<string, number>();
    for (const p of s.postings()) out.set(`${p.term} ${p.unit}`, p.impact);
    return out;
  } finally {
    s.close();
  }
}

function expectPostings(index: string, weights: Record<string, number>[], topK?: number): void {
  const want = expected(weights, topK);
  const got = postings(index);
  for (const [key, impact] of got) expect(want.exact.get(key) ?? [], key).toContain(impact);
  for (const [key, options] of want.exact) if (!options.includes(0)) expect(got.has(key), key).toBe(true);
}

describe("impact index from a SPLADE encoder", () => {
  const full = join(tmp, "index-full");
  const spec = () => ({ dir, maxLength: 128 });

  it("holds exactly the reference's quantized weights, one thread or two, and records the encoder", async () => {
    expect(units.length).toBe(103);
    await buildIndex({ kind: "impact", pages, unit: "paragraph", params: { encoder: spec(), scale: SCALE }, threads: 1, out: full }, quiet);
    expectPostings(full, ref.texts!.weights);
    const two = join(tmp, "index-two");
    await buildIndex({ kind: "impact", pages, unit: "paragraph", params: { encoder: spec(), scale: SCALE }, threads: 2, out: two }, quiet);
    expect(postings(two)).toEqual(postings(full));
    const m = readManifest(full);
    const p = m.params as unknown as ImpactIndexParams;
    expect(p.encoder).toEqual({ type: "splade-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: 128 });
    expect(p.quantization).toEqual({ mode: "scale", scale: SCALE });
    expect([m.units, m.source, p.postings]).toEqual([103, pages, [...postings(full).keys()].length]);
    // the encoded collection is an intermediate: gone from the index
    expect(readdirSync(full).filter((f) => f.startsWith("splade."))).toEqual([]);
    await verifyIndexDir(full);
  });

  it("keeps each document's top k terms (docTopK)", async () => {
    const out = join(tmp, "index-top");
    await buildIndex({ kind: "impact", pages, unit: "paragraph", params: { encoder: { ...spec(), docTopK: 30 }, scale: SCALE }, out }, quiet);
    expectPostings(out, ref.texts!.weights, 30);
    const s = ImpactSearcher.open(out);
    const perUnit = new Map<number, number>();
    for (const p of s.postings()) perUnit.set(p.unit, (perUnit.get(p.unit) ?? 0) + 1);
    s.close();
    expect(Math.max(...perUnit.values())).toBe(30);
  });

  it("resumes a killed build after its last recorded window, to the same index", async () => {
    const out = join(tmp, "index-killed");
    const encoder = spladeSpecFromDir(dir, { maxLength: 128 });
    const input = { units: () => units, unit: "paragraph" as const, source: pages, encoder, quantization: { scale: SCALE } };
    await expect(
      buildImpactFromEncoder(input, out, {
        threads: 1,
        onWindow: () => {
          throw new Error("killed");
        },
      }),
    ).rejects.toThrow("killed");
    expect(readFileSync(join(out, ENCODED_FILE), "utf8").split("\n").length - 1).toBe(64);
    // a torn last line, as a kill in the middle of a write leaves
    writeFileSync(join(out, ENCODED_FILE), readFileSync(join(out, ENCODED_FILE), "utf8") + '{"id": "64", "vec');
    const s = await buildImpactFromEncoder(input, out, { threads: 1 });
    expect([s.resumedUnits, s.encoded, s.units]).toEqual([64, 39, 103]);
    expect(postings(out)).toEqual(postings(full));
  });

  it("encodes text queries with the manifest's encoder, ranked as brute force over NumPy's query weights", async () => {
    const r = new ImpactRetriever(full);
    try {
      const s = r.searcher;
      let compared = 0;
      for (let i = 0; i < 60; i++) {
        const q = ref.sample.texts[i];
        const hits = await r.search(q, 10);
        const want = s.searchExhaustive(new Map(Object.entries(ref.sample.weights[i])), 10);
        expect(hits.length).toBe(want.length);
        hits.forEach((h, j) => expect(Math.abs(h.score - want[j].score)).toBeLessThan(1e-3 * Math.max(1, want[j].score)));
        // the same units unless two reference scores are within float32's reach of each other
        const close = want.some((w, j) => j > 0 && want[j - 1].score - w.score < 1e-2);
        if (!close) {
          expect(hits.map((h) => h.unit)).toEqual(want.map((w) => w.unit));
          compared++;
        }
      }
      expect(compared).toBeGreaterThan(40);
      // a query's own terms are searched as they are, not encoded
      const terms = { [Object.keys(ref.texts!.weights[5])[0]]: 1 };
      expect((await r.search({ text: "", terms }, 3)).map((h) => h.unit)).toEqual(s.search(new Map(Object.entries(terms)), 3).map((h) => h.unit));
    } finally {
      await r.close();
    }
  });

  it("refuses an encoder directory without vocab.txt, and a manifest whose encoder is missing", async () => {
    const bare = mkdtempSync(join(tmpdir(), "tartan-splade-novocab-"));
    copyFileSync(join(dir, "model.onnx"), join(bare, "model.onnx"));
    await expect(buildIndex({ kind: "impact", pages, unit: "paragraph", params: { encoder: bare }, out: join(tmp, "novocab") }, quiet)).rejects.toThrow(`SPLADE encoder directory ${bare}: no vocab.txt`);
    const cli = spawnSync("node", [CLI, "index", "build", "--kind", "impact", "--pages", pages, "--unit", "paragraph", "--encoder", bare, "--out", join(tmp, "novocab-cli")], { encoding: "utf8" });
    expect(cli.status).not.toBe(0);
    expect(cli.stderr).toContain(`SPLADE encoder directory ${bare}: no vocab.txt`);
    // an index whose encoder moved away: text queries refused naming the manifest's field, terms still searched
    const moving = mkdtempSync(join(tmpdir(), "tartan-splade-moving-"));
    copyFileSync(join(dir, "model.onnx"), join(moving, "model.onnx"));
    copyFileSync(join(dir, "vocab.txt"), join(moving, "vocab.txt"));
    const out = join(tmp, "index-moving");
    await buildIndex({ kind: "impact", pages, unit: "paragraph", params: { encoder: { dir: moving, maxLength: 128 }, scale: SCALE }, out }, quiet);
    rmSync(join(moving, "model.onnx"));
    const r = new ImpactRetriever(out);
    try {
      await expect(r.search("what is a university?", 5)).rejects.toThrow(`${out}/manifest.json: params.encoder: model file ${join(moving, "model.onnx")}: cannot read (no such file)`);
      const term = Object.keys(ref.texts!.weights[0])[0];
      expect((await r.search({ text: "x", terms: { [term]: 1 } }, 5)).length).toBeGreaterThan(0);
    } finally {
      await r.close();
    }
    expect(existsSync(join(out, "manifest.json"))).toBe(true);
  });

  it("builds from the CLI with --encoder DIR and --params' encoder settings; retrieve and search encode text queries", async () => {
    const out = join(tmp, "index-cli");
    const b = spawnSync("node", [CLI, "index", "build", "--kind", "impact", "--pages", pages, "--unit", "paragraph", "--encoder", dir, "--params", '{"encoder": {"maxLength": 128}}', "--scale", String(SCALE), "--threads", "2", "--out", out], { encoding: "utf8" });
    expect(b.stderr).toMatch(/impact index of 103 paragraph units \(\d[\d,]* terms, [\d,]+ postings, SPLADE weights as impacts = round\(weight × 100\)\)/u);
    expect(b.status).toBe(0);
    expect(postings(out)).toEqual(postings(full));
    // text queries through tartan retrieve's search workers (each opens the manifest's encoder) and tartan search
    const records = join(tmp, "records.jsonl");
    writeFileSync(records, ref.sample.texts.slice(0, 6).map((input, i) => JSON.stringify({ id: `q${i}`, input })).join("\n") + "\n");
    const guess = join(tmp, "guess.jsonl");
    const ret = spawnSync("node", [CLI, "retrieve", "--index", out, "--input", records, "--out", guess, "--top-k", "5", "--threads", "2"], { encoding: "utf8" });
    expect(ret.status, ret.stderr).toBe(0);
    const got = readFileSync(guess, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { output: { provenance: { start_paragraph_id: number; score: number }[] }[] }).output[0].provenance.map((p) => [p.start_paragraph_id, p.score]));
    const r = new ImpactRetriever(out);
    try {
      const want = await r.searchBatch(ref.sample.texts.slice(0, 6), 5);
      expect(got).toEqual(want.map((hits) => hits.map((h) => [r.units.get(h.unit).start_paragraph_id, h.score])));
    } finally {
      await r.close();
    }
    const search = spawnSync("node", [CLI, "search", "--index", out, "-k", "2", ref.sample.texts[0]], { encoding: "utf8" });
    expect(search.status, search.stderr).toBe(0);
    expect(search.stdout.split("\n").filter((l) => /^\s+\d+\. /u.test(l))).toHaveLength(2);
    // tartan search --terms: the vector searched, not the words; a bad weight refused naming the term
    const terms = Object.fromEntries(Object.entries(ref.texts!.weights[7]).slice(0, 5));
    const byTerms = spawnSync("node", [CLI, "search", "--index", out, "-k", "3", "--terms", JSON.stringify(terms), "unrelated", "words"], { encoding: "utf8" });
    expect(byTerms.status, byTerms.stderr).toBe(0);
    const s = ImpactSearcher.open(out);
    const units = UnitStoreOf(out);
    try {
      const want = s.search(new Map(Object.entries(terms)), 3).map((h, i) => `${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${units.get(h.unit).wikipedia_title}  [${units.get(h.unit).wikipedia_id} ${units.get(h.unit).section ? `${units.get(h.unit).section} ` : ""}¶${units.get(h.unit).start_paragraph_id}]`);
      expect(byTerms.stdout.split("\n").filter((l) => /^\s+\d+\. /u.test(l))).toEqual(want);
    } finally {
      s.close();
      units.close();
    }
    const bad = spawnSync("node", [CLI, "search", "--index", out, "--terms", '{"bowl": -1}', "x"], { encoding: "utf8" });
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain('--terms["bowl"]: bad weight -1 (expected a finite number ≥ 0)');
  });
});
