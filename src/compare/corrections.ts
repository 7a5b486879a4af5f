// Corrections of p-values for many comparisons (the family is every comparison in one table):
// Bonferroni and Holm control the family-wise error rate, Benjamini–Hochberg the false discovery
// rate. Definitions as statsmodels' `multipletests` ("bonferroni", "holm", "fdr_bh"); NaN p-values
// (tests that could not be done) are left NaN and not counted in the family.

/** The corrections for multiple comparisons: none, Bonferroni, Holm, Benjamini–Hochberg. */
export const CORRECTIONS = ["none", "bonferroni", "holm", "bh"] as const;
/** A correction for multiple comparisons. */
export type Correction = (typeof CORRECTIONS)[number];

/** Adjusted p-values, in the order given. */
export function adjustPValues(pvalues: readonly number[], method: Correction): number[] {
  if (!(CORRECTIONS as readonly string[]).includes(method)) throw new Error(`correction must be one of ${CORRECTIONS.join(", ")}, got "${method}"`);
  const out = pvalues.slice();
  const present = pvalues.map((p, i) => [p, i] as const).filter(([p]) => !Number.isNaN(p));
  const m = present.length;
  if (method === "none" || m === 0) return out;
  if (method === "bonferroni") {
    for (const [p, i] of present) out[i] = Math.min(1, p * m);
    return out;
  }
  const sorted = present.slice().sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  if (method === "holm") {
    // p_(k) ↦ max_{j ≤ k} min(1, (m − j + 1) p_(j))
    let running = 0;
    sorted.forEach(([p, i], k) => {
      running = Math.max(running, Math.min(1, (m - k) * p));
      out[i] = running;
    });
    return out;
  }
  // Benjamini–Hochberg: p_(k) ↦ min_{j ≥ k} min(1, m p_(j) / j)
  let running = 1;
  for (let k = m - 1; k >= 0; k--) {
    const [p, i] = sorted[k];
    running = Math.min(running, Math.min(1, (m * p) / (k + 1)));
    out[i] = running;
  }
  return out;
}
