// The paired t test and the Wilcoxon signed-rank test against SciPy's results (fixtures made with
// scipy.stats.ttest_rel and scipy.stats.wilcoxon, SciPy 1.17.1): p-values equal to 1e-12.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { normalSf, studentTCdf } from "../../src/compare/distributions.js";
import { pairedTTest, pairwiseSum, wilcoxonTest } from "../../src/compare/parametric.js";

interface Case {
  name: string;
  a: number[];
  b: number[];
  ttest: { statistic: number | null; pvalue: number | null; df: number };
  wilcoxon?: { statistic: number; pvalue: number };
}
const fixture = JSON.parse(readFileSync(new URL("../fixtures/compare/scipy.json", import.meta.url), "utf8")) as {
  scipy: string;
  cases: Case[];
};

function close(actual: number, expected: number | null): void {
  if (expected === null) {
    expect(actual).toBeNaN();
    return;
  }
  expect(Math.abs(actual - expected)).toBeLessThanOrEqual(1e-12);
}

describe("paired t test = scipy.stats.ttest_rel", () => {
  for (const c of fixture.cases)
    it(c.name, () => {
      const r = pairedTTest(c.a, c.b);
      expect(r.df).toBe(c.ttest.df);
      if (c.ttest.statistic === null) expect(r.statistic).toBeNaN();
      else expect(Math.abs(r.statistic - c.ttest.statistic)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(c.ttest.statistic)));
      close(r.pvalue, c.ttest.pvalue);
    });
});

describe("Wilcoxon signed-rank = scipy.stats.wilcoxon", () => {
  for (const c of fixture.cases.filter((x) => x.wilcoxon))
    it(c.name, () => {
      const r = wilcoxonTest(c.a, c.b);
      expect(r.statistic).toBe(c.wilcoxon!.statistic);
      close(r.pvalue, c.wilcoxon!.pvalue);
    });
  it("chooses SciPy's method", () => {
    const byName = (s: string) => fixture.cases.find((c) => c.name.startsWith(s))!;
    expect(wilcoxonTest(byName("continuous n=50").a, byName("continuous n=50").b).method).toBe("exact");
    expect(wilcoxonTest(byName("continuous n=51").a, byName("continuous n=51").b).method).toBe("asymptotic");
    expect(wilcoxonTest(byName("ties and zeros n=13").a, byName("ties and zeros n=13").b).method).toBe("permutation");
    expect(wilcoxonTest(byName("0/1 scores n=14").a, byName("0/1 scores n=14").b).method).toBe("asymptotic");
  });
});

describe("distributions = scipy.special", () => {
  const grid = fixture as unknown as { stdtr: [number, number, number][]; ndtr_sf: [number, number][]; pairwise: { n: number; sum: number } };
  it("stdtr(df, t) on a grid of df and t", () => {
    for (const [df, t, p] of grid.stdtr) expect(Math.abs(studentTCdf(df, t) - p), `df=${df} t=${t}`).toBeLessThanOrEqual(1e-14);
  });
  it("ndtr(-z)", () => {
    for (const [z, p] of grid.ndtr_sf) expect(Math.abs(normalSf(z) - p), `z=${z}`).toBeLessThanOrEqual(Math.max(1e-15, 1e-13 * p));
  });
  it("pairwise summation as NumPy's np.sum", () => {
    const xs = Array.from({ length: grid.pairwise.n }, (_, i) => 0.1 * ((i % 7) + 1));
    expect(pairwiseSum(xs)).toBe(grid.pairwise.sum);
    expect(xs.reduce((s, x) => s + x, 0)).not.toBe(grid.pairwise.sum); // a plain loop rounds differently
  });
});
