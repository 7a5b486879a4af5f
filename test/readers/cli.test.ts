// `tartan reader train` / `tartan reader eval` through the compiled CLI on real SQuAD data: a small
// seeded model from training-half articles, scored on held-out articles; same model from the SQuAD
// file and from converted KILT pages + records.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const SQUAD = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const EM_50 = 0.08; // held-out EM on the first 50 test-half questions (4 of 50; 80 training questions, all from Super Bowl 50)
const tmp = mkdtempSync(join(tmpdir(), "tartan-reader-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("tartan reader", () => {
  it("trains on articles 0-23 and evaluates on 24-47, deterministically, from SQuAD or from KILT files", () => {
    const m1 = join(tmp, "m1.json");
    const t = tartan("reader", "train", "--squad", SQUAD, "--limit", "80", "--epochs", "10", "--seed", "2", "--passages", "3", "--out", m1);
    expect(t.stderr).toBe("");
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/^trained on \d+ of 80 questions \(articles 0-23; \d+ without the answer among the candidates\)/);
    const model = JSON.parse(readFileSync(m1, "utf8"));
    expect(model.kind).toBe("tartan-span-ranker");
    expect(model.training.articles).toEqual([0, 24]);

    // The same data as KILT pages + records gives the identical model.
    const pages = join(tmp, "pages.jsonl");
    const records = join(tmp, "records.jsonl");
    expect(tartan("ks", "from-squad", SQUAD, "--out", pages).code).toBe(0);
    expect(tartan("datasets", "convert", "squad", SQUAD, "--pages", pages, "--out", records).code).toBe(0);
    const m2 = join(tmp, "m2.json");
    const t2 = tartan("reader", "train", "--pages", pages, "--records", records, "--limit", "80", "--epochs", "10", "--seed", "2", "--passages", "3", "--out", m2);
    expect(t2.code).toBe(0);
    const model2 = JSON.parse(readFileSync(m2, "utf8"));
    expect(model2.weights).toEqual(model.weights);

    const guesses = join(tmp, "guesses.jsonl");
    const e = tartan("reader", "eval", "--squad", SQUAD, "--model", m1, "--limit", "50", "--passages", "3", "--out", guesses, "--json");
    expect(e.code).toBe(0);
    const d = JSON.parse(e.stdout);
    const lines = readFileSync(guesses, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.length).toBe(50);
    expect(lines[0].id).toBe("57267b755951b619008f7433");
    expect(d.downstream.em).toBe(EM_50);
    expect(d.kilt["KILT-em"]).toBe(d.downstream.em);

    // --out naming an input is refused before anything is read or written: the records are untouched
    const before = readFileSync(records, "utf8");
    const overInput = tartan("reader", "eval", "--pages", pages, "--records", records, "--model", m2, "--limit", "5", "--out", records);
    expect(overInput.code).toBe(2);
    expect(overInput.stderr).toContain(`${records}: this output is the input ${records}`);
    const overModel = tartan("reader", "train", "--pages", pages, "--records", records, "--limit", "5", "--out", records);
    expect(overModel.code).toBe(2);
    expect(readFileSync(records, "utf8")).toBe(before);
  });

  it("names bad arguments", () => {
    const r = tartan("reader", "eval", "--model", join(tmp, "none.json"), "--articles", "first-half");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tartan: ${join(tmp, "none.json")}: cannot read the reader model (ENOENT)\n`);
    const s = tartan("reader", "train", "--squad", SQUAD, "--articles", "middle", "--out", join(tmp, "x.json"));
    expect(s.stderr).toMatch(/--articles: first-half, second-half, all or A-B, got "middle"/);
  });
});
