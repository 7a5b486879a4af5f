// The evaluator's WebAssembly kernel for a provenance list, the bulk of a KILT prediction line:
// `provList(p, end, rec, recEnd, names)` reads the JSON list at `p` (its `[`) as a list of flat
// objects — members whose names are plain ASCII and whose values are strings or numbers — validating
// it as ./json-scanner.ts does, matches each member's name against the name table at `names` (per name
// its length byte and its bytes; 254: a name no plain name equals; 255 ends the table), and writes the
// members whose name is in the table into the record area `[rec, recEnd)` of the memory:
//   rec[0] = entries, then per entry: its count of such members, then per member four int32s: the
//   name's index in the table, value start, value end, flags (1 string — start and end are then its
//   contents' —, 2 escaped, 4 a byte >= 0x80, 8 a number with a fraction or exponent), and the flags
//   of every value of the entry (matched or not) OR-ed together as one more int32;
// and returns the offset just past the closing `]`. It returns -1 for anything else — a nested value,
// `true`/`false`/`null`, a name with an escape or a byte >= 0x80, a syntax error, records past
// `recEnd` — and the JavaScript route (./scan.ts) then reads the list from its start, so the kernel
// only has to be sound: it never accepts what that route refuses, and what it accepts reads the same.
// Strings are stepped over 16 bytes at a time by the module's `plainEnd` (./string-kernel.ts).

import {
  BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, RETURN, VOID, GET, SET, TEE, LOAD8, I32_EQ, I32_NE, I32_GT_U, I32_GE_U, I32_LT_U, I32_ADD, I32_SUB,
  I32_OR, I32_EQZ, I32_STORE, I32, I32_GE_S, SELECT, CALL, emitter,
} from "../util/wasm-asm.js";

/** The kernel: the end of the flat provenance list at `p` with its records written from `rec`, or -1. */
export type ProvList = (p: number, end: number, rec: number, recEnd: number, names: number) => number;

/** Int32s a member takes in the record area, and the flags of its value. */
export const MEMBER_INTS = 4;
export const VALUE_STRING = 1, VALUE_ESCAPED = 2, VALUE_HIGH = 4, VALUE_FRACTION = 8;
/** Name-table lengths: a name that never matches (not plain ASCII), and the table's end. */
export const NAME_NEVER = 254, NAMES_END = 255;

/**
 * The name table of `names` for the kernel, or null when one is too long for it (254 bytes or more:
 * the JavaScript route then). Names that are not plain (printable ASCII without '"' or '\') never match.
 */
export function nameTable(names: readonly Uint8Array[]): Uint8Array | null {
  const out: number[] = [];
  for (const b of names) {
    if (b.length >= NAME_NEVER) return null;
    if (b.every((c) => c >= 0x20 && c <= 0x7e && c !== 0x22 && c !== 0x5c)) out.push(b.length, ...b);
    else out.push(NAME_NEVER);
  }
  out.push(NAMES_END);
  return Uint8Array.from(out);
}

/** The body of `provList`; `plainEnd` is the module's function of that index. */
export function provListBody(plainEnd: number): number[] {
  const [P, E, R, RE, NAMES] = [0, 1, 2, 3, 4];
  const [C, Q, CNT, CNTAT, ENTS, REC0, VS, FL, J, T, I, LEN, MATCH, ALL] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18];
  const { code, e, c } = emitter();
  // Structured control flow with named labels: `depth(name)` counts the blocks between here and `name`.
  const labels: string[] = [];
  const open = (op: number, name = "") => (e(op, VOID), labels.push(name));
  const close = () => (e(END), labels.pop());
  const depth = (name: string) => labels.length - 1 - labels.lastIndexOf(name);
  const bail = () => e(c(-1), RETURN);
  /** `if (cond on the stack) return -1`. */
  const bailIf = () => (open(IF), bail(), close());
  const cur = () => e(GET, P, LOAD8());
  const failAtEnd = () => (e(GET, P, GET, E, I32_GE_U), bailIf());
  /** Steps P over JSON whitespace (space, \n, \r, \t). */
  const ws = () => {
    open(BLOCK, "ws");
    open(LOOP, "wsl");
    e(GET, P, GET, E, I32_GE_U, BR_IF, depth("ws"));
    cur();
    e(TEE, C, c(0x20), I32_EQ, GET, C, c(0x0a), I32_EQ, I32_OR, GET, C, c(0x0d), I32_EQ, I32_OR, GET, C, c(0x09), I32_EQ, I32_OR);
    e(I32_EQZ, BR_IF, depth("ws"));
    e(GET, P, c(1), I32_ADD, SET, P, BR, depth("wsl"));
    close();
    close();
  };
  /** Steps P over ASCII digits. */
  const digits = () => {
    open(BLOCK, "d");
    open(LOOP, "dl");
    e(GET, P, GET, E, I32_GE_U, BR_IF, depth("d"));
    cur();
    e(c(0x30), I32_SUB, c(10), I32_GE_U, BR_IF, depth("d"));
    e(GET, P, c(1), I32_ADD, SET, P, BR, depth("dl"));
    close();
    close();
  };
  /** The byte at P is a digit, else -1. */
  const needDigit = () => (failAtEnd(), cur(), e(c(0x30), I32_SUB, c(10), I32_GE_U), bailIf());
  /** A hexadecimal digit at Q + k, else -1: (c - '0') < 10 or ((c | 0x20) - 'a') < 6. */
  const needHex = (k: number) => {
    e(GET, Q, c(k), I32_ADD, LOAD8(), TEE, C, c(0x30), I32_SUB, c(10), I32_LT_U);
    e(GET, C, c(0x20), I32_OR, c(0x61), I32_SUB, c(6), I32_LT_U, I32_OR, I32_EQZ);
    bailIf();
  };
  const store = (offset: number, local: number) => e(GET, R, GET, local, I32_STORE, 2, offset);
  /** After an element: at ',' steps over it and the whitespace after and branches to `next`; else needs `closer` (P left on it). */
  const commaOr = (closer: number, next: string) => {
    ws();
    failAtEnd();
    cur();
    e(TEE, C, c(0x2c), I32_EQ);
    open(IF);
    e(GET, P, c(1), I32_ADD, SET, P);
    ws();
    failAtEnd();
    e(BR, depth(next));
    close();
    e(GET, C, c(closer), I32_NE);
    bailIf();
  };

  // '[' ws, then ']' or the entries.
  e(GET, P, c(1), I32_ADD, SET, P);
  ws();
  failAtEnd();
  e(GET, R, c(4), I32_ADD, GET, RE, I32_GT_U);
  bailIf();
  e(GET, R, SET, REC0, GET, R, c(4), I32_ADD, SET, R, c(0), SET, ENTS);
  cur();
  e(c(0x5d), I32_EQ);
  open(IF);
  e(GET, REC0, c(0), I32_STORE, 2, 0, GET, P, c(1), I32_ADD, RETURN);
  close();

  open(LOOP, "entries");
  // An entry: '{', its member count's slot, then '}' or the members.
  cur();
  e(c(0x7b), I32_NE);
  bailIf();
  e(GET, R, c(8), I32_ADD, GET, RE, I32_GT_U);
  bailIf();
  e(GET, R, SET, CNTAT, GET, R, c(4), I32_ADD, SET, R, c(0), SET, CNT, c(0), SET, ALL);
  e(GET, P, c(1), I32_ADD, SET, P);
  ws();
  failAtEnd();
  cur();
  e(c(0x7d), I32_EQ);
  open(IF);
  e(GET, P, c(1), I32_ADD, SET, P);
  e(ELSE);
  open(LOOP, "members");
  // Room for one member and the entry's flags.
  e(GET, R, c(4 * MEMBER_INTS + 4), I32_ADD, GET, RE, I32_GT_U);
  bailIf();
  // The name: plain contents up to its closing quote (an escape, a control or a high byte: -1).
  cur();
  e(c(0x22), I32_NE);
  bailIf();
  e(GET, P, c(1), I32_ADD, TEE, VS, GET, E, CALL, plainEnd, TEE, Q, GET, E, I32_GE_U);
  bailIf();
  e(GET, Q, LOAD8(), c(0x22), I32_NE);
  bailIf();
  // Its index in the name table (MATCH), or -1.
  e(c(-1), SET, MATCH, c(0), SET, J, GET, NAMES, SET, T);
  open(BLOCK, "named");
  open(LOOP, "names");
  e(GET, T, LOAD8(), TEE, LEN, c(NAMES_END), I32_EQ, BR_IF, depth("named"));
  e(GET, LEN, GET, Q, GET, VS, I32_SUB, I32_EQ);
  open(IF);
  e(c(0), SET, I);
  open(BLOCK, "differ");
  open(LOOP, "bytes");
  e(GET, I, GET, LEN, I32_GE_U);
  open(IF);
  e(GET, J, SET, MATCH, BR, depth("named"));
  close();
  e(GET, T, GET, I, I32_ADD, LOAD8(1), GET, VS, GET, I, I32_ADD, LOAD8(), I32_NE, BR_IF, depth("differ"));
  e(GET, I, c(1), I32_ADD, SET, I, BR, depth("bytes"));
  close();
  close();
  close();
  // The next name: its length byte and bytes (none for NAME_NEVER).
  e(GET, T, c(1), I32_ADD, GET, T, c(1), I32_ADD, GET, LEN, I32_ADD, GET, LEN, c(NAME_NEVER), I32_EQ, SELECT, SET, T);
  e(GET, J, c(1), I32_ADD, SET, J, BR, depth("names"));
  close();
  close();
  e(GET, Q, c(1), I32_ADD, SET, P);
  ws();
  failAtEnd();
  cur();
  e(c(0x3a), I32_NE);
  bailIf();
  e(GET, P, c(1), I32_ADD, SET, P);
  ws();
  failAtEnd();
  cur();
  e(TEE, C, c(0x22), I32_EQ);
  open(IF);
  // A string: runs of plain bytes by plainEnd; escapes checked as the JavaScript route does.
  e(GET, P, c(1), I32_ADD, TEE, VS, SET, Q, c(VALUE_STRING), SET, FL);
  open(BLOCK, "str");
  open(LOOP, "strl");
  e(GET, Q, GET, E, CALL, plainEnd, TEE, Q, GET, E, I32_GE_U);
  bailIf();
  e(GET, Q, LOAD8(), TEE, C, c(0x22), I32_EQ, BR_IF, depth("str"));
  e(GET, C, c(0x5c), I32_EQ);
  open(IF);
  e(GET, FL, c(VALUE_ESCAPED), I32_OR, SET, FL);
  e(GET, Q, c(1), I32_ADD, GET, E, I32_GE_U);
  bailIf();
  e(GET, Q, LOAD8(1), TEE, C, c(0x75), I32_EQ);
  open(IF);
  e(GET, Q, c(5), I32_ADD, GET, E, I32_GE_U);
  bailIf();
  for (let k = 2; k <= 5; k++) needHex(k);
  e(GET, Q, c(6), I32_ADD, SET, Q);
  e(ELSE);
  // '"' '\' '/' b f n r t
  e(GET, C, c(0x22), I32_EQ, GET, C, c(0x5c), I32_EQ, I32_OR, GET, C, c(0x2f), I32_EQ, I32_OR, GET, C, c(0x62), I32_EQ, I32_OR);
  e(GET, C, c(0x66), I32_EQ, I32_OR, GET, C, c(0x6e), I32_EQ, I32_OR, GET, C, c(0x72), I32_EQ, I32_OR, GET, C, c(0x74), I32_EQ, I32_OR);
  e(I32_EQZ);
  bailIf();
  e(GET, Q, c(2), I32_ADD, SET, Q);
  close();
  e(ELSE);
  e(GET, C, c(0x20), I32_LT_U);
  bailIf();
  e(GET, FL, c(VALUE_HIGH), I32_OR, SET, FL, GET, Q, c(1), I32_ADD, SET, Q);
  close();
  e(BR, depth("strl"));
  close();
  close();
  e(GET, Q, SET, I);
  e(GET, Q, c(1), I32_ADD, SET, P);
  e(ELSE);
  // A number: -? (0 | [1-9][0-9]*) (. digits)? ([eE] [+-]? digits)?; anything else starting here: -1.
  e(GET, P, SET, VS, c(0), SET, FL);
  e(GET, C, c(0x2d), I32_EQ);
  open(IF);
  e(GET, P, c(1), I32_ADD, SET, P);
  failAtEnd();
  cur();
  e(SET, C);
  close();
  e(GET, C, c(0x30), I32_EQ);
  open(IF);
  e(GET, P, c(1), I32_ADD, SET, P);
  e(ELSE);
  e(GET, C, c(0x31), I32_SUB, c(8), I32_GT_U);
  bailIf();
  digits();
  close();
  e(GET, P, GET, E, I32_LT_U);
  open(IF);
  cur();
  e(c(0x2e), I32_EQ);
  open(IF);
  e(c(VALUE_FRACTION), SET, FL, GET, P, c(1), I32_ADD, SET, P);
  needDigit();
  digits();
  close();
  close();
  e(GET, P, GET, E, I32_LT_U);
  open(IF);
  cur();
  e(c(0x20), I32_OR, c(0x65), I32_EQ);
  open(IF);
  e(c(VALUE_FRACTION), SET, FL, GET, P, c(1), I32_ADD, SET, P);
  failAtEnd();
  cur();
  e(TEE, C, c(0x2b), I32_EQ, GET, C, c(0x2d), I32_EQ, I32_OR);
  open(IF);
  e(GET, P, c(1), I32_ADD, SET, P);
  close();
  needDigit();
  digits();
  close();
  close();
  e(GET, P, SET, I);
  close();
  // The value is [VS, I) with flags FL: recorded when its name is in the table.
  e(GET, ALL, GET, FL, I32_OR, SET, ALL);
  e(GET, MATCH, c(0), I32_GE_S);
  open(IF);
  store(0, MATCH);
  store(4, VS);
  store(8, I);
  store(12, FL);
  e(GET, R, c(4 * MEMBER_INTS), I32_ADD, SET, R, GET, CNT, c(1), I32_ADD, SET, CNT);
  close();
  // After the value: ',' and the next member, or '}'.
  commaOr(0x7d, "members");
  e(GET, P, c(1), I32_ADD, SET, P);
  close(); // members
  close(); // if '}' else
  // After the entry: its count and flags, then ',' and the next entry, or ']'.
  e(GET, CNTAT, GET, CNT, I32_STORE, 2, 0, GET, R, GET, ALL, I32_STORE, 2, 0, GET, R, c(4), I32_ADD, SET, R);
  e(GET, ENTS, c(1), I32_ADD, SET, ENTS);
  commaOr(0x5d, "entries");
  e(GET, REC0, GET, ENTS, I32_STORE, 2, 0, GET, P, c(1), I32_ADD, RETURN);
  close(); // entries
  e(c(-1), END);
  if (labels.length !== 0) throw new Error("provListBody: unbalanced blocks");
  return [1, 14, I32, ...code];
}
