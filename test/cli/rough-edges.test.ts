// The rough edges a new user hit (issue 27), through the compiled CLI: swapped GOLD and GUESS told from
// the files' shapes whatever their inputs say, notes when no prediction has a rank key or no passage has
// text, clear messages for missing files.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/real-hotpotqa-dev-0-1499/", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-edges-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, any>);
const write = (name: string, records: unknown[]) => {
  const path = join(tmp, name);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
};

const GOLD = join(FIX, "gold.jsonl");
const gold = lines(GOLD);
const inputs = new Map(gold.map((g) => [g.id, g.input]));
/** KILT's baseline outputs: predictions that carry the question as input. */
const withInput = write("guess-with-input.jsonl", lines(join(FIX, "guess.jsonl")).map((p) => ({ id: p.id, input: inputs.get(p.id), output: p.output })));
/** Downstream-only predictions with inputs: answers, no provenance. */
const answersOnly = write("answers-only.jsonl", lines(join(FIX, "guess.jsonl")).map((p) => ({ id: p.id, input: inputs.get(p.id), output: [{ answer: p.output[0].answer }] })));

describe("1. swapped GOLD and GUESS, told from the files' shapes", () => {
  for (const [name, guess] of [
    ["predictions with inputs and provenance", withInput],
    ["answer-only predictions with inputs", answersOnly],
  ] as const) {
    it(`${name}: exit 2, the swap said first, nothing scored`, () => {
      const r = tartan("eval", guess, GOLD, "--json");
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.split("\n")[0]).toBe(
        `error   [input] did you swap GOLD and GUESS? ${guess} looks like predictions and ${GOLD} like gold records (tartan takes GOLD first; the official scripts take GUESS first)`,
      );
    });
  }

  it("the right order scores them, and gold without mapped evidence is not taken for predictions", () => {
    const right = tartan("eval", GOLD, withInput, "--json");
    expect(right.code).toBe(0);
    expect(right.stderr).not.toContain("swap");
    const bare = write("gold-without-bleu.jsonl", gold.map((g) => ({ ...g, output: g.output.map((o: any) => ({ ...o, provenance: (o.provenance ?? []).map(({ bleu_score: _b, ...p }: any) => p) })) })));
    const r = tartan("eval", bare, withInput, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(right.stdout));
  });
});

describe("2. all-zero retrieval metrics explained once", () => {
  const noText = write("guess-no-text.jsonl", lines(join(FIX, "guess.jsonl")).map((p) => ({ ...p, output: p.output.map((o: any) => ({ ...o, provenance: o.provenance.map(({ text: _t, ...rest }: any) => rest) })) })));

  it("names the rank key no prediction has, and the missing passage text", () => {
    const r = tartan("eval", GOLD, noText, "--rank-keys", "wikipedia_id,paragraph_id", "--json");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(
      "note    [retrieval] no prediction's provenance has paragraph_id (--rank-keys wikipedia_id,paragraph_id): no retrieved passage can match the gold, so Rprec, precision@k, recall@k and success_rate@k are 0\n" +
        "note    [retrieval] no prediction's provenance carries text: answer_in_context@k, answer_and_ent_in_context@k and entity_in_context@k are 0 (they look in the passages' text; tartan retrieve --text full writes it)\n",
    );
    const ret = JSON.parse(r.stdout).eval_retrieval;
    expect([ret.Rprec, ret["recall@5"], ret["answer_in_context@5"], ret["entity_in_context@20"]]).toEqual([0, 0, 0, 0]);
  });

  it("says nothing when the keys and texts are there", () => {
    const r = tartan("eval", GOLD, join(FIX, "guess.jsonl"), "--rank-keys", "wikipedia_id,start_paragraph_id", "--json");
    expect([r.code, r.stderr]).toEqual([0, ""]);
  });
});

describe("7. clear messages for missing files", () => {
  it("a missing file is named in words, not as a raw ENOENT", () => {
    const missing = join(tmp, "no-such-guess.jsonl");
    expect(tartan("eval", GOLD, missing)).toEqual({ code: 2, stdout: "", stderr: `tartan: ${missing}: no such file or directory\n` });
    expect(tartan("validate", missing).stderr).toBe(`tartan validate: cannot read ${missing}: no such file or directory\n`);
  });

  it("--gold-dir names the prediction file it looked for", () => {
    const goldDir = join(tmp, "gold-dir");
    const guessDir = join(tmp, "guess-dir");
    for (const d of [goldDir, guessDir]) spawnSync("mkdir", ["-p", d]);
    writeFileSync(join(goldDir, "hotpotqa-dev-kilt.jsonl"), readFileSync(GOLD));
    writeFileSync(join(guessDir, "nq-dev.jsonl"), "");
    const r = tartan("eval", "--gold-dir", goldDir, "--guess-dir", guessDir);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`hotpotqa-dev: no prediction file: looked in ${guessDir} for hotpotqa-dev-kilt.jsonl or a .jsonl file named hotpotqa-dev* or hotpot-dev*\n`);
    expect(r.stdout).toContain("failed: no prediction file\n");
    writeFileSync(join(guessDir, "hotpotqa-dev-a.jsonl"), "");
    writeFileSync(join(guessDir, "hotpotqa-dev-b.jsonl"), "");
    expect(tartan("eval", "--gold-dir", goldDir, "--guess-dir", guessDir).stderr).toBe(
      `hotpotqa-dev: no prediction file: several in ${guessDir} could be hotpotqa-dev-kilt.jsonl's (hotpotqa-dev-a.jsonl, hotpotqa-dev-b.jsonl); keep one\n`,
    );
  });
});

describe("4. Mintaka: the converter and the evaluator agree by default", () => {
  const MINTAKA = fileURLToPath(new URL("../../../shared/data/mintaka/mintaka_dev.json", import.meta.url));

  it("the converted gold's first answers, as predictions, score hits@1 1 on every count question", () => {
    const gold = join(tmp, "mintaka-dev-en.jsonl");
    expect(tartan("datasets", "convert", "mintaka", MINTAKA, "--out", gold).code).toBe(0);
    const records = lines(gold);
    const count = records.find((r) => r.id === "88bdb808-en")!;
    expect(count.output).toEqual([{ answer: "6" }]);
    expect(count.meta.supporting_entities ?? count.meta.answer_entities).toBeDefined();
    const guess = write("mintaka-identity.jsonl", records.map((r) => ({ id: r.id, output: [r.output[0]] })));
    const r = tartan("eval", "--task", "mintaka", gold, guess, "--json");
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.by_complexity_type.count).toEqual({ count: 200, hits: 200, "hits@1": 1 });
    expect(report.overall).toEqual({ count: 2000, hits: 2000, "hits@1": 1 });
  });

  it("--count-entities on both sides: entities after the count, accepted by the evaluator", () => {
    const gold = join(tmp, "mintaka-dev-en-entities.jsonl");
    expect(tartan("datasets", "convert", "mintaka", MINTAKA, "--out", gold, "--count-entities").code).toBe(0);
    const count = lines(gold).find((r) => r.id === "88bdb808-en")!;
    expect(count.output[0]).toEqual({ answer: "6" });
    expect(count.output.length).toBe(8);
    const second = write("mintaka-second.jsonl", [{ id: "88bdb808-en", output: [{ answer: count.output[1].answer }] }]);
    const plain = JSON.parse(tartan("eval", "--task", "mintaka", gold, second, "--json").stdout);
    const entities = JSON.parse(tartan("eval", "--task", "mintaka", gold, second, "--json", "--count-entities").stdout);
    expect([plain.overall.hits, entities.overall.hits]).toEqual([0, 1]);
  });
});

describe("6. tartan retrieve writes compact runs unless asked for text", () => {
  it("no passage text by default; --text full writes it", () => {
    const pages = write("pages.jsonl", [
      { wikipedia_id: "1", wikipedia_title: "Alpha", text: ["Alpha\n", "Alpha is the first letter of the Greek alphabet.\n"] },
      { wikipedia_id: "2", wikipedia_title: "Beta", text: ["Beta\n", "Beta is the second letter.\n"] },
    ]);
    const index = join(tmp, "index-bm25");
    expect(tartan("index", "build", "--kind", "bm25", "--pages", pages, "--unit", "paragraph", "--out", index).code).toBe(0);
    const questions = write("questions.jsonl", [{ id: "q1", input: "the first letter of the Greek alphabet" }]);
    const compact = join(tmp, "run-compact.jsonl");
    const full = join(tmp, "run-full.jsonl");
    expect(tartan("retrieve", "--index", index, "--input", questions, "--out", compact, "--top-k", "2").code).toBe(0);
    expect(tartan("retrieve", "--index", index, "--input", questions, "--out", full, "--top-k", "2", "--text", "full").code).toBe(0);
    const [c] = lines(compact);
    const [f] = lines(full);
    expect(c.output[0].provenance.map((p: any) => [p.wikipedia_id, p.start_paragraph_id, "text" in p])).toEqual([
      ["1", 1, false],
      ["2", 1, false],
    ]);
    expect(f.output[0].provenance.map((p: any) => p.text)).toEqual(["Alpha is the first letter of the Greek alphabet.", "Beta is the second letter."]);
  });
});
