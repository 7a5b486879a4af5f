// The units (passages, paragraphs, pages) of a ClickHouse BM25 index as a UnitSource: read from the
// units table for each batch's hits and kept in memory (a bounded cache that never drops the latest
// batch's units, so a caller can read every hit of the batch it was given).

import type { Unit, UnitSource } from "../../retrieval/units/unit.js";
import type { ClickHouseDatabase } from "./client.js";
import { tsvRows } from "./schema.js";

/** Unit ids per SELECT of {@link ClickHouseUnits.load} (an IN list of 10,000 ids: about 70 KB of SQL). */
const LOAD_UNITS = 10_000;

/**
 * Units of a ClickHouse index: read for each batch's hits, then served from memory. The cache keeps
 * at most `max` units, least recently loaded first out, but never a unit of the latest load(): a
 * batch's hits all stay readable until the next batch, however many they are (a batch of 1,000
 * queries at top 100 holds up to 100,000 units; units it shares with an earlier batch are moved to the
 * back, not left where the earlier batch put them).
 */
export class ClickHouseUnits implements UnitSource {
  /** Units kept by default (more when one batch's hits need more). */
  static defaultMax = 100_000;
  private readonly cache = new Map<number, Unit>();
  constructor(
    private readonly db: ClickHouseDatabase,
    private readonly table: string,
    readonly count: number,
    private readonly max = ClickHouseUnits.defaultMax,
  ) {}

  /** Units held now. */
  get cached(): number {
    return this.cache.size;
  }

  /** Makes `units` readable by get() until the next load(): the missing ones are read (a SELECT per 10,000). */
  async load(units: Iterable<number>): Promise<void> {
    const wanted = new Set(units);
    const missing: number[] = [];
    for (const u of wanted) {
      const hit = this.cache.get(u);
      if (hit === undefined) missing.push(u);
      else {
        // (to the back: the eviction below takes the front)
        this.cache.delete(u);
        this.cache.set(u, hit);
      }
    }
    for (let i = 0; i < missing.length; i += LOAD_UNITS) {
      const ids = missing.slice(i, i + LOAD_UNITS);
      const text = await this.db.main.text(`SELECT unit, data FROM ${this.table} WHERE unit IN (${ids.join(",")})`, this.table);
      for (const [unit, data] of tsvRows(text)) this.cache.set(Number(unit), JSON.parse(data) as Unit);
    }
    // Evict the least recently loaded, never this load's units (all at the back now).
    for (const u of this.cache.keys()) {
      if (this.cache.size <= this.max || wanted.has(u)) break;
      this.cache.delete(u);
    }
  }

  get(i: number): Unit {
    const u = this.cache.get(i);
    if (u !== undefined) return u;
    if (!Number.isInteger(i) || i < 0 || i >= this.count) throw new RangeError(`unit ${i} out of range 0..${this.count - 1}`);
    throw new Error(`${this.db.url} (table ${this.table}): unit ${i} was not loaded (units are read with the hits of a search; call load() first)`);
  }
}
