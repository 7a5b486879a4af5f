// tartan compare on real runs: SQuAD questions retrieved by BM25, TF-IDF and their fusion. Means equal
// the evaluator's summaries exactly, t and Wilcoxon p-values equal SciPy's on these very scores, the
// randomization test and bootstrap repeat for a seed, and the tables render in every format.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { compareRuns, type ScoredRun } from "../../src/compare/compare.js";
import { defaultMetrics, loadRunScores } from "../../src/compare/load.js";
import { pairedTTest, wilcoxonTest } from "../../src/compare/parametric.js";
import { renderComparison } from "../../src/compare/render.js";
import { evaluate } from "../../src/eval/evaluate.js";
import { PARAGRAPH, RUNS, squadRuns, type SquadRuns } from "./squad-runs.js";

const scipy = JSON.parse(readFileSync(new URL("../fixtures/compare/scipy-squad.json", import.meta.url), "utf8")) as {
  queries: number;
  comparisons: { a: string; b: string; metric: string; ttest: { statistic: number; pvalue: number }; wilcoxon?: { statistic: number; pvalue: number } }[];
};

let data: SquadRuns;
const runs: ScoredRun[] = [];

beforeAll(async () => {
  data = await squadRuns();
  for (const r of RUNS) {
    const s = await loadRunScores(data.gold, data.kilt[r], { rankKeys: PARAGRAPH });
    runs.push({ name: r, ids: s.ids, metrics: s.metrics });
  }
}, 600_000);

describe("per-query scores of real runs", () => {
  it("means equal tartan eval's summary exactly", async () => {
    for (const [i, r] of RUNS.entries()) {
      const summary = (await evaluate(data.gold, data.kilt[r], { rankKeys: PARAGRAPH })).eval_retrieval!;
      const c = compareRuns([runs[i]], { samples: 10 });
      for (const m of c.metrics) expect(c.runs[0].cells[m].mean, `${r} ${m}`).toBe(summary[m]);
    }
    expect(runs[0].ids.length).toBe(scipy.queries);
  });
  it("t and Wilcoxon p-values equal SciPy's on the same scores (1e-12)", () => {
    const byName = Object.fromEntries(runs.map((r) => [r.name, r]));
    for (const c of scipy.comparisons) {
      const a = byName[c.a].metrics[c.metric];
      const b = byName[c.b].metrics[c.metric];
      const t = pairedTTest(a, b);
      expect(Math.abs(t.pvalue - c.ttest.pvalue), `${c.a} vs ${c.b} ${c.metric}`).toBeLessThanOrEqual(1e-12);
      if (c.wilcoxon) {
        const w = wilcoxonTest(a, b);
        expect(w.statistic).toBe(c.wilcoxon.statistic);
        expect(Math.abs(w.pvalue - c.wilcoxon.pvalue), `${c.a} vs ${c.b} ${c.metric}`).toBeLessThanOrEqual(1e-12);
      }
    }
  });
});

describe("compareRuns", () => {
  it("the default columns of a retrieval-only run; differences, counts and corrected p-values", () => {
    const metrics = defaultMetrics(Object.keys(runs[0].metrics));
    expect(metrics).toEqual(["Rprec", "recall@5", "precision@1"]);
    const r = compareRuns(runs, { metrics: ["Rprec", "recall@5"], test: "t", correction: "bonferroni", samples: 2000 });
    expect(r.baseline).toBe("bm25-paragraph");
    const tfidf = r.runs[1].comparisons!.Rprec;
    expect(tfidf.difference).toBe(r.runs[1].cells.Rprec.mean - r.runs[0].cells.Rprec.mean);
    const a = runs[1].metrics.Rprec;
    const b = runs[0].metrics.Rprec;
    let wins = 0;
    let losses = 0;
    for (let i = 0; i < a.length; i++) (a[i] > b[i] ? wins++ : a[i] < b[i] ? losses++ : 0);
    expect([tfidf.wins, tfidf.losses, tfidf.ties]).toEqual([wins, losses, a.length - wins - losses]);
    expect(tfidf.pvalue).toBe(pairedTTest(a, b).pvalue);
    expect(tfidf.adjusted).toBe(Math.min(1, tfidf.pvalue * 4));
    expect(tfidf.significant).toBe(true);
    expect(r.best.Rprec).toEqual(["bm25-paragraph"]);
    const iv = r.runs[0].cells.Rprec.interval;
    expect(iv.low).toBeLessThan(r.runs[0].cells.Rprec.mean);
    expect(iv.high).toBeGreaterThan(r.runs[0].cells.Rprec.mean);
  });
  it("randomization and bootstrap results repeat for a seed and change with it", () => {
    const opts = { metrics: ["Rprec"], samples: 1000, permutations: 2000 };
    const x = compareRuns(runs, { ...opts, seed: 3 });
    const y = compareRuns(runs, { ...opts, seed: 3 });
    const z = compareRuns(runs, { ...opts, seed: 4 });
    expect(JSON.stringify(x)).toBe(JSON.stringify(y));
    expect(x.runs[2].cells.Rprec.interval).not.toEqual(z.runs[2].cells.Rprec.interval);
  });
  it("any run can be the baseline; rows keep their order", () => {
    const r = compareRuns(runs, { metrics: ["Rprec"], baseline: "rrf", samples: 200, permutations: 200 });
    expect(r.runs.map((x) => x.name)).toEqual([...RUNS]);
    expect(r.runs[2].comparisons).toBeUndefined();
    expect(r.runs[0].comparisons!.Rprec.difference).toBe(r.runs[0].cells.Rprec.mean - r.runs[2].cells.Rprec.mean);
  });
  it("refuses runs on different queries, unknown metrics and duplicate names", () => {
    const short = { ...runs[1], ids: runs[1].ids.slice(1), metrics: { Rprec: (runs[1].metrics.Rprec as Float64Array).slice(1) } };
    expect(() => compareRuns([runs[0], short], { metrics: ["Rprec"] })).toThrow(/same gold file/);
    expect(() => compareRuns(runs, { metrics: ["nope"] })).toThrow(/has no metric "nope"/);
    expect(() => compareRuns([runs[0], runs[0]])).toThrow(/two runs are named/);
  });
});

describe("rendering", () => {
  const result = () => compareRuns(runs, { metrics: ["Rprec", "recall@5"], samples: 500, permutations: 500 });
  it("LaTeX booktabs: best in bold, significance daggers", () => {
    const tex = renderComparison(result(), "latex");
    expect(tex).toContain("\\toprule");
    expect(tex).toContain("\\bottomrule");
    expect(tex).toMatch(/\\textbf\{\d+\.\d\d\}/);
    expect(tex).toContain("$^\\dagger$");
    expect(tex).toContain("recall@5");
  });
  it("Markdown, CSV, JSON, HTML and text", () => {
    const r = result();
    const md = renderComparison(r, "markdown").split("\n");
    expect(md[0]).toBe("| run | Rprec | Δ | p | W/T/L | recall@5 | Δ | p | W/T/L |");
    const csv = renderComparison(r, "csv").split("\n");
    expect(csv[0]).toBe("run,metric,mean,low,high,baseline,difference,diff_low,diff_high,test,pvalue,adjusted,correction,significant,wins,ties,losses");
    expect(csv.length).toBe(1 + 3 * 2);
    expect(Number(csv[1].split(",")[2])).toBe(r.runs[0].cells.Rprec.mean);
    expect(JSON.parse(renderComparison(r, "json")).runs[1].comparisons.Rprec.pvalue).toBe(r.runs[1].comparisons!.Rprec.pvalue);
    expect(renderComparison(r, "html")).toMatch(/^<table>/);
    expect(renderComparison(r, "text")).toContain("Holm over 4 comparisons");
  });
});

describe("tartan compare (CLI)", () => {
  const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
  const cli = (...args: string[]) => spawnSync("node", [CLI, "compare", ...args], { encoding: "utf8" });
  it("compares prediction files and per-query files alike; --out never overwrites an input", () => {
    const pq = join(data.dir, "pq-bm25.jsonl");
    expect(spawnSync("node", [CLI, "eval", data.gold, data.kilt["bm25-paragraph"], "--rank-keys", PARAGRAPH.join(","), "--per-query", pq], { encoding: "utf8" }).status).toBe(0);
    const args = [data.gold, pq, data.kilt["tfidf-paragraph"], "--name", "bm25", "tfidf", "--rank-keys", PARAGRAPH.join(","), "--samples", "300", "--permutations", "300", "--format", "csv"];
    const r = cli(...args);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines.map((l) => l.split(",").slice(0, 2).join(","))).toEqual(["run,metric", "bm25,Rprec", "bm25,recall@5", "bm25,precision@1", "tfidf,Rprec", "tfidf,recall@5", "tfidf,precision@1"]);
    expect(Number(lines[4].split(",")[2])).toBe((runs[1].metrics.Rprec as Float64Array).reduce((x, y) => x + y, 0) / runs[1].metrics.Rprec.length);
    const out = join(data.dir, "table.tex");
    expect(cli(...args.slice(0, -2), "--format", "latex", "--out", out).status).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("\\begin{tabular}");
    const before = readFileSync(data.kilt["tfidf-paragraph"], "utf8");
    const clash = cli(...args, "--out", data.kilt["tfidf-paragraph"]);
    expect(clash.status).toBe(2);
    expect(clash.stderr).toContain(`${data.kilt["tfidf-paragraph"]}: this output is the input ${data.kilt["tfidf-paragraph"]} (the same path)`);
    expect(readFileSync(data.kilt["tfidf-paragraph"], "utf8")).toBe(before);
  });
  it("compares a run with answers against a retrieval-only run on the metrics both have", () => {
    // BM25's ranking with an answer for every question (the gold's first answer for every other one):
    // this run has em, KILT-em, …; TF-IDF's retrieval-only run does not.
    const gold = readFileSync(data.gold, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { id: string; output: { answer?: string }[] });
    const answered = join(data.dir, "bm25-answered.jsonl");
    const guesses = readFileSync(data.kilt["bm25-paragraph"], "utf8").split("\n").filter(Boolean).map((l, i) => {
      const g = JSON.parse(l) as { id: string; output: { answer?: string }[] };
      expect(g.id).toBe(gold[i].id);
      g.output[0].answer = i % 2 === 0 ? gold[i].output[0].answer! : "no";
      return JSON.stringify(g);
    });
    writeFileSync(answered, `${guesses.join("\n")}\n`);
    const r = cli(data.gold, answered, data.kilt["tfidf-paragraph"], "--name", "reader", "tfidf", "--rank-keys", PARAGRAPH.join(","), "--samples", "300", "--permutations", "300", "--format", "csv");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split("\n").map((l) => l.split(",").slice(0, 2).join(","))).toEqual(["run,metric", "reader,Rprec", "reader,recall@5", "reader,precision@1", "tfidf,Rprec", "tfidf,recall@5", "tfidf,precision@1"]);
    // Asked for, a metric one run lacks is still an error naming the run.
    const em = cli(data.gold, answered, data.kilt["tfidf-paragraph"], "--name", "reader", "tfidf", "--metrics", "em", "--samples", "300", "--permutations", "300");
    expect(em.status).toBe(2);
    expect(em.stderr).toContain('tfidf has no metric "em"');
  });
  it("names the file and line of a broken prediction file", () => {
    const bad = join(data.dir, "bad.jsonl");
    writeFileSync(bad, `${readFileSync(data.kilt.rrf, "utf8").split("\n")[0]}\n{"id": oops\n`);
    const r = cli(data.gold, data.kilt.rrf, bad);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${bad}:2`);
    expect(existsSync(bad)).toBe(true);
  });
  it("refuses a resample or permutation count that is not a positive integer, before reading the runs", () => {
    for (const [flag, value] of [["--samples", "0"], ["--permutations", "2.5"], ["--samples", "x"]]) {
      const r = cli(data.gold, data.kilt.rrf, data.kilt.rrf, flag, value);
      expect(r.status).not.toBe(0);
      expect(r.stderr).toContain(`option '${flag} <n>' argument '${value}' is invalid. expected a positive integer`);
    }
  });
});

describe("the terminal table (issue 27)", () => {
  it("has one row per metric and run, narrow whatever the number of metrics", () => {
    const ids = ["a", "b", "c", "d"];
    const r = compareRuns(
      [
        { name: "base", ids, metrics: { em: [1, 0, 0, 1], Rprec: [1, 1, 0, 0] } },
        { name: "new", ids, metrics: { em: [1, 1, 0, 1], Rprec: [1, 1, 0, 0] } },
      ],
      { samples: 100, permutations: 100 },
    );
    const lines = renderComparison(r, "text").split("\n");
    expect(lines[0]).toMatch(/^metric\s+run\s+mean\s+Δ\s+p\s+W\/T\/L$/);
    expect(lines.slice(2, 6).map((l) => l.split(/\s{2,}/)[0])).toEqual(["em", "", "Rprec", ""]);
    expect(lines[3]).toContain("new");
    expect(lines[3]).toContain("+25.00");
    expect(lines[3]).toMatch(/1\/3\/0$/);
    expect(Math.max(...lines.slice(0, 6).map((l) => l.length))).toBeLessThan(70);
  });
});
