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
