// The leaderboard and the runs CLI on real data: HotpotQA and Wizard of Wikipedia dev predictions (the
// official evaluator's fixtures) recorded as two systems; figures equal the official evaluator's,
// tables take the KILT papers' shape in every format; the EvalAI export names files as the test sets.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync, copyFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildLeaderboard, renderLeaderboard, type Leaderboard } from "../../src/runs/leaderboard.js";
import { openRunsStore } from "../../src/runs/open.js";

const FIX = fileURLToPath(new URL("../../../shared/fixtures/eval/", import.meta.url));
const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-board-"));
const db = join(dir, "db");
const cli = (...args: string[]) => spawnSync("node", [CLI, ...args], { encoding: "utf8", cwd: dir });
const expected = (c: string) => JSON.parse(readFileSync(join(FIX, c, "expected.json"), "utf8"));
const hpGuess = join(dir, "hotpotqa-guess.jsonl");
let board: Leaderboard;

beforeAll(async () => {
  copyFileSync(join(FIX, "real-hotpotqa-dev-0-1499/guess.jsonl"), hpGuess);
  const add = (...a: string[]) => {
    const r = cli("runs", "add", ...a, "--runs", db);
    expect(r.stderr).toMatch(/^recorded /);
    expect(r.status).toBe(0);
  };
  const hpGold = join(FIX, "real-hotpotqa-dev-0-1499/gold.jsonl");
  add(hpGuess, "--gold", hpGold, "--dataset", "hotpotqa", "--name", "A-hotpotqa", "--system", "A", "--notes", "page level");
  add(hpGuess, "--gold", hpGold, "--dataset", "hotpotqa", "--name", "B-hotpotqa", "--system", "B", "--rank-keys", "wikipedia_id,start_paragraph_id");
  add(join(FIX, "real-wow-dev-0-999/guess.jsonl"), "--gold", join(FIX, "real-wow-dev-0-999/gold.jsonl"), "--dataset", "wow", "--name", "A-wow", "--system", "A");
  const store = await openRunsStore(db);
  board = await buildLeaderboard(store, { samples: 1000 });
  await store.close();
}, 300_000);

describe("leaderboard", () => {
  it("holds the official evaluator's figures per system and dataset", () => {
    const hp = expected("real-hotpotqa-dev-0-1499");
    const hpPara = expected("real-hotpotqa-dev-0-1499-para");
    const wow = expected("real-wow-dev-0-999");
    expect(board.datasets).toEqual(["hotpotqa", "wow"]);
    expect(board.cells.downstream.A.hotpotqa!.mean).toBe(hp.eval_downstream.downstream.em);
    expect(board.cells.kilt.A.hotpotqa!.mean).toBe(hp.eval_downstream.kilt["KILT-em"]);
    expect(board.cells.rprec.A.hotpotqa!.mean).toBe(hp.eval_retrieval.Rprec);
    expect(board.cells.rprec.B.hotpotqa!.mean).toBe(hpPara.eval_retrieval.Rprec);
    expect(board.cells.recall.B.hotpotqa!.mean).toBe(hpPara.eval_retrieval["recall@5"]);
    expect(board.cells.downstream.A.wow!.metric).toBe("f1");
    expect(board.cells.downstream.A.wow!.mean).toBe(wow.eval_downstream.downstream.f1);
    expect(board.cells.kilt.A.wow!.mean).toBe(wow.eval_downstream.kilt["KILT-f1"]);
    expect(board.cells.rprec.B.wow).toBeUndefined();
    const c = board.cells.rprec.A.hotpotqa!;
    expect(c.interval.low).toBeLessThan(c.mean);
    expect(c.interval.high).toBeGreaterThan(c.mean);
  });
  it("the papers' shape: families over datasets, best in bold, systems ordered", () => {
    const text = renderLeaderboard(board, "text", ["rprec"]);
    const lines = text.split("\n");
    expect(lines[0]).toBe("Page-level R-precision");
    expect(lines[2]).toMatch(/^\s+Open Domain QA\s+Dialogue$/);
    expect(lines[3]).toMatch(/^model\s+HoPo \(Rprec\)\s+WoW \(Rprec\)$/);
    const order = lines.slice(5, 7).map((l) => l.split(/\s+/)[0]);
    expect(order).toEqual(board.cells.rprec.A.hotpotqa!.mean >= board.cells.rprec.B.hotpotqa!.mean ? ["A", "B"] : ["B", "A"]);
    const tex = renderLeaderboard(board, "latex", ["kilt"]);
    expect(tex).toContain("\\toprule\n & Open Domain QA & Dialogue \\\\");
    expect(tex).toContain("\\cmidrule(lr){2-2}");
    expect(tex).toMatch(/\\textbf\{\d+\.\d\d\}/);
    const csv = renderLeaderboard(board, "csv").split("\n");
    expect(csv[0]).toBe("table,system,dataset,run,metric,mean,low,high");
    expect(csv).toContain(`rprec,A,hotpotqa,A-hotpotqa,Rprec,${expected("real-hotpotqa-dev-0-1499").eval_retrieval.Rprec},${board.cells.rprec.A.hotpotqa!.interval.low},${board.cells.rprec.A.hotpotqa!.interval.high}`);
    expect(renderLeaderboard(board, "html")).toContain('<th colspan="1">Dialogue</th>');
    expect(renderLeaderboard(board, "markdown")).toContain("| model | Open Domain QA HoPo (em) | Dialogue WoW (f1) |");
  });
  it("one dataset: its runs as rows, headline metric, KILT score, R-precision, recall@5", () => {
    const r = cli("leaderboard", "--runs", db, "--dataset", "HotpotQA", "--samples", "200", "--format", "markdown");
    expect(r.status).toBe(0);
    expect(r.stdout.split("\n")[2]).toBe("| system | em | KILT-em | Rprec | recall@5 |");
  });
});

describe("tartan runs", () => {
  it("list, show, rm", () => {
    const list = cli("runs", "list", "--runs", db).stdout.split("\n");
    expect(list[0]).toMatch(/^name\s+system\s+dataset\s+queries\s+created\s+notes$/);
    expect(list.slice(1, 4).map((l) => l.split(/\s+/).slice(0, 4).join(" "))).toEqual(["A-hotpotqa A hotpotqa 1,500", "B-hotpotqa B hotpotqa 1,500", "A-wow A wow 1,000"]);
    const show = JSON.parse(cli("runs", "show", "B-hotpotqa", "--runs", db, "--json").stdout);
    expect(show.config.eval.rankKeys).toEqual(["wikipedia_id", "start_paragraph_id"]);
    expect(show.summary.Rprec).toBe(expected("real-hotpotqa-dev-0-1499-para").eval_retrieval.Rprec);
    expect(cli("runs", "rm", "nope", "--runs", db).stderr).toContain('no run named "nope"');
  });
  it("export --evalai: one file per dataset, dev-set runs named for their split (never as the official test file); refuses a changed prediction file", () => {
    const out = join(dir, "evalai");
    const r = cli("runs", "export", "--evalai", out, "--system", "A", "--runs", db);
    expect(r.status).toBe(0);
    expect(readFileSync(join(out, "hotpotqa-dev-predictions-kilt.jsonl"), "utf8")).toBe(readFileSync(hpGuess, "utf8"));
    expect(existsSync(join(out, "wow-dev-predictions-kilt.jsonl"))).toBe(true);
    expect(existsSync(join(out, "hotpotqa-test_without_answers-kilt.jsonl"))).toBe(false);
    expect(r.stderr).toContain("scored on dev: not a submission");
    writeFileSync(hpGuess, `${readFileSync(hpGuess, "utf8")}\n`);
    const again = cli("runs", "export", "--evalai", join(dir, "evalai2"), "--system", "A", "--runs", db);
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/changed since it was recorded/);
    expect(cli("runs", "rm", "A-wow", "--runs", db).status).toBe(0);
    expect(cli("runs", "list", "--runs", db).stdout).not.toContain("A-wow");
  });
});

describe("leaderboard order and marks (issue 27)", () => {
  const cell = (mean: number, run: string) => ({ metric: "em", mean, interval: { low: mean - 0.01, high: mean + 0.01 }, run });
  const synthetic = (cells: Leaderboard["cells"]["downstream"]): Leaderboard => ({
    datasets: ["hotpotqa", "wow"],
    systems: Object.keys(cells),
    cells: { downstream: cells, rprec: {}, recall: {}, kilt: {} },
    settings: { samples: 1000, seed: 42, level: 0.95 },
  });

  it("orders by the datasets every row has, says so, and stars the best in plain text", () => {
    // X is strong on HotpotQA but weak on WoW, where Y beats it: Y ranks first (X's mean over both was higher).
    const board = synthetic({ X: { hotpotqa: cell(0.9, "x-hp"), wow: cell(0.2, "x-wow") }, Y: { wow: cell(0.5, "y-wow") } });
    const lines = renderLeaderboard(board, "text", ["downstream"]).split("\n");
    expect(lines.slice(5, 7).map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual(["Y -", "X 90.00*"]);
    expect(lines[5]).toContain("50.00* [49.00, 51.00]");
    expect(lines.slice(-2)).toEqual([
      "[low, high]: 95% bootstrap interval (1,000 resamples, seed 42); *: best in its column.",
      "rows: best first by the mean over WoW (the datasets every row has).",
    ]);
    expect(renderLeaderboard(board, "markdown", ["downstream"])).toContain("bold: best in its column");
  });

  it("with no dataset in every row: by datasets covered, then the mean", () => {
    const board = synthetic({ X: { hotpotqa: cell(0.3, "x") }, Y: { wow: cell(0.6, "y") }, Z: { hotpotqa: cell(0.1, "z1"), wow: cell(0.2, "z2") } });
    const lines = renderLeaderboard(board, "text", ["downstream"]).split("\n");
    expect(lines.slice(5, 8).map((l) => l.split(/\s+/)[0])).toEqual(["Z", "Y", "X"]);
    expect(lines.at(-1)).toBe("rows: no dataset is in every row; by the datasets covered, then the mean over them.");
  });
});
