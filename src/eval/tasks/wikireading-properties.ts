// WikiReading's property classes (paper §2.4): the normalized answer entropy Ĥ(p) = H(A_p) / log|A_p|
// of each property over a training file, categorical below 0.7 and relational from 0.7 up, and the
// date properties (answers mostly dates in WikiReading's "4 July 1776" form). Counting streams the
// file; each distinct answer costs one 53-bit hash per property, not its text.

import { readJsonFile } from "../../util/json-file.js";
import { writeFileSafe } from "../../util/safe-output.js";
import { readWikiReading } from "../../datasets/wikireading.js";

export const ENTROPY_THRESHOLD = 0.7;

/** WikiReading's property classes: categorical (few distinct answers) or relational. */
export type PropertyClass = "categorical" | "relational";

/** One property's statistics: instances, distinct answers, their entropy, its class, and how many answer values are dates. */
export interface PropertyStats {
  /** Training instances with this property. */
  instances: number;
  /** Distinct answers |A_p| (an instance's answer set is one answer). */
  distinctAnswers: number;
  /** H(A_p) in nats. */
  entropy: number;
  /** Ĥ(p) = H(A_p) / log|A_p|; 0 when there is a single answer. */
  normalizedEntropy: number;
  class: PropertyClass;
  /** More than half of the answer values are dates. */
  date: boolean;
  /** Answer values (of all instances) and how many of them are dates. */
  values: number;
  dateValues: number;
}

/** Per-property statistics that put WikiReading's properties into the paper's classes. */
export interface PropertyTable {
  /** Where the counts come from (a training file, or the gold file itself). */
  source: string;
  threshold: number;
  instances: number;
  properties: Record<string, PropertyStats>;
}

const MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December";
/** "4 July 1776", "July 1776", with an optional " BC". */
const DATE_RE = new RegExp(`^(?:\\d{1,2} )?(?:${MONTHS}) \\d{1,4}(?: BC)?$`);
const YEAR_RE = /^\d{1,4}(?: BC)?$/;
/** Properties whose bare-year answers are dates too ("point in time", "inception", "date of …"). */
const TIME_PROPERTY_RE = /\b(?:date|time|year|inception|founded|established|dissolved|abolished)\b/i;

/** Is `value` a date in WikiReading's format (a bare year counts for time-like properties)? */
export function isDateAnswer(value: string, property: string): boolean {
  const v = value.trim();
  return DATE_RE.test(v) || (YEAR_RE.test(v) && TIME_PROPERTY_RE.test(property));
}

/** A 53-bit hash of a string (FNV-1a 32 bits and djb2's low 21 bits): collisions among millions of answers are negligible. */
export function hash53(s: string): number {
  let a = 0x811c9dc5;
  let b = 5381;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = (Math.imul(b, 33) + c) >>> 0;
  }
  return a * 0x200000 + (b & 0x1fffff);
}

interface Counting {
  instances: number;
  counts: Map<number, number>;
  values: number;
  dateValues: number;
}

/** Counts answers per property, one instance at a time. */
export class PropertyStatsBuilder {
  private readonly props = new Map<string, Counting>();
  private instances = 0;

  add(property: string, answers: readonly string[]): void {
    let c = this.props.get(property);
    if (!c) this.props.set(property, (c = { instances: 0, counts: new Map(), values: 0, dateValues: 0 }));
    this.instances++;
    c.instances++;
    const h = hash53([...answers].sort().join("\u0001"));
    c.counts.set(h, (c.counts.get(h) ?? 0) + 1);
    for (const a of answers) {
      c.values++;
      if (isDateAnswer(a, property)) c.dateValues++;
    }
  }

  finish(source: string, threshold = ENTROPY_THRESHOLD): PropertyTable {
    const properties: Record<string, PropertyStats> = {};
    for (const p of [...this.props.keys()].sort()) {
      const c = this.props.get(p)!;
      const n = c.instances;
      let s = 0;
      for (const k of c.counts.values()) s += k * Math.log(k);
      const entropy = Math.max(0, Math.log(n) - s / n);
      const k = c.counts.size;
      const normalizedEntropy = k <= 1 ? 0 : entropy / Math.log(k);
      properties[p] = {
        instances: n,
        distinctAnswers: k,
        entropy,
        normalizedEntropy,
        class: normalizedEntropy < threshold ? "categorical" : "relational",
        date: c.values > 0 && c.dateValues * 2 > c.values,
        values: c.values,
        dateValues: c.dateValues,
      };
    }
    return { source, threshold, instances: this.instances, properties };
  }
}

/** Property statistics of a WikiReading training file (shard, directory of shards, or tar archive). */
export async function propertyStatsFromFile(path: string, options: { threshold?: number; limit?: number } = {}): Promise<PropertyTable> {
  const b = new PropertyStatsBuilder();
  for await (const ex of readWikiReading(path, { limit: options.limit })) b.add(ex.property, ex.answers);
  return b.finish(path, options.threshold);
}

/** Writes a property table as JSON (through a temporary file and a rename: never half a file, never through a planted link). */
export function writePropertyTable(path: string, t: PropertyTable): void {
  writeFileSafe(path, `${JSON.stringify(t, null, 2)}\n`);
}

export function readPropertyTable(path: string): PropertyTable {
  const t = readJsonFile(path, "the property table") as PropertyTable;
  if (typeof t !== "object" || t === null || typeof t.properties !== "object") throw new Error(`${path}: not a property table written by tartan`);
  return t;
}
