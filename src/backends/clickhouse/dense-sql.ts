// The SQL of dense search on ClickHouse 18.16 (./dense.ts). 18.16 has no bitCount, so the Hamming
// distance of a 64-bit word is counted with the classic SWAR steps in UInt64 arithmetic (pairs, nibbles,
// bytes, then a multiply that sums the bytes into the top one): about 10 ns a word on one core, five
// times faster than a 256-entry array look-up per byte (docs/decisions.md). On 18.16 a statement's
// fixed cost grows with its expression (about 3 ms per code word and query), which dominates the scan.

const M1 = "6148914691236517205"; // 0x5555…
const M2 = "3689348814741910323"; // 0x3333…
const M4 = "1085102592571150095"; // 0x0f0f…
const H01 = "72340172838076673"; // 0x0101…

/** The number of set bits of the UInt64 column `x` (inline masks: no aliases, so the branches of a UNION ALL do not share names). */
export function popcountSql(x: string): string {
  const a = `(bitAnd(${x}, ${M1}) + bitAnd(bitShiftRight(${x}, 1), ${M1}))`;
  const b = `(bitAnd(${a}, ${M2}) + bitAnd(bitShiftRight(${a}, 2), ${M2}))`;
  return `bitShiftRight(bitAnd(${b} + bitShiftRight(${b}, 4), ${M4}) * ${H01}, 56)`;
}

/** One query's part of a candidates SELECT: its probed lists (all, nearest first), those on this shard, its code words, how many to return. */
export interface CandidatePart {
  query: number;
  lists: number[];
  here: number[];
  words: string[];
  limit: number;
}

/**
 * Per query, the `limit` codes of its probed lists on this shard nearest to its code: rows of
 * (query, probe rank, pos, unit, distance, code words), ordered by distance, probe rank, position.
 */
export function candidatesSql(table: string, words: readonly string[], parts: readonly CandidatePart[]): string {
  const selects = parts.map((p) => {
    // the XORs in an inner SELECT, the bit counts over its columns: half the statement's cost on 18.16
    // (whose per-statement cost grows with the expression, not the rows)
    const xors = words.map((w, j) => `bitXor(${w}, toUInt64(${p.words[j]})) AS x${j}`).join(", ");
    const dist = words.map((_, j) => popcountSql(`x${j}`)).join(" + ");
    return (
      `SELECT * FROM (SELECT toUInt32(${p.query}) AS q, r, pos, unit, toUInt32(${dist}) AS d, ${words.join(", ")} FROM ` +
      `(SELECT toUInt32(indexOf([${p.lists.join(",")}], list) - 1) AS r, pos, unit, ${words.join(", ")}, ${xors} FROM ${table} WHERE list IN (${p.here.join(",")})) ` +
      `ORDER BY d, r, pos LIMIT ${p.limit})`
    );
  });
  return selects.join(" UNION ALL ");
}

/** The int8 rows at `positions` (of `lists`): rows of (pos, row). */
export function rowsSql(table: string, lists: readonly number[], positions: readonly number[]): string {
  return `SELECT pos, row FROM ${table} WHERE list IN (${lists.join(",")}) AND pos IN (${positions.join(",")})`;
}
