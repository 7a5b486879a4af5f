// Hugging Face Parquet exports of KILT read as KILT JSON lines: `facebook/kilt_tasks` rows become task
// records and `facebook/kilt_wikipedia` rows knowledge-source pages, exactly as the released JSONL files
// hold them, so every reader of JSONL (validate, eval, ks ingest, datasets convert) takes a .parquet file.
// Streaming: one row group at a time (hyparquet, pure JavaScript). The Hugging Face loading scripts fill
// absent fields with defaults ("" for strings, -1 for integers and BLEU, {"score": -1}, [] for lists);
// those defaults are left out again. A value of the wrong type is an error naming file, row and field.

import { closeSync, openSync, readSync, statSync } from "node:fs";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects, parquetSchema, type AsyncBuffer, type FileMetaData } from "hyparquet";
import { LineError, type ByteLine, type ScanOptions, type ScanStats } from "./lines.js";
export { isParquetPath } from "./lines.js";
import type { Anchor, KiltPage, KiltRecord, Output, Provenance } from "./types.js";

/** The two Hugging Face layouts: task records (`kilt_tasks`) and knowledge-source pages (`kilt_wikipedia`). */
export type ParquetLayout = "kilt_tasks" | "kilt_wikipedia";

/** A value of the wrong type at `field` (a path such as `output[0].provenance[1].start_paragraph_id`). */
export class FieldError extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = "FieldError";
  }
}

/**
 * A Parquet row that cannot be read as KILT: which file, which row (1-based, `line` too, as every reader
 * of JSON lines counts) and which field. Its message: `FILE: row N: FIELD: REASON`.
 */
export class ParquetRowError extends LineError {
  constructor(
    file: string,
    readonly row: number,
    readonly field: string,
    readonly fieldReason: string,
  ) {
    super(file, row, `${field}: ${fieldReason}`);
    this.name = "ParquetRowError";
  }
}

/** One Parquet row as hyparquet reads it: column name → value. */
export type Row = Record<string, unknown>;

function kind(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "bigint") return "an integer";
  return typeof v === "object" ? "a struct" : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

/** A string, or undefined for null/absent and for the loader's default "". */
function str(v: unknown, field: string): string | undefined {
  if (v === null || v === undefined || v === "") return undefined;
  if (typeof v !== "string") throw new FieldError(field, `expected a string, found ${kind(v)}`);
  return v;
}

/** An integer, or undefined for null/absent and for the loader's default -1. */
function int(v: unknown, field: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isInteger(n)) throw new FieldError(field, `expected an integer, found ${kind(v)}`);
  return n === -1 ? undefined : n;
}

/** The shortest decimal that is the same float32 (Parquet `float` keeps 24 bits: 0.5714286, not 0.5714285714285714). */
export function float32Decimal(x: number): number {
  if (!Number.isFinite(x) || Math.fround(x) !== x) return x;
  for (let p = 1; p <= 9; p++) {
    const d = Number(x.toPrecision(p));
    if (Math.fround(d) === x) return d;
  }
  return x;
}

function float(v: unknown, field: string): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v !== "number") throw new FieldError(field, `expected a number, found ${kind(v)}`);
  return v === -1 ? undefined : float32Decimal(v);
}

function list(v: unknown, field: string): unknown[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v)) throw new FieldError(field, `expected a list, found ${kind(v)}`);
  return v;
}

function struct(v: unknown, field: string): Row {
  if (v === null || v === undefined) return {};
  if (typeof v !== "object" || Array.isArray(v)) throw new FieldError(field, `expected a struct, found ${kind(v)}`);
  return v as Row;
}

function strings(v: unknown, field: string): string[] {
  return list(v, field).map((s, i) => {
    if (typeof s !== "string") throw new FieldError(`${field}[${i}]`, `expected a string, found ${kind(s)}`);
    return s;
  });
}

/** Sets `key` on `o` when `value` is not undefined (so absent fields stay absent). */
function put<T extends object>(o: T, key: string, value: unknown): void {
  if (value !== undefined) (o as Record<string, unknown>)[key] = value;
}

function provenanceOf(v: unknown, field: string): Provenance {
  const p = struct(v, field);
  const out: Record<string, unknown> = {};
  put(out, "wikipedia_id", str(p.wikipedia_id, `${field}.wikipedia_id`));
  put(out, "title", str(p.title, `${field}.title`));
  put(out, "section", str(p.section, `${field}.section`));
  put(out, "start_paragraph_id", int(p.start_paragraph_id, `${field}.start_paragraph_id`));
  put(out, "start_character", int(p.start_character, `${field}.start_character`));
  put(out, "end_paragraph_id", int(p.end_paragraph_id, `${field}.end_paragraph_id`));
  put(out, "end_character", int(p.end_character, `${field}.end_character`));
  put(out, "bleu_score", float(p.bleu_score, `${field}.bleu_score`));
  const m = struct(p.meta, `${field}.meta`);
  const meta: Record<string, unknown> = {};
  put(meta, "fever_page_id", str(m.fever_page_id, `${field}.meta.fever_page_id`));
  put(meta, "fever_sentence_id", int(m.fever_sentence_id, `${field}.meta.fever_sentence_id`));
  const annotation = str(m.annotation_id, `${field}.meta.annotation_id`);
  // The loader stores annotation ids (64-bit, beyond doubles) as str(int); -1 is its default.
  if (annotation !== undefined && annotation !== "-1") meta.annotation_id = annotation;
  put(meta, "yes_no_answer", str(m.yes_no_answer, `${field}.meta.yes_no_answer`));
  const spans = strings(m.evidence_span, `${field}.meta.evidence_span`);
  if (spans.length > 0) meta.evidence_span = spans;
  if (Object.keys(meta).length > 0) out.meta = meta;
  return out as Provenance;
}

/** One `kilt_tasks` row as the KILT record it was made from. */
export function taskRecordFromRow(row: Row): KiltRecord {
  const id = row.id;
  if (id === null || id === undefined) throw new FieldError("id", "missing");
  if (typeof id !== "string" && typeof id !== "number") throw new FieldError("id", `expected a string, found ${kind(id)}`);
  const rec: Record<string, unknown> = { id };
  put(rec, "input", str(row.input, "input"));
  const output = list(row.output, "output").map((o, i): Output => {
    const f = `output[${i}]`;
    const s = struct(o, f);
    const out: Output = {};
    put(out, "answer", str(s.answer, `${f}.answer`));
    const provenance = list(s.provenance, `${f}.provenance`).map((p, j) => provenanceOf(p, `${f}.provenance[${j}]`));
    if (provenance.length > 0) out.provenance = provenance;
    const score = int(struct(s.meta, `${f}.meta`).score, `${f}.meta.score`);
    if (score !== undefined) out.meta = { score };
    return out;
  });
  // The loader's [] stands for no output (test files without answers).
  if (output.length > 0) rec.output = output;
  const m = struct(row.meta, "meta");
  const meta: Record<string, unknown> = {};
  for (const k of ["left_context", "mention", "right_context"]) put(meta, k, str(m[k], `meta.${k}`));
  const partial = list(m.partial_evidence, "meta.partial_evidence").map((v, i) => {
    const f = `meta.partial_evidence[${i}]`;
    const p = struct(v, f);
    const out: Record<string, unknown> = {};
    put(out, "wikipedia_id", str(p.wikipedia_id, `${f}.wikipedia_id`));
    put(out, "title", str(p.title, `${f}.title`));
    put(out, "section", str(p.section, `${f}.section`));
    put(out, "start_paragraph_id", int(p.start_paragraph_id, `${f}.start_paragraph_id`));
    put(out, "end_paragraph_id", int(p.end_paragraph_id, `${f}.end_paragraph_id`));
    const spans = strings(struct(p.meta, `${f}.meta`).evidence_span, `${f}.meta.evidence_span`);
    if (spans.length > 0) out.meta = { evidence_span: spans };
    return out;
  });
  if (partial.length > 0) meta.partial_evidence = partial;
  for (const k of ["obj_surface", "sub_surface", "subj_aliases", "template_questions"]) {
    const values = strings(m[k], `meta.${k}`);
    if (values.length > 0) meta[k] = values;
  }
  if (Object.keys(meta).length > 0) rec.meta = meta;
  return rec as KiltRecord;
}

/** One `kilt_wikipedia` row as the knowledge-source page it was made from (`kilt_knowledgesource.json`). */
export function pageFromRow(row: Row): KiltPage {
  const page: Record<string, unknown> = {};
  put(page, "_id", str(row.kilt_id, "kilt_id"));
  const id = str(row.wikipedia_id, "wikipedia_id");
  if (id === undefined) throw new FieldError("wikipedia_id", "missing");
  page.wikipedia_id = id;
  page.wikipedia_title = str(row.wikipedia_title, "wikipedia_title") ?? "";
  page.text = strings(struct(row.text, "text").paragraph, "text.paragraph");
  // Sequence({...}) of the loader: a struct of parallel lists, one per anchor field.
  const a = struct(row.anchors, "anchors");
  const col = (k: string) => list(a[k], `anchors.${k}`);
  const n = col("paragraph_id").length;
  for (const k of ["start", "end", "text", "href", "wikipedia_title", "wikipedia_id"])
    if (col(k).length !== n) throw new FieldError(`anchors.${k}`, `${col(k).length} values, anchors.paragraph_id has ${n}`);
  const anchors: Anchor[] = [];
  for (let i = 0; i < n; i++) {
    const anchor: Record<string, unknown> = {};
    put(anchor, "text", str(col("text")[i], `anchors.text[${i}]`) ?? "");
    put(anchor, "href", str(col("href")[i], `anchors.href[${i}]`) ?? "");
    put(anchor, "paragraph_id", int(col("paragraph_id")[i], `anchors.paragraph_id[${i}]`));
    put(anchor, "start", int(col("start")[i], `anchors.start[${i}]`));
    put(anchor, "end", int(col("end")[i], `anchors.end[${i}]`));
    put(anchor, "wikipedia_title", str(col("wikipedia_title")[i], `anchors.wikipedia_title[${i}]`));
    put(anchor, "wikipedia_id", str(col("wikipedia_id")[i], `anchors.wikipedia_id[${i}]`));
    anchors.push(anchor as unknown as Anchor);
  }
  page.anchors = anchors;
  put(page, "categories", typeof row.categories === "string" ? row.categories : str(row.categories, "categories"));
  const h = struct(row.history, "history");
  const history: Record<string, unknown> = {};
  for (const k of ["pageid", "parentid", "revid"]) put(history, k, int(h[k], `history.${k}`));
  if (h.pre_dump !== null && h.pre_dump !== undefined) {
    if (typeof h.pre_dump !== "boolean") throw new FieldError("history.pre_dump", `expected a boolean, found ${kind(h.pre_dump)}`);
    history.pre_dump = h.pre_dump;
  }
  for (const k of ["timestamp", "url"]) put(history, k, str(h[k], `history.${k}`));
  if (Object.keys(history).length > 0) page.history = history;
  const w = struct(row.wikidata_info, "wikidata_info");
  const wikidata: Record<string, unknown> = {};
  for (const k of ["description", "enwikiquote_title", "wikidata_id", "wikidata_label", "wikipedia_title"])
    put(wikidata, k, str(w[k], `wikidata_info.${k}`));
  const aliases = strings(struct(w.aliases, "wikidata_info.aliases").alias, "wikidata_info.aliases.alias");
  if (aliases.length > 0) wikidata.aliases = aliases;
  if (Object.keys(wikidata).length > 0) page.wikidata_info = wikidata;
  return page as KiltPage;
}

/** The layout of a Parquet file from its top-level columns, or an error naming the file and what it has. */
export function parquetLayout(file: string, metadata: FileMetaData): ParquetLayout {
  const columns = parquetSchema(metadata).children.map((c) => c.element.name);
  const has = (...names: string[]) => names.every((n) => columns.includes(n));
  if (has("kilt_id", "wikipedia_id", "text")) return "kilt_wikipedia";
  if (has("id", "output")) return "kilt_tasks";
  throw new Error(
    `${file}: not a Hugging Face kilt_tasks (id, input, meta, output) or kilt_wikipedia (kilt_id, wikipedia_id, text, …) Parquet file; its columns: ${columns.join(", ")}`,
  );
}

/** The error of a Parquet file whose sizes or offsets do not hold: `FILE: truncated or corrupt Parquet file: …`. */
function corrupt(file: string, detail: string): Error {
  return new Error(`${file}: truncated or corrupt Parquet file: ${detail}`);
}

/**
 * Checks every column chunk of row group `g` against the file: its pages (dictionary and data) must
 * start after the leading magic and end before the footer, with non-negative sizes and value counts.
 * Without this, a file that lies about its sizes reads as garbage rows or fails inside the decoder.
 */
export function checkRowGroup(file: string, metadata: FileMetaData, g: number, fileSize: number): void {
  const group = metadata.row_groups[g];
  const rows = Number(group.num_rows);
  if (!Number.isSafeInteger(rows) || rows < 0) throw corrupt(file, `row group ${g} has ${String(group.num_rows)} rows`);
  const dataEnd = fileSize - 8 - metadata.metadata_length; // the footer and its length and magic follow the data
  group.columns.forEach((chunk, c) => {
    const m = chunk.meta_data;
    const name = m ? m.path_in_schema.join(".") : `#${c}`;
    const where = `row group ${g}, column chunk ${c} (${name})`;
    if (!m) throw corrupt(file, `${where}: no column metadata`);
    const start = Number(m.dictionary_page_offset !== undefined && m.dictionary_page_offset > 0n ? m.dictionary_page_offset : m.data_page_offset);
    const size = Number(m.total_compressed_size);
    if (!(start >= 4) || !(size >= 0) || !Number.isSafeInteger(start + size) || start + size > dataEnd)
      throw corrupt(file, `${where}: pages at bytes ${start}–${start + size} (${size} bytes), but the data ends at byte ${dataEnd} of ${fileSize}`);
    if (!(Number(m.data_page_offset) >= start && Number(m.data_page_offset) < start + Math.max(size, 1)))
      throw corrupt(file, `${where}: data page offset ${String(m.data_page_offset)} outside its chunk (bytes ${start}–${start + size})`);
    if (m.num_values < 0n) throw corrupt(file, `${where}: ${String(m.num_values)} values`);
  });
}

async function open(file: string): Promise<{ buffer: AsyncBuffer; metadata: FileMetaData; layout: ParquetLayout }> {
  if (file === "-") throw new Error("a Parquet file cannot be read from standard input (it is read from its end): give its path");
  const st = statSync(file);
  if (!st.isFile()) throw new Error(`${file}: not a regular file`);
  const buffer = await asyncBufferFromFile(file);
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(buffer);
  } catch (e) {
    // A file that does not begin with "PAR1" is not Parquet at all; one that does is damaged (cut short,
    // or its footer overwritten).
    const msg = e instanceof Error ? e.message : String(e);
    const head = Buffer.alloc(4);
    const fd = openSync(file, "r");
    try {
      readSync(fd, head, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
    if (head.toString("latin1") !== "PAR1") throw new Error(`${file}: not a readable Parquet file (${msg})`);
    throw corrupt(file, `its footer (metadata) cannot be read (${msg}); ${st.size} bytes`);
  }
  return { buffer, metadata, layout: parquetLayout(file, metadata) };
}

/** One row as KILT JSON: `annotation_id`s go back to the JSON integers of the released files. */
function rowJson(layout: ParquetLayout, row: Row): string {
  if (layout === "kilt_wikipedia") return JSON.stringify(pageFromRow(row));
  // A key is always preceded by `{` or `,` outside strings; inside a string its quotes would be escaped.
  return JSON.stringify(taskRecordFromRow(row)).replace(/([{,])"annotation_id":"(\d+)"/g, '$1"annotation_id":$2');
}

/**
 * The rows of a Parquet file as KILT JSON lines, a row group at a time, in the shape of
 * `byteLineBatches`: line numbers are row numbers (1-based) and byte offsets are those of the
 * equivalent JSONL text, so a resumed reader (`startByte`/`startLine`) skips the rows before the offset.
 * A row that cannot be converted goes to `options.onError` (then the scan goes on) or is thrown.
 * `onProgress` gets the Parquet bytes of the row groups read so far.
 */
export async function* parquetLineBatches(file: string, options: ScanOptions = {}, stats?: ScanStats): AsyncGenerator<ByteLine[]> {
  const st: ScanStats = stats ?? { records: 0, blankLines: 0, badLines: 0, bytes: 0 };
  const { buffer, metadata, layout } = await open(file);
  const fileSize = statSync(file).size;
  const startByte = options.startByte ?? 0;
  let offset = 0; // in the equivalent JSONL text
  let row = 0;
  let groupStart = 0;
  for (const [g, group] of metadata.row_groups.entries()) {
    checkRowGroup(file, metadata, g, fileSize);
    const rows = Number(group.num_rows);
    let objects: Row[];
    try {
      objects = (await parquetReadObjects({ file: buffer, metadata, rowStart: groupStart, rowEnd: groupStart + rows })) as Row[];
    } catch (e) {
      // The decoder's own messages are JavaScript internals ("Invalid typed array length"): say what it means.
      throw corrupt(file, `row group ${g} (rows ${groupStart + 1}–${groupStart + rows}) cannot be decoded (${e instanceof Error ? e.message : String(e)})`);
    }
    if (objects.length !== rows) throw corrupt(file, `row group ${g} holds ${objects.length} rows, its metadata says ${rows}`);
    groupStart += rows;
    st.bytes += Number(group.total_compressed_size ?? group.total_byte_size ?? 0);
    const batch: ByteLine[] = [];
    for (const value of objects) {
      row++;
      let text: string;
      try {
        text = rowJson(layout, value);
      } catch (e) {
        if (!(e instanceof FieldError)) throw e;
        const err = new ParquetRowError(file, row, e.field, e.reason);
        st.badLines++;
        if (!options.onError) throw err;
        options.onError(err);
        continue;
      }
      const buf = Buffer.from(text, "utf8");
      const start = offset;
      offset += buf.length + 1;
      if (offset <= startByte) continue;
      if (start < startByte) throw new Error(`${file}: cannot resume at byte ${startByte}: it is inside row ${row}`);
      batch.push({ buf, start: 0, end: buf.length, line: row, startByte: start, endByte: offset });
    }
    options.onProgress?.(st.bytes);
    if (batch.length > 0) yield batch;
  }
}
