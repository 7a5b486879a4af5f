// The SQL of dense search on ClickHouse 18.16 (./dense.ts). 18.16 has no bitCount, so the Hamming
// distance of a 64-bit word is counted with the classic SWAR steps in UInt64 arithmetic (pairs, nibbles,
// bytes, then a multiply that sums the bytes into the top one): about 10 ns a word on one core, five
// times faster than a 256-entry array look-up per byte (docs/decisions.md).

const M1 = "6148914691236517205"; // 0x5555…
const M2 = "3689348814741910323"; // 0x3333…
const M4 = "1085102592571150095"; // 0x0f0f…
const H01 = "72340172838076673"; // 0x0101…

/** The number of set bits of the UInt64 expression `x` (`tag` names its intermediate aliases). */
export function popcountSql(x: string, tag: string): string {
  const a = `(bitAnd(${x}, toUInt64(${M1})) + bitAnd(bitShiftRight(${x}, 1), toUInt64(${M1})) AS a${tag})`;
  const b = `(bitAnd(${a}, toUInt64(${M2})) + bitAnd(bitShiftRight(a${tag}, 2), toUInt64(${M2})) AS b${tag})`;
  return `bitShiftRight(bitAnd(${b} + bitShiftRight(b${tag}, 4), toUInt64(${M4})) * toUInt64(${H01}), 56)`;
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
    const dist = words.map((w, j) => popcountSql(`bitXor(${w}, toUInt64(${p.words[j]}))`, `${p.query}_${j}`)).join(" + ");
    return (
      `SELECT * FROM (SELECT toUInt32(${p.query}) AS q, toUInt32(indexOf([${p.lists.join(",")}], list) - 1) AS r, pos, unit, toUInt32(${dist}) AS d, ${words.join(", ")} ` +
      `FROM ${table} WHERE list IN (${p.here.join(",")}) ORDER BY d, r, pos LIMIT ${p.limit})`
    );
  });
  return selects.join(" UNION ALL ");
}

/** The int8 rows at `positions` (of `lists`): rows of (pos, row). */
export function rowsSql(table: string, lists: readonly number[], positions: readonly number[]): string {
  return `SELECT pos, row FROM ${table} WHERE list IN (${lists.join(",")}) AND pos IN (${positions.join(",")})`;
}
