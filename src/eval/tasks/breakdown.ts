// Score tallies broken down by a key (complexity type, language, property class, …), shared by the
// task evaluators, and the aligned text table `tartan eval --task …` prints for them.

export interface Tally {
  count: number;
  sum: number;
}

/** Sums of a per-instance score, overall and under named breakdowns, each by key. */
export class Breakdown {
  readonly overall: Tally = { count: 0, sum: 0 };
  private readonly groups = new Map<string, Map<string, Tally>>();

  constructor(readonly dimensions: readonly string[]) {
    for (const d of dimensions) this.groups.set(d, new Map());
  }

  /** Adds one instance's `score` overall and under `keys[dimension]` (a dimension left out, or with an undefined key, is skipped). */
  add(score: number, keys: Record<string, string | undefined>): void {
    this.overall.count++;
    this.overall.sum += score;
    for (const [d, k] of Object.entries(keys)) {
      if (k === undefined) continue;
      const g = this.groups.get(d);
      if (!g) throw new Error(`unknown breakdown dimension ${d}`);
      let t = g.get(k);
      if (!t) g.set(k, (t = { count: 0, sum: 0 }));
      t.count++;
      t.sum += score;
    }
  }

  /** The tallies of one dimension, keys in `order` first (those present), then the rest sorted. */
  dimension(d: string, order: readonly string[] = []): [string, Tally][] {
    const g = this.groups.get(d) ?? new Map<string, Tally>();
    const first = order.filter((k) => g.has(k));
    const rest = [...g.keys()].filter((k) => !order.includes(k)).sort();
    return [...first, ...rest].map((k) => [k, g.get(k)!]);
  }
}

/** sum / count, 0 for no instances. */
export function mean(t: Tally): number {
  return t.count === 0 ? 0 : t.sum / t.count;
}

/** One breakdown as JSON: `{key: {count, <metric>}}`, plus the sum under `sumName` when given (hits). */
export function tallyJson(entries: [string, Tally][], metric: string, sumName?: string): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const [k, t] of entries) out[k] = sumName ? { count: t.count, [sumName]: t.sum, [metric]: mean(t) } : { count: t.count, [metric]: mean(t) };
  return out;
}

/** Rows `label  count  score` with a heading per section, scores with 4 decimals. */
export function formatBreakdownTable(metric: string, sections: { title: string; rows: [string, Tally][] }[]): string {
  const lines: string[][] = [];
  for (const s of sections) {
    lines.push([s.title, "count", metric]);
    for (const [k, t] of s.rows) lines.push([`  ${k}`, String(t.count), mean(t).toFixed(4)]);
  }
  const w0 = Math.max(...lines.map((l) => l[0].length));
  const w1 = Math.max(...lines.map((l) => l[1].length));
  const w2 = Math.max(...lines.map((l) => l[2].length));
  const out: string[] = [];
  let first = true;
  for (const l of lines) {
    const heading = !l[0].startsWith("  ");
    if (heading && !first) out.push("");
    first = false;
    out.push(`${l[0].padEnd(w0)}  ${l[1].padStart(w1)}  ${l[2].padStart(w2)}`.trimEnd());
  }
  return out.join("\n");
}
