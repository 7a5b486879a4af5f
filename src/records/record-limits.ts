// Limits every reader of JSON lines shares, so one hostile record costs bounded stack and memory
// whatever command reads it: nesting deeper than MAX_DEPTH levels, and more than MAX_RECORD_OBJECTS
// JSON objects in one line (the evaluator counts provenance entries against the same limit), make the
// line malformed, reported by file and line like any other malformed line.

/** Nesting deeper than this is refused (Python's json.loads stops near 1,000 levels too). */
export const MAX_DEPTH = 1000;

/** Most JSON objects one line may hold (the evaluator: provenance entries of one record). */
export const MAX_RECORD_OBJECTS = 200_000;

/** The reason a line nested too deep is malformed. */
export const NESTING_REASON = `nesting deeper than ${MAX_DEPTH} levels`;

/** The reason a line with too many objects (or provenance entries) is malformed. */
export const OBJECTS_REASON = `more than ${MAX_RECORD_OBJECTS.toLocaleString("en-US")} JSON objects or provenance entries in one record (the per-record limit)`;

/**
 * Why the JSON text of one line breaks a limit (nesting or objects), or null. One pass over the text
 * outside strings (strings are skipped with indexOf); lines too short to break either limit are not scanned.
 */
export function lineLimitReason(text: string): string | null {
  if (text.length <= 2 * MAX_DEPTH) return null;
  let depth = 0;
  let objects = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // to the closing quote: one not preceded by an odd run of backslashes
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return null; // unterminated: JSON.parse says so
        let b = i - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((i - 1 - b) % 2 === 0) break;
      }
    } else if (c === 0x7b) {
      if (++depth > MAX_DEPTH) return NESTING_REASON;
      if (++objects > MAX_RECORD_OBJECTS) return OBJECTS_REASON;
    } else if (c === 0x5b) {
      if (++depth > MAX_DEPTH) return NESTING_REASON;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return null;
}
