// Character offsets the way KILT counts them. KILT is Python: `start_character`, `end_character` and
// anchor `start`/`end` count Unicode code points, while a JavaScript string index counts UTF-16 code
// units. The two agree unless the text holds a character outside the Basic Multilingual Plane (emoji,
// math letters, rare CJK); these helpers convert where they differ and cost one regex test where not.

const SURROGATE = /[\uD800-\uDFFF]/;

/** True when UTF-16 indexes and code-point indexes of `s` differ somewhere. */
export function hasAstral(s: string): boolean {
  return SURROGATE.test(s);
}

/** Number of code points in `s` (Python `len(s)`). */
export function cpLength(s: string): number {
  if (!hasAstral(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Converts offsets of one string between UTF-16 units and code points. Build it once per string;
 * strings without astral characters convert by identity.
 */
export class OffsetMap {
  /** cpAt[u] = code-point index of UTF-16 index u (length s.length + 1), or null for identity. */
  private readonly cpAt: Int32Array | null;
  /** unitAt[c] = UTF-16 index of code point c (length cpLength + 1), or null for identity. */
  private readonly unitAt: Int32Array | null;
  readonly units: number;
  readonly codePoints: number;

  constructor(s: string) {
    this.units = s.length;
    if (!hasAstral(s)) {
      this.cpAt = null;
      this.unitAt = null;
      this.codePoints = s.length;
      return;
    }
    const cpAt = new Int32Array(s.length + 1);
    const unitAt: number[] = [];
    let cp = 0;
    for (let i = 0; i < s.length; i++) {
      cpAt[i] = cp;
      unitAt.push(i);
      const c = s.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++;
          cpAt[i] = cp; // the low surrogate belongs to the same code point
        }
      }
      cp++;
    }
    cpAt[s.length] = cp;
    unitAt.push(s.length);
    this.cpAt = cpAt;
    this.unitAt = Int32Array.from(unitAt);
    this.codePoints = cp;
  }

  /** Code-point index of UTF-16 index `u`. */
  toCodePoint(u: number): number {
    return this.cpAt === null ? u : this.cpAt[u];
  }

  /** UTF-16 index of code-point index `c` (clamped to the string's end). */
  toUnit(c: number): number {
    if (this.unitAt === null) return Math.min(c, this.units);
    return c >= this.unitAt.length ? this.units : this.unitAt[c];
  }
}

/** Python `s[start:end]` for non-negative code-point offsets. */
export function cpSlice(s: string, start: number, end: number): string {
  if (!hasAstral(s)) return s.slice(start, end);
  const m = new OffsetMap(s);
  return s.slice(m.toUnit(start), m.toUnit(end));
}
