// The end-to-end job: for each input record, retrieve passages, read an answer, and write a KILT
// prediction whose provenance is the evidence the reader used followed by the rest of the retrieved
// ranking. Output is appended record by record, so an interrupted run resumes where it stopped
// (records already written are skipped, a torn last line is cut off). A run can be one shard of
// several (records i with i % count === index), which is how the CLI uses both cores.

import { identityChange, inputIdentity, type FileIdentity } from "../util/input-identity.js";
import { closeSync, existsSync, fsyncSync, lstatSync, openSync, readFileSync, readSync, rmSync, statSync, truncateSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { writeFileSafe } from "../util/safe-output.js";
import { readJsonl, scanJsonl } from "../records/jsonl.js";
import { pythonIdKey } from "../records/python-str.js";
import type { KiltRecord, Provenance } from "../records/types.js";
import type { Reader, ReaderPassage } from "../readers/types.js";
import type { Retriever } from "../retrieval/types.js";
import { unitProvenance } from "../retrieval/units/unit.js";
import { readsEntityMarkers } from "../retrieval/open.js";
import { stripEntityMarkers } from "../retrieval/markers.js";

/** Options of {@link runPipeline}. */
export interface RunOptions {
  /** Passages retrieved per record (and the length of the written provenance list). */
  topK: number;
  /** Passages handed to the reader (the best `readerK` of the `topK`). Default: all. */
  readerK?: number;
  /**
   * Passage texts in the written provenance: full = every retrieved passage (needed for
   * answer_in_context@k), cited = only the passages the reader cites, none. Default full.
   */
  text?: TextMode;
  /** Old form of `text`: true = full, false = none. */
  withText?: boolean;
  shard?: { index: number; count: number };
  /** Records written per fsync. Default 64. */
  flushEvery?: number;
  /** Called after each record with the predictions written so far and the records already done by an earlier run. */
  onProgress?: (done: number, skipped: number) => void;
}

/** What {@link runPipeline} did: records seen, written, resumed and failed (with line, id and error). */
export interface RunStats {
  records: number;
  written: number;
  /** Already in the output from an earlier, interrupted run. */
  resumed: number;
  failed: { line: number; id: string; error: string }[];
}

/** Which passage texts a run writes into its provenance (see {@link RunOptions.text}). */
export type TextMode = "full" | "cited" | "none";

/**
 * The query a retriever sees: the record's input, without KILT's entity markers (removed by KILT's own
 * rule, {@link stripEntityMarkers}, the one a text retriever opened by `openIndex` applies too) unless
 * `keepEntityMarkers` (the entity retriever reads the marked mention).
 */
export function queryOf(record: KiltRecord, keepEntityMarkers = false): string {
  const input = typeof record.input === "string" ? record.input : "";
  return keepEntityMarkers ? input : stripEntityMarkers(input);
}

function withoutText(p: Provenance): Provenance {
  const { text: _, ...rest } = p;
  return rest;
}

function provKey(p: Provenance): string {
  return `${String(p.wikipedia_id)}|${String(p.start_paragraph_id ?? "")}|${String(p.start_character ?? "")}|${String(p.end_character ?? "")}`;
}

/**
 * The reader's evidence first, then the retrieved ranking without repeats, at most `k` entries. Where
 * the reader cites a retrieved passage, the retrieved entry (with its text and score) takes its place.
 */
export function mergeProvenance(readerProvenance: readonly Provenance[], retrieved: readonly Provenance[], k: number): Provenance[] {
  const byKey = new Map<string, Provenance>();
  for (const p of retrieved) if (!byKey.has(provKey(p))) byKey.set(provKey(p), p);
  const out: Provenance[] = [];
  const seen = new Set<string>();
  for (const p of [...readerProvenance, ...retrieved]) {
    const key = provKey(p);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(byKey.get(key) ?? p);
    if (out.length >= k) break;
  }
  return out;
}

/** The sidecar that marks `out` as written by `tartan run` (and for which input). */
export function runSidecar(out: string): string {
  return `${out}.run.json`;
}

interface RunMark {
  tool: "tartan run";
  /** Absolute path of the input the predictions are for. */
  input: string;
  /** Inode of the output file the mark belongs to (a replaced file loses its mark). */
  ino: number;
  /** SHA-1 of the file's first line once one is written (a file copied over it loses its mark). */
  first?: string;
  /** The input's identity (size, modification time, sampled checksum): a changed input starts the run over. */
  inputs?: FileIdentity[] | null;
}

const sha1 = (s: string | Buffer) => createHash("sha1").update(s).digest("hex");

/** The first line of `file` (up to 1 MiB), without its newline, or null when it has none yet. */
function firstLine(file: string): Buffer | null {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(1 << 20);
    const got = readSync(fd, buf, 0, buf.length, 0);
    const nl = buf.subarray(0, got).indexOf(0x0a);
    return nl === -1 ? null : buf.subarray(0, nl);
  } finally {
    closeSync(fd);
  }
}

/** Marks `out` (which must exist) as this run's output. */
export function markRunOutput(out: string, input: string): void {
  const first = firstLine(out);
  const mark: RunMark = { tool: "tartan run", input: resolve(input), ino: statSync(out).ino, ...(first ? { first: sha1(first) } : {}), inputs: inputIdentity(input) };
  writeFileSafe(runSidecar(out), `${JSON.stringify(mark)}\n`);
}

/**
 * Throws unless `out` may be appended to by a run over `input`: it does not exist, is empty, or carries
 * the mark of a run over the same input (its sidecar, naming the input and the file's inode). A file
 * tartan run did not write (a KILT file given as --out by mistake, a symlink) is never touched.
 */
export function checkRunOutput(out: string, input: string): "new" | "ours" {
  let st;
  try {
    st = lstatSync(out);
  } catch {
    return "new";
  }
  if (st.isSymbolicLink()) throw new Error(`${out} is a symlink; tartan run appends only to files it created: choose another --out`);
  if (!st.isFile()) throw new Error(`${out} is not a regular file: choose another --out`);
  if (st.size === 0) return "new";
  const side = runSidecar(out);
  let mark: Partial<RunMark>;
  try {
    mark = JSON.parse(readFileSync(side, "utf8")) as Partial<RunMark>;
  } catch {
    throw new Error(`${out} exists and was not written by tartan run (no ${side}): refusing to append to it or cut its last line; remove it or choose another --out`);
  }
  const first = mark.first !== undefined ? firstLine(out) : null;
  if (mark.tool !== "tartan run" || mark.ino !== st.ino || (mark.first !== undefined && (first === null || sha1(first) !== mark.first)))
    throw new Error(`${out} is not the file ${side} belongs to (replaced or copied since): refusing to append to it; remove both or choose another --out`);
  if (mark.input !== resolve(input)) throw new Error(`${out} holds predictions for ${String(mark.input)}, not ${resolve(input)}: choose another --out`);
  return "ours";
}

/**
 * Makes `out` safe to append to for a run over `input` (see {@link checkRunOutput}): creates and marks
 * a new output, or cuts the torn last line of this run's own interrupted output (a crash mid-write)
 * and returns the ids already written, so they are skipped.
 */
export async function resumeOutput(out: string, input: string, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<Set<string>> {
  const done = new Set<string>();
  let fresh = checkRunOutput(out, input) === "new";
  if (!fresh) {
    // Predictions for another version of the input are not resumed: the run starts over, saying so.
    const mark = JSON.parse(readFileSync(runSidecar(out), "utf8")) as Partial<RunMark>;
    const why = mark.inputs === undefined ? null : identityChange(mark.inputs, inputIdentity(input));
    if (why !== null) {
      log(`tartan run: ${why} since the predictions in ${out} were begun: starting over`);
      truncateSync(out, 0);
      fresh = true;
    }
  }
  if (fresh) {
    rmSync(runSidecar(out), { force: true });
    if (!existsSync(out)) closeSync(openSync(out, "wx", 0o644));
    markRunOutput(out, input);
    return done;
  }
  const size = statSync(out).size;
  if (size > 0) {
    const fd = openSync(out, "r");
    const tail = Buffer.alloc(Math.min(size, 1 << 20));
    const got = readSync(fd, tail, 0, tail.length, size - tail.length);
    closeSync(fd);
    if (got !== tail.length) throw new Error(`${out}: read ${got} of ${tail.length} bytes of its end (changed while reading?)`);
    if (tail[tail.length - 1] !== 0x0a) {
      const lastNl = tail.lastIndexOf(0x0a);
      truncateSync(out, lastNl === -1 ? size - tail.length : size - tail.length + lastNl + 1);
    }
  }
  await scanJsonl<KiltRecord>(out, (r, _line, raw) => done.add(pythonIdKey(r.id, raw)), {
    onError: (e) => {
      throw new Error(`${e.message}: the output file is corrupt; remove it to start over`);
    },
  });
  return done;
}

/** Runs retrieval + reading over `input` (KILT JSONL) and appends predictions to `out`. */
export async function runPipeline(
  input: string,
  out: string,
  retriever: Retriever | null,
  reader: Reader,
  options: RunOptions,
): Promise<RunStats> {
  const text: TextMode = options.text ?? (options.withText === false ? "none" : "full");
  const readerK = options.readerK ?? options.topK;
  const flushEvery = options.flushEvery ?? 64;
  const done = await resumeOutput(out, input);
  const fd = openSync(out, "a");
  const stats: RunStats = { records: 0, written: 0, resumed: 0, failed: [] };
  let sinceFlush = 0;
  let index = -1;
  try {
    for await (const { value: record, line } of readJsonl<KiltRecord>(input)) {
      index++;
      if (options.shard && index % options.shard.count !== options.shard.index) continue;
      stats.records++;
      const id = pythonIdKey(record.id);
      if (done.has(id)) {
        stats.resumed++;
        continue;
      }
      try {
        let passages: ReaderPassage[] = [];
        let retrieved: Provenance[] = [];
        if (retriever) {
          const hits = await retriever.search(queryOf(record, readsEntityMarkers(retriever)), options.topK);
          const units = hits.map((h) => retriever.units.get(h.unit));
          retrieved = units.map((u, i) => unitProvenance(u, hits[i].score, text !== "none"));
          passages = units
            .slice(0, readerK)
            .map((u, i) => ({ text: u.text, provenance: retrieved[i], score: hits[i].score }));
        }
        const answer = await reader.read(record, passages);
        let provenance = mergeProvenance(answer.provenance, retrieved, options.topK);
        if (text === "cited") {
          const cited = new Set(answer.provenance.map(provKey));
          provenance = provenance.map((p) => (p.text === undefined || cited.has(provKey(p)) ? p : withoutText(p)));
        }
        const output: KiltRecord["output"][number] = { answer: answer.answer, provenance };
        if (answer.meta) output.meta = answer.meta;
        writeSync(fd, `${JSON.stringify({ id: record.id, input: record.input, output: [output] })}\n`);
        if (stats.written === 0 && done.size === 0) markRunOutput(out, input); // the mark now holds the first line
        stats.written++;
        if (++sinceFlush >= flushEvery) {
          fsyncSync(fd);
          sinceFlush = 0;
        }
      } catch (err) {
        stats.failed.push({ line, id, error: err instanceof Error ? err.message : String(err) });
      }
      options.onProgress?.(stats.written, stats.resumed);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return stats;
}
