// Reading and checking request parameters (query strings and JSON bodies): a wrong type or a value
// out of range is a 400 that names the parameter.

import { ApiError } from "./errors.js";

type Source = Record<string, string | undefined>;

/** A string parameter; `required` ones missing or empty are a 400. */
export function str(q: Source, name: string, o: { required: true; max?: number }): string;
export function str(q: Source, name: string, o?: { required?: false; max?: number }): string | undefined;
export function str(q: Source, name: string, o: { required?: boolean; max?: number } = {}): string | undefined {
  const v = q[name];
  if (v === undefined || v === "") {
    if (o.required) throw new ApiError(400, `${name} is required`);
    return undefined;
  }
  const max = o.max ?? 10_000;
  if (v.length > max) throw new ApiError(400, `${name} is longer than ${max} characters`);
  return v;
}

/** A whole-number parameter in [min, max], or `fallback` when absent. */
export function int(q: Source, name: string, o: { min: number; max: number; fallback?: number; required?: boolean }): number {
  const v = q[name];
  if (v === undefined || v === "") {
    if (o.fallback === undefined || o.required) throw new ApiError(400, `${name} is required`);
    return o.fallback;
  }
  if (!/^-?\d{1,15}$/.test(v)) throw new ApiError(400, `${name} must be a whole number, not ${JSON.stringify(v.slice(0, 40))}`);
  const n = Number(v);
  if (n < o.min || n > o.max) throw new ApiError(400, `${name} must be between ${o.min} and ${o.max}, not ${n}`);
  return n;
}

/** One of `choices`, or `fallback` when absent. */
export function choice<T extends string>(q: Source, name: string, choices: readonly T[], fallback: T): T {
  const v = q[name];
  if (v === undefined || v === "") return fallback;
  if (!(choices as readonly string[]).includes(v)) throw new ApiError(400, `${name} must be one of ${choices.join(", ")}, not ${JSON.stringify(v.slice(0, 40))}`);
  return v as T;
}

/** A comma-separated list of whole numbers (cut-offs such as `1,5,10`). */
export function intList(q: Source, name: string, o: { min: number; max: number; maxItems: number }): number[] | undefined {
  const v = q[name];
  if (v === undefined || v === "") return undefined;
  const parts = v.split(",").map((s) => s.trim());
  if (parts.length > o.maxItems) throw new ApiError(400, `${name}: at most ${o.maxItems} values`);
  return parts.map((p) => int({ [name]: p }, name, { ...o, required: true }));
}

/** A comma-separated list of names (letters, digits, `_`, `-`, `.`). */
export function nameList(q: Source, name: string, maxItems: number): string[] | undefined {
  const v = q[name];
  if (v === undefined || v === "") return undefined;
  const parts = v.split(",").map((s) => s.trim()).filter(Boolean);
  if (parts.length === 0 || parts.length > maxItems) throw new ApiError(400, `${name}: 1 to ${maxItems} comma-separated names`);
  for (const p of parts) if (!/^[\w.@-]{1,200}$/u.test(p)) throw new ApiError(400, `${name}: ${JSON.stringify(p.slice(0, 40))} is not a valid name`);
  return parts;
}

/** A JSON object body: anything else (malformed JSON, an array, a string) is a 400. */
export async function jsonObject(req: Request): Promise<Record<string, unknown>> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^application\/json\b/i.test(type)) throw new ApiError(415, "the body must be application/json");
  let v: unknown;
  try {
    v = JSON.parse(await req.text());
  } catch (e) {
    throw new ApiError(400, `malformed JSON body: ${(e as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new ApiError(400, "the body must be a JSON object");
  return v as Record<string, unknown>;
}
