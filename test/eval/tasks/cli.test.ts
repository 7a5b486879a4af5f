// The compiled CLI for Mintaka and WikiReading: `datasets convert mintaka|wikireading` and
// `eval --task mintaka|wikireading` (JSON and table output), end to end on the real Mintaka dev file
// and the hand-written WikiReading shard.

import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../../dist/src/cli/main.js", import.meta.url));
const DEV = fileURLToPath(new URL("../../../../shared/data/mintaka/mintaka_dev.json", import.meta.url));
const SHARD = fileURLToPath(new URL("../../fixtures/wikireading/shard.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-tasks-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync("node", [CLI, ...args], { encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const readLines = (f: string) => readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l));

describe("tartan datasets convert mintaka and eval --task mintaka", () => {
  const all = join(tmp, "mintaka-dev-all.jsonl");

  it("converts the dev file in all nine languages", () => {
    const r = tartan("datasets", "convert", "mintaka", DEV, "--lang", "all", "--out", all);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`18,000 records (9 languages) from 2,000 questions → ${all}; answer types boolean 284, date 136, entity 1,443, numerical 136, string 1\n`);
    const recs = readLines(all);
    expect(recs.length).toBe(18000);
    expect(recs[8]).toMatchObject({ id: "9ace9041-pt", input: "Qual é o quarto livro da série Crespúsculo?" });
  });

  it("scores predictions against the converted records and against the JSON, with breakdowns as JSON", () => {
    const guess = join(tmp, "mintaka-guess.jsonl");
    writeFileSync(
      guess,
      [
        { id: "9ace9041-ja", output: [{ answer: "x", meta: { wikidata_id: "Q53945" } }] },
        { id: "db942bdc-ja", output: [{ answer: "いいえ" }] },
        { id: "a1bee914-ja", output: [{ answer: "３" }] },
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    for (const gold of [all, DEV]) {
      const r = tartan("eval", "--task", "mintaka", gold, guess, "--lang", "ja", "--json");
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out.overall).toEqual({ count: 2000, hits: 2, "hits@1": 0.001 });
      expect(out.by_language).toEqual({ ja: { count: 2000, hits: 2, "hits@1": 0.001 } });
      expect(out.by_complexity_type.ordinal).toEqual({ count: 200, hits: 1, "hits@1": 0.005 });
      expect(out.by_complexity_type.comparative).toEqual({ count: 200, hits: 1, "hits@1": 0.005 });
      expect(out.by_answer_type.numerical).toEqual({ count: 136, hits: 0, "hits@1": 0 });
      expect(out.judged_by).toEqual({ wikidata_id: 1, string: 2 });
      expect(r.stderr).toContain("1997 of 2000 gold questions have no prediction");
    }
    const table = tartan("eval", "--task", "mintaka", DEV, guess);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain("complexity type  count  hits@1");
    expect(table.stdout).toContain("  ordinal          200  0.0050");
    expect(table.stdout).toContain("2000 questions (ja); 3 predictions scored, 1997 missing, 0 ignored; judged by Wikidata id 1, by string 2 (match: exact)");
  });

  it("rejects an unknown task or language", () => {
    const r = tartan("eval", "--task", "squad", DEV, DEV);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("tartan: --task must be one of kilt, mintaka, wikireading\n");
    const l = tartan("datasets", "convert", "mintaka", DEV, "--lang", "zh", "--out", join(tmp, "x.jsonl"));
    expect(l.code).not.toBe(0);
    expect(l.stderr).toContain("--lang must be one of en, ar, de, es, fr, hi, it, ja, pt or all");
  });
});

describe("tartan datasets convert wikireading and eval --task wikireading", () => {
  const out = join(tmp, "wr.jsonl");
  const props = join(tmp, "props.json");

  it("converts the shard and writes the property table", () => {
    const r = tartan("datasets", "convert", "wikireading", SHARD, "--out", out, "--property-stats", props);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`16 records → ${out}\n5 properties (2 categorical, 1 date) → ${props}\n`);
    const recs = readLines(out);
    expect(recs.map((x: { input: string }) => x.input).slice(0, 2)).toEqual(["Marie Curie [SEP] instance of", "Marie Curie [SEP] sex or gender"]);
    expect(JSON.parse(readFileSync(props, "utf8")).properties["sex or gender"].class).toBe("relational");
    const limited = tartan("datasets", "convert", "wikireading", SHARD, "--out", join(tmp, "wr3.jsonl"), "--limit", "3", "--no-text");
    expect(limited.code).toBe(0);
    expect(readLines(join(tmp, "wr3.jsonl")).map((x: { output: { provenance?: { text?: string }[] }[] }) => x.output[0].provenance?.[0].text)).toEqual([undefined, undefined, undefined]);
  });

  it("scores Mean F1 with the categorical/relational/date breakdown", () => {
    const guess = join(tmp, "wr-guess.jsonl");
    writeFileSync(
      guess,
      [
        { id: "7186:occupation", output: [{ answer: "physicist" }] }, // 2/3
        { id: "7251:occupation", output: [{ answer: "mathematician; cryptanalyst" }] }, // 1/2 with --answer-separator ";"
        { id: "90:country", output: [{ answer: "France" }] }, // 1
        { id: "937:date of birth", output: [{ answer: "14 March 1879" }] }, // 1
      ]
        .map((l) => JSON.stringify(l))
        .join("\n"),
    );
    const r = tartan("eval", "--task", "wikireading", out, guess, "--property-stats", props, "--answer-separator", ";", "--json");
    expect(r.code).toBe(0);
    const rep = JSON.parse(r.stdout);
    expect(rep.overall).toEqual({ count: 16, "mean-f1": (2 / 3 + 1 / 2 + 1 + 1) / 16 });
    expect(rep.categorical).toEqual({ count: 6, "mean-f1": 1 / 6 });
    expect(rep.relational.count).toBe(10);
    expect(rep.relational["mean-f1"]).toBeCloseTo((2 / 3 + 1 / 2 + 1) / 10, 15);
    expect(rep.date).toEqual({ count: 3, "mean-f1": 1 / 3 });
    const table = tartan("eval", "--task", "wikireading", SHARD, guess, "--train", SHARD, "--answer-separator", ";");
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ {2}categorical +6 +0\.1667$/m);
    expect(table.stdout).toMatch(/^ {2}date +3 +0\.3333$/m);
    expect(table.stdout).toMatch(/^ {2}all +16 +0\.1979$/m);
  });
});
