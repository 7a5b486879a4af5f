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

/** One query's part of a candidates SELECT: its probed lists (all, nearest first), those on this shard, its code words. */
export interface CandidatePart {
  query: number;
  lists: number[];
  here: number[];
  words: string[];
}

/**
 * Per query, the `limit` codes of its probed lists on this shard nearest to its code: rows of
 * (query, probe rank, pos, unit, distance, code words), ordered by query, distance, probe rank,
 * position. The batch's (query, list, rank, code words) go as external data (`probes`), joined to the
 * codes on the list: one statement whatever the batch size, so 18.16's per-statement cost (which grows
 * with the expression: about 3 ms a code word) is paid once a batch and shard, not once a query.
 */
export function candidatesSql(table: string, words: readonly string[], parts: readonly CandidatePart[], limit: number): { sql: string; external: { name: string; structure: string; data: string } } {
  const lines: string[] = [];
  for (const p of parts) {
    const rank = new Map(p.lists.map((l, r) => [l, r]));
    for (const l of p.here) lines.push(`${p.query}\t${l}\t${rank.get(l)}\t${p.words.join("\t")}\n`);
  }
  const w = words.map((_, j) => `w${j}`);
  const xors = words.map((c, j) => `bitXor(${c}, w${j}) AS x${j}`).join(", ");
  const dist = words.map((_, j) => popcountSql(`x${j}`)).join(" + ");
  const sql =
    `SELECT q, r, pos, unit, toUInt32(${dist}) AS d, ${words.join(", ")} FROM ` +
    `(SELECT q, r, pos, unit, ${words.join(", ")}, ${xors} FROM ` +
    `(SELECT list, pos, unit, ${words.join(", ")} FROM ${table} WHERE list IN (SELECT list FROM probes)) ALL INNER JOIN probes USING list) ` +
    `ORDER BY q, d, r, pos LIMIT ${limit} BY q`;
  return { sql, external: { name: "probes", structure: `q UInt32, list UInt32, r UInt32, ${w.map((x) => `${x} UInt64`).join(", ")}`, data: lines.join("") } };
}

/** The int8 rows at `positions` (of `lists`): rows of (pos, row). */
export function rowsSql(table: string, lists: readonly number[], positions: readonly number[]): string {
  return `SELECT pos, row FROM ${table} WHERE list IN (${lists.join(",")}) AND pos IN (${positions.join(",")})`;
}
