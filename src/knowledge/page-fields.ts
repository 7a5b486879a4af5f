// Reads chosen top-level fields of a page's JSON (UTF-8 bytes) without decoding or parsing the rest.
// A KILT page's `text` is about a quarter of its JSON, its anchors most of the rest, so a reader that
// wants only the text (a BM25 build) saves most of the UTF-8 decoding, the parse and the garbage of
// the anchors. The object is scanned byte by byte (strings skipped to their closing quote, brackets
// counted); each wanted value is then parsed on its own with JSON.parse, so it comes back exactly as a
// full parse would give it, and the last of duplicate keys wins, as with JSON.parse. The skipped
// values are checked only for their structure (strings closed, brackets balanced): the store holds
// pages that were parsed and checked at ingest (./prepare.ts).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether `b` is JSON whitespace. */
function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** The key of bytes [start, end) (without quotes) as a string; escapes are decoded as JSON.parse would. */
function keyOf(buf: Uint8Array, start: number, end: number): string {
  const raw = Buffer.from(buf.buffer, buf.byteOffset + start - 1, end - start + 2).toString("utf8");
  return raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
}

/**
 * The values of the top-level keys `keys` of the JSON object in `buf` (undefined for a key that is
 * absent); throws for bytes that are not an object or whose structure is broken.
 */
export function readTopLevelFields(buf: Uint8Array, keys: readonly string[]): unknown[] {
  const n = buf.length;
  const found: [number, number][] = keys.map(() => [-1, -1]);
  const fail = (at: number, what: string): never => {
    throw new Error(`page JSON: ${what} at byte ${at}`);
  };
  let i = 0;
  while (i < n && isSpace(buf[i])) i++;
  if (buf[i] !== 0x7b) fail(i, "not an object");
  i++;
  while (i < n && isSpace(buf[i])) i++;
  let more = buf[i] !== 0x7d;
  if (!more) i++;
  while (more) {
    // A key: bytes up to its closing quote.
    if (buf[i] !== QUOTE) fail(i, "expected a key");
    const keyStart = ++i;
    const keyEnd = stringEnd(buf, i, fail);
    i = keyEnd + 1;
    while (i < n && isSpace(buf[i])) i++;
    if (buf[i] !== 0x3a) fail(i, "expected ':'");
    i++;
    while (i < n && isSpace(buf[i])) i++;
    const valueStart = i;
    i = skipValue(buf, i, fail);
    const k = keys.indexOf(keyOf(buf, keyStart, keyEnd));
    if (k >= 0) found[k] = [valueStart, i];
    while (i < n && isSpace(buf[i])) i++;
    if (buf[i] === 0x2c) {
      i++;
      while (i < n && isSpace(buf[i])) i++;
    } else if (buf[i] === 0x7d) {
      i++;
      more = false;
    } else fail(i, "expected ',' or '}'");
  }
  while (i < n && isSpace(buf[i])) i++;
  if (i !== n) fail(i, "bytes after the object");
  return found.map(([s, e]) => (s < 0 ? undefined : JSON.parse(Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString("utf8"))));
}

/** The index just after the JSON value starting at `i` (strings, arrays and objects followed to their end). */
function skipValue(buf: Uint8Array, i: number, fail: (at: number, what: string) => never): number {
  const n = buf.length;
  let depth = 0;
  const start = i;
  for (;;) {
    if (i >= n) fail(start, "unterminated value");
    const c = buf[i];
    if (c === QUOTE) {
      i = stringEnd(buf, i + 1, fail) + 1;
      if (depth === 0) return i;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return i;
      depth--;
      i++;
      if (depth === 0) return i;
    } else if (depth === 0 && (c === 0x2c || isSpace(c))) {
      if (i === start) fail(i, "expected a value");
      return i;
    } else {
      i++;
    }
  }
}

/** The index of the quote closing the string whose contents start at `i` (found with indexOf, faster than a byte loop). */
function stringEnd(buf: Uint8Array, i: number, fail: (at: number, what: string) => never): number {
  const start = i;
  for (;;) {
    const j = buf.indexOf(QUOTE, i);
    if (j < 0) fail(start, "unterminated string");
    // Escaped when preceded by an odd number of backslashes.
    let k = j - 1;
    while (k >= start && buf[k] === BACKSLASH) k--;
    if ((j - 1 - k) % 2 === 0) return j;
    i = j + 1;
  }
}
