// JSON text as Python's `json.dumps(value, indent=2)` writes it, for outputs compared with the official
// KILT evaluator's as text: every number is a Python float (`1.0`, not `1`; `1e-05`, not `0.00001`;
// `1e+16`), strings are ASCII with `\uXXXX` escapes (ensure_ascii), and the layout is JSON.stringify's at
// two spaces, which Python's indent=2 matches.

/** A finite number as Python's `repr(float(x))`: the shortest round-trip digits, fixed from 1e-4 up to 1e16, else exponent. */
export function pythonFloat(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "Infinity" : "-Infinity";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exp] = x.toExponential().split("e");
  const e = Number(exp);
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = negative ? "-" : "";
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, "0");
  const frac = digits.slice(e + 1);
  return `${sign}${whole}.${frac.length > 0 ? frac : "0"}`;
}

/** A string as Python's json.dumps writes it (ensure_ascii). */
function pythonString(s: string): string {
  return JSON.stringify(s).replace(/[\u007f-\uffff]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `value` as `json.dumps(value, indent=2)` would write it, every number a float. */
export function pythonJson(value: unknown, indent = 2, depth = 0): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") return pythonFloat(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "string") return pythonString(value);
  const pad = " ".repeat(indent * (depth + 1));
  const end = " ".repeat(indent * depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => `${pad}${pythonJson(v, indent, depth + 1)}`).join(",\n")}\n${end}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return "{}";
  return `{\n${entries.map(([k, v]) => `${pad}${pythonString(k)}: ${pythonJson(v, indent, depth + 1)}`).join(",\n")}\n${end}}`;
}
