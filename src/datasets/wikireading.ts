// WikiReading (Hewlett et al., ACL 2016): read the released JSON shards (one object per line, the
// features of the dataset README) from a shard, a directory of shards or the released .tar.gz,
// streaming with bounded memory, and turn each instance into a KILT slot-filling record: input
// "title [SEP] property", answers as the outputs, the document as provenance text. docs/wikireading.md.

import { createReadStream, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { createGunzip } from "node:zlib";
import { LineError, parseJsonObject, readJsonl, writeJsonl } from "../records/jsonl.js";
import { assertOutputsNotInputs } from "../util/safe-output.js";
import type { KiltRecord, Output } from "../records/types.js";

/** One line of a WikiReading JSON shard. Id sequences index the released vocabularies; tartan reads the string features. */
export interface WikiReadingInstance {
  key?: string | number;
  string_sequence: string[];
  question_string_sequence: string[];
  raw_answers?: string[];
  answer_string_sequence?: string[];
  answer_breaks?: number[];
  break_levels?: number[];
  paragraph_breaks?: number[];
  sentence_breaks?: number[];
  answer_location?: number[];
  full_match_answer_location?: number[];
  document_sequence?: number[];
  question_sequence?: number[];
  answer_sequence?: number[];
  answer_ids?: number[];
  raw_answer_ids?: number[];
  type_sequence?: number[];
  [extra: string]: unknown;
}

/** An instance as tartan uses it. */
export interface WikiReadingExample {
  /** `<key>:<property>`, or `<shard>:<line>` for a line without a key. */
  id: string;
  key?: string;
  /** The article title, read off the start of the document (the data has no title feature; see docs). */
  title: string;
  /** The property (question) as words joined by spaces: "date of birth". */
  property: string;
  /** The answer set (raw_answers; else answer_string_sequence cut at answer_breaks). */
  answers: string[];
  /** Document paragraphs rebuilt from string_sequence and break_levels. */
  paragraphs: string[];
  /** The document words (string_sequence). */
  tokens: string[];
  /** Some answer occurs verbatim in the document (full_match_answer_location not empty); undefined if the feature is absent. */
  answerInDocument?: boolean;
  file: string;
  line: number;
}

/** A WikiReading file that is not in the released format, with where and why. */
export class WikiReadingFormatError extends Error {
  constructor(where: string, reason: string) {
    super(`${where}: ${reason}`);
    this.name = "WikiReadingFormatError";
  }
}

const STRING_LISTS = ["string_sequence", "question_string_sequence", "answer_string_sequence"] as const;
const INT_LISTS = [
  "answer_breaks", "break_levels", "paragraph_breaks", "sentence_breaks", "answer_location", "full_match_answer_location",
  "document_sequence", "question_sequence", "answer_sequence", "answer_ids", "raw_answer_ids", "type_sequence",
] as const;

/** Checks the types of one parsed line; `where` names it in errors. */
export function checkWikiReadingInstance(v: Record<string, unknown>, where: string): WikiReadingInstance {
  for (const f of STRING_LISTS) {
    const x = v[f];
    if (x === undefined && f === "answer_string_sequence") continue;
    if (!Array.isArray(x) || x.some((s) => typeof s !== "string")) throw new WikiReadingFormatError(where, `${f} must be a list of strings`);
  }
  for (const f of INT_LISTS) {
    const x = v[f];
    if (x !== undefined && (!Array.isArray(x) || x.some((n) => !Number.isInteger(n)))) throw new WikiReadingFormatError(where, `${f} must be a list of integers`);
  }
  const ra = v.raw_answers;
  if (typeof ra === "string") v.raw_answers = [ra];
  else if (ra !== undefined && (!Array.isArray(ra) || ra.some((s) => typeof s !== "string"))) throw new WikiReadingFormatError(where, "raw_answers must be a list of strings");
  if (v.key !== undefined && typeof v.key !== "string" && typeof v.key !== "number") throw new WikiReadingFormatError(where, "key must be a string or a number");
  return v as WikiReadingInstance;
}

/** Break level of word i relative to word i-1: 0 none, 1 space, 2 line, 3 sentence, 4 paragraph (SyntaxNet/SLING's levels). */
function levelsOf(inst: WikiReadingInstance): number[] | undefined {
  const b = inst.break_levels;
  return b && b.length === inst.string_sequence.length ? b : undefined;
}

/**
 * The document as paragraphs: words joined by their break levels (0 nothing, 1 and 3 a space, 2 and 4+
 * a new paragraph). Without usable break_levels, a new paragraph starts at each paragraph_breaks index
 * and words are joined by spaces.
 */
export function documentParagraphs(inst: WikiReadingInstance): string[] {
  const words = inst.string_sequence;
  const levels = levelsOf(inst);
  const starts = levels ? undefined : new Set(inst.paragraph_breaks ?? []);
  const paragraphs: string[] = [];
  let cur = "";
  for (let i = 0; i < words.length; i++) {
    const lvl = levels ? levels[i] : starts!.has(i) ? 4 : 1;
    if (i > 0 && (lvl === 2 || lvl >= 4)) {
      if (cur.length > 0) paragraphs.push(cur);
      cur = "";
    } else if (i > 0 && lvl !== 0 && cur.length > 0) cur += " ";
    cur += words[i];
  }
  if (cur.length > 0) paragraphs.push(cur);
  return paragraphs;
}

/** Words that end the subject of an article's opening sentence ("Lyon is …", "Marie Curie (7 November 1867 – …) was …"). */
const TITLE_STOP = new Set(["(", ",", ":", ";", "–", "—", "-", "is", "was", "are", "were", "refers", "may", "has", "had", "or"]);
const MAX_TITLE_WORDS = 12;

/**
 * The article title read off the document: the words of the first sentence before "(", ",", "is",
 * "was", "are", "were", "refers", …; undefined when none of them comes within 12 words. Inferred, not
 * a feature of the data (docs/wikireading.md).
 */
export function titleFromDocument(inst: WikiReadingInstance): string | undefined {
  const words = inst.string_sequence;
  const levels = levelsOf(inst);
  let title = "";
  for (let i = 0; i < words.length && i <= MAX_TITLE_WORDS; i++) {
    const lvl = levels ? levels[i] : 1;
    if (i > 0 && lvl >= 2) break;
    if (TITLE_STOP.has(words[i]) || TITLE_STOP.has(words[i].toLowerCase())) return i > 0 ? title : undefined;
    if (i > 0 && lvl !== 0) title += " ";
    title += words[i];
  }
  return undefined;
}

/** The answer set: raw_answers if any, else answer_string_sequence cut at answer_breaks (words joined by spaces). */
export function answersOf(inst: WikiReadingInstance): string[] {
  const raw = (inst.raw_answers ?? []).map((a) => a.trim()).filter((a) => a.length > 0);
  if (raw.length > 0) return [...new Set(raw)];
  const words = inst.answer_string_sequence ?? [];
  const cuts = [0, ...(inst.answer_breaks ?? []).filter((b) => b > 0 && b < words.length), words.length];
  const out: string[] = [];
  for (let i = 0; i + 1 < cuts.length; i++) {
    const a = words.slice(cuts[i], cuts[i + 1]).join(" ").trim();
    if (a.length > 0 && !out.includes(a)) out.push(a);
  }
  return out;
}

/** An instance as a {@link WikiReadingExample}. */
export function toExample(inst: WikiReadingInstance, file: string, line: number): WikiReadingExample {
  const property = inst.question_string_sequence.join(" ");
  const key = inst.key === undefined ? undefined : String(inst.key);
  const title = titleFromDocument(inst) ?? key ?? "";
  const ex: WikiReadingExample = {
    id: key !== undefined ? `${key}:${property}` : `${basename(file)}:${line}`,
    title,
    property,
    answers: answersOf(inst),
    paragraphs: documentParagraphs(inst),
    tokens: inst.string_sequence,
    file,
    line,
  };
  if (key !== undefined) ex.key = key;
  if (inst.full_match_answer_location) ex.answerInDocument = inst.full_match_answer_location.length > 0;
  return ex;
}

// ---- streaming the released files ----

/** The shard files of a directory (WikiReading's `*-000NN-of-000MM.json`, any .json/.jsonl/.gz, .tar.gz), sorted. */
export function shardFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.(json|jsonl)(\.gz)?$/.test(f) || /\.(tar|tar\.gz|tgz)$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

const isTar = (p: string) => /\.(tar|tar\.gz|tgz)$/.test(p);

function octal(buf: Buffer, start: number, len: number): number {
  // GNU base-256 for sizes over 8 GiB: high bit of the first byte set.
  if (buf[start] & 0x80) {
    let n = buf[start] & 0x7f;
    for (let i = 1; i < len; i++) n = n * 256 + buf[start + i];
    return n;
  }
  const s = buf.toString("latin1", start, start + len).replace(/\0.*$/s, "").trim();
  return s.length === 0 ? 0 : parseInt(s, 8);
}

function cString(buf: Buffer, start: number, len: number): string {
  const end = buf.indexOf(0, start);
  return buf.toString("utf8", start, end === -1 || end > start + len ? start + len : end);
}

/** A line of a tar member: its text, the member name and line number. */
export interface TarLine {
  member: string;
  line: number;
  text: string;
}

/**
 * The lines of the regular files of a tar archive (.tar, .tar.gz, .tgz) whose names pass `want`,
 * streamed: memory holds one read chunk and one partial line. ustar, GNU long names and pax headers.
 */
export async function* tarLines(file: string, want: (name: string) => boolean = () => true, chunkSize = 1 << 20): AsyncGenerator<TarLine[]> {
  const raw = createReadStream(file, { highWaterMark: chunkSize });
  const stream = /\.(tar\.gz|tgz)$/.test(file) ? raw.pipe(createGunzip()) : raw;
  let pending: Buffer = Buffer.alloc(0); // unconsumed bytes of the archive
  let state: "header" | "data" | "skip" = "header";
  let remaining = 0; // data bytes left in the current member
  let padding = 0;
  let member = "";
  let longName: string | undefined;
  let paxPath: string | undefined;
  let longBuf: Buffer[] | undefined; // collecting a GNU long name or pax header body
  let longKind: "L" | "x" | undefined;
  let partial: Buffer | null = null;
  let lineNo = 0;
  let zeros = 0;
  let ended = false;
  const out: TarLine[] = [];

  const feedData = (chunk: Buffer, emit: boolean) => {
    if (longBuf) {
      longBuf.push(chunk);
      return;
    }
    if (!emit) return;
    let s = 0;
    let i = chunk.indexOf(0x0a);
    while (i !== -1) {
      const piece = partial ? Buffer.concat([partial, chunk.subarray(s, i)]) : chunk.subarray(s, i);
      partial = null;
      lineNo++;
      const text = piece.toString("utf8").replace(/\r$/, "");
      if (text.trim().length > 0) out.push({ member, line: lineNo, text });
      s = i + 1;
      i = chunk.indexOf(0x0a, s);
    }
    if (s < chunk.length) partial = partial ? Buffer.concat([partial, chunk.subarray(s)]) : Buffer.from(chunk.subarray(s));
  };
  const endMember = (emit: boolean) => {
    if (longBuf) {
      const body = Buffer.concat(longBuf).toString("utf8");
      if (longKind === "L") longName = body.replace(/\0.*$/s, "");
      else {
        const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body);
        if (m) paxPath = m[1];
      }
      longBuf = undefined;
      longKind = undefined;
      return;
    }
    if (emit && partial && partial.length > 0) {
      lineNo++;
      const text = partial.toString("utf8").replace(/\r$/, "");
      if (text.trim().length > 0) out.push({ member, line: lineNo, text });
    }
    partial = null;
  };

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      let off = 0;
      while (off < pending.length) {
        if (state === "header") {
          if (pending.length - off < 512) break;
          const h = pending.subarray(off, off + 512);
          off += 512;
          if (h.every((b) => b === 0)) {
            if (++zeros >= 2) {
              ended = true;
              break;
            }
            continue;
          }
          zeros = 0;
          const type = String.fromCharCode(h[156] || 0x30);
          const size = octal(h, 124, 12);
          const prefix = h.toString("latin1", 257, 262) === "ustar" ? cString(h, 345, 155) : "";
          const name = paxPath ?? longName ?? (prefix ? `${prefix}/${cString(h, 0, 100)}` : cString(h, 0, 100));
          remaining = size;
          padding = (512 - (size % 512)) % 512;
          if (type === "L" || type === "x") {
            longBuf = [];
            longKind = type === "L" ? "L" : "x";
            state = "data";
          } else {
            longName = undefined;
            paxPath = undefined;
            member = name;
            lineNo = 0;
            state = (type === "0" || type === "\0" || type === "7") && want(name) ? "data" : "skip";
          }
          if (remaining === 0) {
            endMember(state === "data");
            state = "header";
          }
        } else {
          const take = Math.min(remaining, pending.length - off);
          feedData(pending.subarray(off, off + take), state === "data");
          off += take;
          remaining -= take;
          if (remaining === 0) {
            if (state === "data") endMember(!longBuf);
            if (padding > 0) {
              remaining = padding;
              padding = 0;
              state = "skip";
            } else state = "header";
          }
        }
      }
      pending = off < pending.length ? Buffer.from(pending.subarray(off)) : Buffer.alloc(0);
      if (out.length > 0) yield out.splice(0, out.length);
      if (ended) return;
    }
    if (out.length > 0) yield out.splice(0, out.length);
  } finally {
    raw.destroy();
  }
}

/** Options of reading a WikiReading file. */
export interface ReadWikiReadingOptions {
  /** Called for a malformed line; without it the first one is thrown. */
  onError?: (e: LineError) => void;
  /** Stop after this many instances. */
  limit?: number;
}

async function* instancesOf(path: string, onError: ReadWikiReadingOptions["onError"]): AsyncGenerator<{ inst: WikiReadingInstance; file: string; line: number }> {
  const fail = (e: LineError) => {
    if (onError) onError(e);
    else throw e;
  };
  if (isTar(path)) {
    for await (const batch of tarLines(path, (n) => /\.(json|jsonl)$/.test(n) && !basename(n).startsWith("."))) {
      for (const l of batch) {
        const where = `${path}:${l.member}`;
        const r = parseJsonObject(l.text);
        if ("reason" in r) {
          fail(new LineError(where, l.line, r.reason));
          continue;
        }
        try {
          yield { inst: checkWikiReadingInstance(r.value, `${where}:${l.line}`), file: where, line: l.line };
        } catch (e) {
          if (e instanceof WikiReadingFormatError) fail(new LineError(where, l.line, e.message.slice(`${where}:${l.line}: `.length)));
          else throw e;
        }
      }
    }
    return;
  }
  for await (const { value, line } of readJsonl(path, { onError })) {
    try {
      yield { inst: checkWikiReadingInstance(value, `${path}:${line}`), file: path, line };
    } catch (e) {
      if (e instanceof WikiReadingFormatError) fail(new LineError(path, line, e.message.slice(`${path}:${line}: `.length)));
      else throw e;
    }
  }
}

/**
 * The examples of a shard (.json/.jsonl, .gz), a directory of shards, or a tar archive of shards
 * (the released train.json.tar.gz), in file order, one at a time: memory does not grow with the data.
 */
export async function* readWikiReading(path: string, options: ReadWikiReadingOptions = {}): AsyncGenerator<WikiReadingExample> {
  const files = statSync(path).isDirectory() ? shardFiles(path) : [path];
  let n = 0;
  for (const f of files) {
    for await (const { inst, file, line } of instancesOf(f, options.onError)) {
      if (options.limit !== undefined && n >= options.limit) return;
      n++;
      yield toExample(inst, file, line);
    }
  }
}

/** The separator between the title and the property in a converted record's input. */
export const SEP = " [SEP] ";

/** Options of converting WikiReading instances to KILT records. */
export interface WikiReadingKiltOptions {
  /** Put the document text into the provenance (default true). */
  text?: boolean;
}

/**
 * A KILT slot-filling record: input "title [SEP] property"; one output per answer (the answer set,
 * all needed, also in meta.answers); the first output's provenance is the document (wikipedia_id:
 * the key, else the title; text: paragraphs joined by newlines).
 */
export function wikiReadingToKilt(ex: WikiReadingExample, options: WikiReadingKiltOptions = {}): KiltRecord {
  const provenance = {
    wikipedia_id: ex.key ?? ex.title,
    title: ex.title,
    ...(options.text === false ? {} : { text: ex.paragraphs.join("\n") }),
  };
  const output: Output[] = ex.answers.map((answer, i) => (i === 0 ? { answer, provenance: [provenance] } : { answer }));
  if (output.length === 0) output.push({ provenance: [provenance] });
  const meta: Record<string, unknown> = { property: ex.property, title: ex.title, answers: ex.answers };
  if (ex.key !== undefined) meta.key = ex.key;
  if (ex.answerInDocument !== undefined) meta.answer_in_document = ex.answerInDocument;
  return { id: ex.id, input: `${ex.title}${SEP}${ex.property}`, output, meta };
}

/** Options of {@link convertWikiReadingFile}. */
export interface WikiReadingConvertOptions extends WikiReadingKiltOptions {
  /** Stop after this many instances. */
  limit?: number;
  /** Called with every example converted (e.g. to gather the property table). */
  onExample?: (ex: WikiReadingExample) => void;
  /** Outputs besides `out` that must not be the input either (a property table). */
  alsoWrites?: readonly (string | undefined)[];
}

/**
 * `tartan datasets convert wikireading`: WikiReading shards (a shard, a directory of them, or the released
 * tar) to KILT records in `out`, written atomically. Malformed lines are skipped and returned.
 */
export async function convertWikiReadingFile(path: string, out: string, options: WikiReadingConvertOptions = {}): Promise<{ records: number; errors: LineError[] }> {
  assertOutputsNotInputs([out, ...(options.alsoWrites ?? [])], [path]);
  const errors: LineError[] = [];
  async function* records(): AsyncGenerator<KiltRecord> {
    for await (const ex of readWikiReading(path, { limit: options.limit, onError: (e) => errors.push(e) })) {
      options.onExample?.(ex);
      yield wikiReadingToKilt(ex, options);
    }
  }
  return { records: await writeJsonl(out, records()), errors };
}
