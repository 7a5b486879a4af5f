// The evaluator's KILT record views: one JSONL line read straight from its bytes (./json-scanner.ts)
// into only what the metrics read (the id, the gold input, each output's answer, and per provenance
// entry the keys asked for: rank keys, title, passage text), without building the record as objects.
// Lists and objects where scalars belong are marked (their Python repr is not reproduced: the
// evaluator reports them). The whole line is validated as JSON, so a line accepted is one `JSON.parse`
// accepts; on any error `scanRecord` returns null and the caller takes the strict reader's message.
// Checked against JSON.parse in test/eval/scan.test.ts. Records given in memory get the same view
// from `viewOfValue`.

import { MAX_DEPTH, MAX_RECORD_OBJECTS, OBJECTS_REASON } from "../records/record-limits.js";
import { pyFloatRepr } from "../records/python-str.js";
import { BACKSLASH, decode, FAIL, Fail, Kind, names, numberValue, QUOTE, Scanner, setValue, stringOf, type Names, type PyValue, type TextRef } from "./json-scanner.js";
import { MEMBER_INTS, nameTable, VALUE_ESCAPED, VALUE_FRACTION, VALUE_HIGH, VALUE_STRING } from "./list-kernel.js";

export interface ProvEntry {
  /** False for a provenance item that is not an object (its other fields are then unset). */
  object: boolean;
  /** Values of the wanted keys, indexed as `ScanSpec.provKeys`; undefined where the key is absent. */
  vals: (PyValue | undefined)[];
  /** The `text` member when it is a string and texts were asked for. */
  text?: TextRef;
  /** The `text` member is present (a string or not). */
  hasText: boolean;
  /** The `text` member is present but not a string. */
  textValue?: PyValue;
}

export interface OutputView {
  object: boolean;
  hasAnswer: boolean;
  answer?: PyValue;
  hasProvenance: boolean;
  /** The provenance value is a list (false: absent or another type). */
  provenanceList: boolean;
  provenance: ProvEntry[];
}

export interface RecordView {
  hasId: boolean;
  id?: PyValue;
  hasInput: boolean;
  input?: PyValue;
  hasOutput: boolean;
  /** The output value is a list. */
  outputList: boolean;
  outputs: OutputView[];
  /** Some value of a wanted provenance key is a list or an object (so callers need not look for one otherwise). */
  compositeVals: boolean;
}

export interface ScanSpec {
  /** Provenance keys whose values are wanted (rank keys, wikipedia_id, title...). */
  provKeys: readonly string[];
  /** Keep `text` members of provenance entries as TextRefs. */
  texts: boolean;
  /** Recycle the view, its outputs and provenance entries: a view is valid only until the next `scanRecord` (streaming callers). */
  reuse?: boolean;
  /**
   * Provenance keys (of `provKeys`), and `"input"`, whose string values are validated but not decoded:
   * their PyValue has kind Str, Python truthiness, and `str` "" (for values only checked, never read).
   */
  kindOnly?: readonly string[];
}

/** The shared limits of every JSON-line reader (src/records/record-limits.ts). */
export { MAX_DEPTH } from "../records/record-limits.js";

/** Why the last scan failed (a short reason; the strict reader gives the full message). */
export let scanFailure = "";
/** Provenance entries of the record being scanned (against MAX_RECORD_OBJECTS). */
let provenanceSeen = 0;

/**
 * Whether the last line scanned had a byte >= 0x80 in a string (or failed before that could be known).
 * A line it accepted without one is ASCII, so valid UTF-8: callers check UTF-8 only when this is set.
 */
export let scanSawNonAscii = false;


const enc = new TextEncoder();
const scanner = new Scanner();
const EMPTY = Buffer.alloc(0);
/** A spec's provenance keys as bytes, which of them are kind-only, and whether the input is. */
interface SpecBytes {
  keys: Uint8Array[];
  kindOnly: boolean[];
  inputKindOnly: boolean;
  /** The names a provenance entry's members are matched against: the keys, "text", then names known to be skipped. */
  provNames: Names;
  /** The list kernel's name table: the keys, and "text" when texts are wanted (null: the kernel is not used). */
  table: Uint8Array | null;
}

/** Provenance members of KILT files that are skipped unless asked for (recognized without scanning the name). */
const PROV_SKIPPED = ["title", "start_paragraph_id", "end_paragraph_id", "start_character", "end_character", "bleu_score", "section", "meta"];
const RECORD_NAMES = names(["id", "input", "output"]);
const OUTPUT_NAMES = names(["answer", "provenance"]);
const specKeys = new WeakMap<ScanSpec, SpecBytes>();

/** The record view reused from line to line (`ScanSpec.reuse`). */
const pooledRecord: RecordView = { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };
/** Its id and input values. */
const pooledId: PyValue = { str: "", kind: Kind.Null, falsy: true };
const pooledInput: PyValue = { str: "", kind: Kind.Null, falsy: true };

/** A provenance entry with its own value and text objects, reused from record to record (`ScanSpec.reuse`). */
interface PooledEntry extends ProvEntry {
  pooledVals: PyValue[];
  pooledText: TextRef;
}
const pool: PooledEntry[] = [];
let pooledUsed = 0;
/** Set by `provEntry` when a wanted key's value is a list or object (`RecordView.compositeVals`). */
let compositeSeen = false;

function newEntry(keys: number, reuse: boolean): ProvEntry {
  if (!reuse) return { object: true, vals: new Array<PyValue | undefined>(keys), hasText: false };
  let e = pool[pooledUsed];
  if (e === undefined || e.pooledVals.length !== keys) {
    e = {
      object: true,
      vals: new Array<PyValue | undefined>(keys),
      hasText: false,
      pooledVals: Array.from({ length: keys }, () => ({ str: "", kind: Kind.Null, falsy: true })),
      pooledText: { buf: EMPTY, start: 0, end: 0, escaped: false, ascii: true },
    };
    pool[pooledUsed] = e;
  } else {
    e.object = true;
    const vals = e.vals;
    for (let i = 0; i < vals.length; i++) vals[i] = undefined;
    e.hasText = false;
    e.text = undefined;
    e.textValue = undefined;
    e.pooledText.buf = EMPTY;
  }
  pooledUsed++;
  return e;
}

/** Sets an entry's `text` to the string contents `buf[start, end)` (its pooled TextRef when reused). */
function setText(entry: ProvEntry, reuse: boolean, buf: Buffer, start: number, end: number, escaped: boolean, ascii: boolean): void {
  const t: TextRef = reuse ? (entry as PooledEntry).pooledText : { buf: EMPTY, start: 0, end: 0, escaped: false, ascii: true };
  t.buf = buf;
  t.start = start;
  t.end = end;
  t.escaped = escaped;
  t.ascii = ascii;
  entry.text = t;
  entry.textValue = undefined;
}

function provEntry(s: Scanner, spec: ScanSpec, sb: SpecBytes, depth: number): ProvEntry {
  const keys = sb.keys;
  if (s.peek() !== 0x7b) {
    s.skipValue(depth);
    return { object: false, vals: [], hasText: false };
  }
  const reuse = spec.reuse === true;
  const entry = newEntry(keys.length, reuse);
  const vals = entry.vals;
  if (!s.open(0x7d)) return entry;
  const nk = keys.length;
  do {
    const i = s.member(sb.provNames);
    if (i >= 0 && i < nk) {
      const v = reuse ? s.valueInto((entry as PooledEntry).pooledVals[i], depth + 1, sb.kindOnly[i]) : s.value(depth + 1, sb.kindOnly[i]);
      vals[i] = v;
      if (v.kind === Kind.Array || v.kind === Kind.Object) compositeSeen = true;
    }
    else if (i === nk && spec.texts) {
      entry.hasText = true;
      if (s.peek() === QUOTE) {
        const start = s.pos + 1;
        const close = s.scanStringRange();
        s.pos = close + 1;
        setText(entry, reuse, s.buf, start, close, s.sEscaped, s.sAscii);
      } else {
        entry.text = undefined;
        entry.textValue = s.value(depth + 1);
      }
    } else s.skipValue(depth + 1);
  } while (s.more(0x7d));
  return entry;
}

/** A member value the list kernel found: a string (decoded unless `kindOnly`) or a number token. */
function kernelValue(v: PyValue, buf: Buffer, start: number, end: number, flags: number, kindOnly: boolean): PyValue {
  if (flags & VALUE_STRING) {
    if (kindOnly) return setValue(v, "", Kind.Str, end === start);
    const str = stringOf(buf, (flags & VALUE_HIGH) === 0, (flags & VALUE_ESCAPED) !== 0, start, end);
    return setValue(v, str, Kind.Str, str.length === 0);
  }
  return numberValue(v, decode(buf, true, start, end), (flags & VALUE_FRACTION) === 0);
}

/**
 * At the `[` of a provenance list: reads it by the WebAssembly list kernel (./list-kernel.ts) into
 * `out.provenance`, the same entries `provEntry` gives, and returns true; false, with nothing read,
 * where the kernel is missing or the list is not a list of flat objects (the JavaScript route then).
 */
function listByKernel(s: Scanner, spec: ScanSpec, sb: SpecBytes, out: OutputView): boolean {
  const k = s.kernels;
  const table = sb.table;
  if (k === null || table === null) return false;
  if (k.namesOf !== sb) {
    if (table.length > k.names.length) return false;
    k.names.set(table);
    k.namesOf = sb;
  }
  const base = s.kernelBase;
  const r = k.provList(s.pos + base, s.end + base, k.recordsAt, k.recordsEnd, k.namesAt);
  if (r < 0) return false;
  const rec = k.records;
  const entries = rec[0];
  // Past the limit, the JavaScript route fails at the entry that passes it.
  if (provenanceSeen + entries > MAX_RECORD_OBJECTS) return false;
  provenanceSeen += entries;
  const reuse = spec.reuse === true;
  const buf = s.buf;
  const nk = sb.keys.length;
  let high = 0;
  let x = 1;
  for (let e = 0; e < entries; e++) {
    const entry = newEntry(nk, reuse);
    const vals = entry.vals;
    const members = rec[x++];
    for (let m = 0; m < members; m++, x += MEMBER_INTS) {
      const i = rec[x];
      const vs = rec[x + 1] - base;
      const ve = rec[x + 2] - base;
      const flags = rec[x + 3];
      if (i < nk) {
        const v = reuse ? (entry as PooledEntry).pooledVals[i] : { str: "", kind: Kind.Null, falsy: true };
        vals[i] = kernelValue(v, buf, vs, ve, flags, sb.kindOnly[i]);
      } else {
        // The table's last name is "text".
        entry.hasText = true;
        if (flags & VALUE_STRING) setText(entry, reuse, buf, vs, ve, (flags & VALUE_ESCAPED) !== 0, (flags & VALUE_HIGH) === 0);
        else {
          entry.text = undefined;
          entry.textValue = kernelValue({ str: "", kind: Kind.Null, falsy: true }, buf, vs, ve, flags, false);
        }
      }
    }
    high |= rec[x++];
    out.provenance.push(entry);
  }
  if (high & VALUE_HIGH) s.sawHigh = true;
  s.pos = r - base;
  return true;
}

/** An output view with its own answer value, reused from line to line (`ScanSpec.reuse`). */
interface PooledOutput extends OutputView {
  pooledAnswer: PyValue;
}
/** Output views reused from line to line, with their provenance arrays. */
const outputPool: PooledOutput[] = [];
let outputsUsed = 0;

function newOutput(reuse: boolean): OutputView {
  if (!reuse) return { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [] };
  let out = outputPool[outputsUsed];
  if (out === undefined) {
    out = { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [], pooledAnswer: { str: "", kind: Kind.Null, falsy: true } };
    outputPool[outputsUsed] = out;
  } else {
    out.object = false;
    out.hasAnswer = false;
    out.answer = undefined;
    out.hasProvenance = false;
    out.provenanceList = false;
    out.provenance.length = 0;
  }
  outputsUsed++;
  return out;
}

function outputItem(s: Scanner, spec: ScanSpec, keys: SpecBytes, depth: number): OutputView {
  const reuse = spec.reuse === true;
  const out = newOutput(reuse);
  if (s.peek() !== 0x7b) {
    s.skipValue(depth);
    return out;
  }
  out.object = true;
  if (!s.open(0x7d)) return out;
  do {
    const m = s.member(OUTPUT_NAMES);
    if (m === 0) {
      out.hasAnswer = true;
      out.answer = reuse ? s.valueInto((out as PooledOutput).pooledAnswer, depth + 1) : s.value(depth + 1);
    } else if (m === 1) {
      out.hasProvenance = true;
      if (reuse) out.provenance.length = 0;
      else out.provenance = [];
      if (s.peek() === 0x5b) {
        out.provenanceList = true;
        if (depth + 2 > MAX_DEPTH) throw FAIL;
        if (listByKernel(s, spec, keys, out)) continue;
        if (s.open(0x5d))
          do {
            // Memory per record is bounded: past the limit the line is malformed (named by file:line).
            if (++provenanceSeen > MAX_RECORD_OBJECTS) {
              s.failure = OBJECTS_REASON;
              throw FAIL;
            }
            out.provenance.push(provEntry(s, spec, keys, depth + 2));
          } while (s.more(0x5d));
      } else {
        out.provenanceList = false;
        s.skipValue(depth + 1);
      }
    } else s.skipValue(depth + 1);
  } while (s.more(0x7d));
  return out;
}

/**
 * Compiles a spec's names and tables once (`scanRecord` does it on first use). Readers call it before
 * their first line, so that a new spec never reaches code optimized for the previous one: a branch that
 * was never taken there would throw that code away.
 */
export function prepareSpec(spec: ScanSpec): void {
  specBytes(spec);
}

function specBytes(spec: ScanSpec): SpecBytes {
  let keys = specKeys.get(spec);
  if (keys === undefined) {
    const kindOnly = spec.kindOnly ?? [];
    keys = {
      keys: spec.provKeys.map((k) => enc.encode(k)),
      kindOnly: spec.provKeys.map((k) => kindOnly.includes(k)),
      inputKindOnly: kindOnly.includes("input"),
      provNames: names([...spec.provKeys, "text", ...PROV_SKIPPED]),
      table: nameTable([...spec.provKeys, ...(spec.texts ? ["text"] : [])].map((k) => enc.encode(k))),
    };
    specKeys.set(spec, keys);
  }
  return keys;
}

/**
 * Scans one JSONL line `buf[start, end)` (no newline) into a RecordView, or returns null when the
 * line is not a JSON object (see `scanFailure`; take the strict reader's message for the user).
 * With `spec.reuse`, provenance entries are recycled: the view is valid until the next call.
 */
export function scanRecord(buf: Buffer, start: number, end: number, spec: ScanSpec): RecordView | null {
  const keys = specKeys.get(spec) ?? specBytes(spec);
  const s = scanner;
  s.setBuffer(buf);
  s.pos = start;
  s.end = end;
  scanFailure = "";
  s.failure = "";
  provenanceSeen = 0;
  pooledUsed = 0;
  outputsUsed = 0;
  compositeSeen = false;
  s.sawHigh = false;
  scanSawNonAscii = true;
  const reuse = spec.reuse === true;
  const rec: RecordView = reuse ? pooledRecord : { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };
  if (reuse) {
    rec.hasId = false;
    rec.id = undefined;
    rec.hasInput = false;
    rec.input = undefined;
    rec.hasOutput = false;
    rec.outputList = false;
    rec.outputs.length = 0;
    rec.compositeVals = false;
  }
  try {
    s.ws();
    if (s.peek() !== 0x7b) throw FAIL;
    if (s.open(0x7d))
      do {
        const m = s.member(RECORD_NAMES);
        if (m === 0) {
          rec.hasId = true;
          rec.id = reuse ? s.valueInto(pooledId, 1) : s.value(1);
        } else if (m === 1) {
          rec.hasInput = true;
          rec.input = reuse ? s.valueInto(pooledInput, 1, keys.inputKindOnly) : s.value(1, keys.inputKindOnly);
        } else if (m === 2) {
          rec.hasOutput = true;
          if (reuse) rec.outputs.length = 0;
          else rec.outputs = [];
          if (s.peek() === 0x5b) {
            rec.outputList = true;
            if (s.open(0x5d)) do rec.outputs.push(outputItem(s, spec, keys, 2));
              while (s.more(0x5d));
          } else {
            rec.outputList = false;
            s.skipValue(1);
          }
        } else s.skipValue(1);
      } while (s.more(0x7d));
    s.ws();
    if (s.pos !== end) throw FAIL;
    rec.compositeVals = compositeSeen;
    scanSawNonAscii = s.sawHigh;
    return rec;
  } catch (e) {
    if (e instanceof Fail) {
      scanFailure = s.failure || `invalid JSON near byte ${s.pos - start}`;
      return null;
    }
    throw e;
  } finally {
    s.buf = EMPTY;
  }
}

// ---- the same view from a parsed JavaScript value (records given in memory) -------------------------

function pyValueOf(v: unknown): PyValue {
  if (typeof v === "string") return { str: v, kind: Kind.Str, falsy: v.length === 0 };
  if (v === true) return { str: "True", kind: Kind.True, falsy: false };
  if (v === false) return { str: "False", kind: Kind.False, falsy: true };
  if (v === null || v === undefined) return { str: "None", kind: Kind.Null, falsy: true };
  if (typeof v === "number") {
    const isInt = Number.isInteger(v) && Math.abs(v) < 1e16;
    return { str: isInt ? String(v) : pyFloatRepr(v), kind: isInt ? Kind.Int : Kind.Float, falsy: v === 0 };
  }
  if (typeof v === "bigint") return { str: v.toString(), kind: Kind.Int, falsy: v === 0n };
  if (Array.isArray(v)) return { str: "", kind: Kind.Array, falsy: v.length === 0 };
  return { str: "", kind: Kind.Object, falsy: Object.keys(v as object).length === 0 };
}

/** The PyValue of a member of a parsed object, undefined when it is absent. */
const memberValue = (o: Record<string, unknown>, key: string): PyValue | undefined => (key in o ? pyValueOf(o[key]) : undefined);

/**
 * The RecordView of a record already parsed into JavaScript values (library calls with arrays).
 * Numbers are Python ints when integral and below 1e16 (JavaScript cannot tell `5.0` from `5`).
 */
export function viewOfValue(rec: unknown, spec: ScanSpec): RecordView {
  const view: RecordView = { hasId: false, hasInput: false, hasOutput: false, outputList: false, outputs: [], compositeVals: false };
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return view;
  const r = rec as Record<string, unknown>;
  view.hasId = "id" in r;
  view.id = memberValue(r, "id");
  view.hasInput = "input" in r;
  view.input = memberValue(r, "input");
  if ("output" in r) {
    view.hasOutput = true;
    view.outputList = Array.isArray(r.output);
    if (Array.isArray(r.output)) {
      for (const o of r.output as unknown[]) {
        const out: OutputView = { object: false, hasAnswer: false, hasProvenance: false, provenanceList: false, provenance: [] };
        view.outputs.push(out);
        if (o === null || typeof o !== "object" || Array.isArray(o)) continue;
        out.object = true;
        const oo = o as Record<string, unknown>;
        out.hasAnswer = "answer" in oo;
        out.answer = memberValue(oo, "answer");
        if ("provenance" in oo) {
          out.hasProvenance = true;
          out.provenanceList = Array.isArray(oo.provenance);
          if (Array.isArray(oo.provenance)) {
            for (const p of oo.provenance as unknown[]) {
              if (p === null || typeof p !== "object" || Array.isArray(p)) {
                out.provenance.push({ object: false, vals: [], hasText: false });
                continue;
              }
              const pp = p as Record<string, unknown>;
              const entry: ProvEntry = { object: true, vals: spec.provKeys.map((k) => memberValue(pp, k)), hasText: false };
              if (entry.vals.some((v) => v !== undefined && (v.kind === Kind.Array || v.kind === Kind.Object))) view.compositeVals = true;
              if (spec.texts && "text" in pp) {
                entry.hasText = true;
                if (typeof pp.text === "string") {
                  const bytes = Buffer.from(JSON.stringify(pp.text).slice(1, -1), "utf8");
                  let high = 0;
                  for (const b of bytes) high |= b;
                  entry.text = { buf: bytes, start: 0, end: bytes.length, escaped: bytes.includes(BACKSLASH), ascii: high < 0x80 };
                } else entry.textValue = pyValueOf(pp.text);
              }
              out.provenance.push(entry);
            }
          }
        }
      }
    }
  }
  return view;
}
