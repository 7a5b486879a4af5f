// `tartan eval --json` prints what the official evaluator prints, as text (issue 36): numbers as Python
// floats (`1.0`, `1e-05`), so a text diff of the two outputs is empty. pythonFloat is checked against
// Python's own repr on edge values and 2,000 random doubles.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pythonFloat, pythonJson } from "../../src/util/python-json.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const OFFICIAL = new URL("../../../shared/tools/official-eval/run", import.meta.url).pathname;
const HOTPOT = new URL("../../../shared/data/kilt-dev/hotpotqa-dev-kilt.jsonl", import.meta.url).pathname;

describe("Python's JSON", () => {
  it("writes floats as Python's repr does", () => {
    const edge = [1, 0, 0.999999995, 1e-5, 0.0001, 0.00012345, 123, 1e16, 1.5e16, 2.5e-7, 1 / 3, 12345678901234567, 1e15, 0.1, -2.5, 5e-324, 1.7976931348623157e308];
    let seed = 7;
    const random = Array.from({ length: 2000 }, () => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      const e = (seed % 60) - 30;
      return (seed / 4294967296) * 10 ** e;
    });
    const all = [...edge, ...random];
    const r = spawnSync("python3", ["-c", "import sys, json\nfor x in json.load(sys.stdin): print(repr(float(x)))"], { input: JSON.stringify(all), encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(all.map(pythonFloat)).toEqual(r.stdout.trimEnd().split("\n"));
  });

  it("lays out as json.dumps(indent=2), ASCII only", () => {
    expect(pythonJson({ a: { b: 1, c: [0.5, "é"] }, d: null, e: {} })).toBe('{\n  "a": {\n    "b": 1.0,\n    "c": [\n      0.5,\n      "\\u00e9"\n    ]\n  },\n  "d": null,\n  "e": {}\n}');
  });

  it("tartan eval --json is the official evaluator's text", () => {
    const dir = mkdtempSync(join(tmpdir(), "tartan-pyjson-"));
    const gold = join(dir, "gold.jsonl");
    const lines = readFileSync(HOTPOT, "utf8").split("\n").slice(0, 200);
    writeFileSync(gold, `${lines.join("\n")}\n`);
    // predictions: the gold's first answer and provenance for every other record, an empty answer otherwise
    const guess = join(dir, "guess.jsonl");
    writeFileSync(guess, lines.map((l, i) => { const r = JSON.parse(l); return JSON.stringify({ id: r.id, output: [{ answer: i % 2 ? r.output[0].answer : "no", provenance: r.output.find((o: { provenance?: unknown[] }) => o.provenance)?.provenance ?? [] }] }); }).join("\n") + "\n");
    const ours = spawnSync(process.execPath, [CLI, "eval", gold, guess, "--json"], { encoding: "utf8" });
    const official = spawnSync(OFFICIAL, [gold, guess], { encoding: "utf8" });
    expect(ours.status, ours.stderr).toBe(0);
    expect(official.status, official.stderr).toBe(0);
    // the official JSON without its _meta block, as Python writes it
    const strip = spawnSync("python3", ["-c", "import sys, json\nd = json.load(sys.stdin)\nd.pop('_meta', None)\nprint(json.dumps(d, indent=2))"], { input: official.stdout, encoding: "utf8" });
    expect(strip.status, strip.stderr).toBe(0);
    expect(ours.stdout).toBe(strip.stdout);
    expect(ours.stdout).toContain('"em": ');
    expect(ours.stdout).not.toMatch(/: \d+,?\n/u);
  });
});
