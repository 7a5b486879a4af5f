// Python's `str()`, `str.strip()` and `str.split()` for values parsed from JSON.
// The official KILT code compares ids, answers and provenance keys as `str(x).strip()`, so a port
// must turn `true` into "True", `null` into "None", 1e16 into "1e+16", and strip Python's
// whitespace set (which differs from JavaScript's `trim()`).

/** Code points Python's `str.isspace()` accepts (and `str.split()` splits on); kilt-spec.md §3.3. */
export function isPythonSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** A regular-expression class source for Python's whitespace set. */
export const PYTHON_SPACE_CLASS =
  "[\\t\\n\\x0b\\x0c\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

/** Python `s.strip()`. */
export function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isPythonSpace(s.charCodeAt(start))) start++;
  while (end > start && isPythonSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

const SPLIT_RE = new RegExp(`${PYTHON_SPACE_CLASS}+`, "u");

/** Python `s.split()` (no argument): runs of whitespace separate, no empty strings. */
export function pySplit(s: string): string[] {
  const t = pyStrip(s);
  return t.length === 0 ? [] : t.split(SPLIT_RE);
}

/** Python `repr(float)` for a finite double: shortest round-trip digits, Python's layout. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant, expStr] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(expStr); // value = 0.d1d2... * 10^(exp+1)
  const decpt = exp + 1;
  if (decpt > 16 || decpt < -3) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = Math.abs(exp);
    return `${sign}${m}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" : ""}${e}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

function pyQuote(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += `\\${q}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else out += ch;
  }
  return out + q;
}

function pyRepr(v: unknown): string {
  if (typeof v === "string") return pyQuote(v);
  return pyStr(v);
}

/**
 * Python `str(v)` of a value produced by `json.loads`. Integers in JSON are Python ints, written
 * without a fraction; a JSON number written as a float (`5.0`) is indistinguishable once parsed by
 * JavaScript, so use {@link pyStrOfNumberToken} when the source text is at hand.
 */
export function pyStr(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : pyFloatRepr(v);
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`;
  if (typeof v === "object") {
    const parts = Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyQuote(k)}: ${pyRepr(x)}`);
    return `{${parts.join(", ")}}`;
  }
  return String(v);
}

/** Python `str(json.loads(token))` for the source text of a JSON number (exact for big ints and floats). */
export function pyStrOfNumberToken(token: string): string {
  if (/^-?\d+$/.test(token)) return BigInt(token).toString();
  return pyFloatRepr(Number(token));
}

const TOP_ID_RE = /"id"\s*:\s*(-?\d[\d.eE+-]*)/;

/**
 * `str(record["id"]).strip()` as Python computes it, using the raw line for numeric ids so that
 * ids beyond 2^53 (NQ's 19-digit ids written as numbers) and floats keep Python's spelling.
 */
export function pythonIdKey(id: unknown, rawLine?: string): string {
  if (typeof id === "string") return pyStrip(id);
  if (typeof id === "number" && rawLine !== undefined) {
    const m = TOP_ID_RE.exec(rawLine);
    if (m && Number(m[1]) === id) return pyStrOfNumberToken(m[1]);
  }
  return pyStrip(pyStr(id));
}
