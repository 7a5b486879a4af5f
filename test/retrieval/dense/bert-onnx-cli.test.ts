// The bert-onnx encoder end to end through the CLI (dist/, built by `npm test`'s pretest): `tartan
// index build --kind dense --params '{"encoder": {"type": "bert-onnx", …}}'` over 289 SQuAD dev
// paragraphs with the random BERT-shaped graph of test/fixtures/bert-onnx/make.py, then text queries at
// search time (`tartan retrieve`, `tartan search`) encoded with the encoder the manifest records: every
// paragraph asked with its own text finds itself first.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { readSquadFile, squadToPages } from "../../../src/knowledge/squad.js";
import { BertOnnxEncoder } from "../../../src/retrieval/dense/bert.js";
import { makeBertFixture, SQUAD } from "./bert-fixture.js";

const CLI = fileURLToPath(new URL("../../../dist/src/cli/main.js", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-bert-cli-"));
const index = join(tmp, "index");
let fixture = "";

interface StoredUnit {
  wikipedia_id: string;
  start_paragraph_id: number;
  text: string;
}

function tartan(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 240_000 });
  if (r.status !== 0) throw new Error(`tartan ${args.join(" ")} exited ${r.status}:\n${r.stderr}`);
  return r;
}

beforeAll(() => {
  fixture = makeBertFixture().dir;
  // the first 6 articles, at most 49 paragraphs each: 289 paragraph units
  const squad = readSquadFile(SQUAD);
  const pages = squadToPages({ data: squad.data.slice(0, 6).map((a) => ({ ...a, paragraphs: a.paragraphs.slice(0, 49) })) });
  writeFileSync(join(tmp, "pages.jsonl"), pages.map((p) => JSON.stringify(p)).join("\n") + "\n");
}, 300_000);

describe("tartan index build --kind dense with a bert-onnx encoder", () => {
  it("builds the index, records the encoder, and finds each paragraph by its own text", { timeout: 600_000 }, async () => {
    const encoder = { type: "bert-onnx", model: join(fixture, "model.onnx"), vocab: join(fixture, "vocab.txt"), pooling: "mean", maxLength: 128, threads: 1 };
    const build = tartan("index", "build", "--kind", "dense", "--pages", join(tmp, "pages.jsonl"), "--unit", "paragraph", "--out", index, "--params", JSON.stringify({ encoder, title: false }));
    expect(build.stdout + build.stderr).toContain("dense index of 289 paragraph units");
    const manifest = JSON.parse(readFileSync(join(index, "manifest.json"), "utf8"));
    expect(manifest).toMatchObject({ kind: "dense", unit: "paragraph", units: 289 });
    expect(manifest.params).toMatchObject({ encoder, dim: 32, title: false, search: "exact" });

    // the stored vectors are the encoder's, unit length
    const units = readFileSync(join(index, "units.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as StoredUnit);
    expect(units.length).toBe(289);
    const vectors = new Float32Array(readFileSync(join(index, "vectors.f32")).buffer.slice(0));
    expect(vectors.length).toBe(289 * 32);
    const enc = await BertOnnxEncoder.load(encoder as Parameters<typeof BertOnnxEncoder.load>[0]);
    try {
      const want = await enc.encodePassages(units.slice(0, 40).map((u) => u.text));
      want.forEach((x, i) => expect(Math.abs(x - vectors[i])).toBeLessThan(1e-6));
    } finally {
      await enc.close();
    }

    // every 10th paragraph asked with its own text, through `tartan retrieve`
    const asked = units.filter((_, i) => i % 10 === 3);
    const records = join(tmp, "records.jsonl");
    writeFileSync(records, asked.map((u, i) => JSON.stringify({ id: `q${i}`, input: u.text })).join("\n") + "\n");
    const out = join(tmp, "guesses.jsonl");
    tartan("retrieve", "--index", index, "--input", records, "--out", out, "--top-k", "3", "--threads", "1");
    const guesses = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(guesses.length).toBe(29);
    guesses.forEach((g, i) => {
      const top = g.output[0].provenance[0];
      expect([g.id, top.wikipedia_id, top.start_paragraph_id]).toEqual([`q${i}`, asked[i].wikipedia_id, asked[i].start_paragraph_id]);
      expect(top.score).toBeCloseTo(1, 5);
      expect(g.output[0].provenance[1].score).toBeLessThan(0.999);
    });

    // and through `tartan search`
    const hit = tartan("search", "--index", index, "-k", "1", asked[5].text);
    expect(hit.stdout).toContain(`${asked[5].wikipedia_id}`);
  });
});
