// The end-to-end job: for each input record, retrieve passages, read an answer, and write a KILT
// prediction whose provenance is the evidence the reader used followed by the rest of the retrieved
// ranking. Output is appended record by record, so an interrupted run resumes where it stopped
// (records already written are skipped, a torn last line is cut off). A run can be one shard of
// several (records i with i % count === index), which is how the CLI uses both cores.

import { closeSync, existsSync, fsyncSync, openSync, readSync, statSync, truncateSync, writeSync } from "node:fs";
import { readJsonl, scanJsonl } from "../records/jsonl.js";
import { pythonIdKey } from "../records/python-str.js";
import type { KiltRecord, Provenance } from "../records/types.js";
import type { Reader, ReaderPassage } from "../readers/types.js";
import type { Retriever } from "../retrieval/types.js";
import { unitProvenance } from "../retrieval/units.js";

export interface RunOptions {
  /** Passages retrieved per record (and the length of the written provenance list). */
  topK: number;
  /** Passages handed to the reader (the best `readerK` of the `topK`). Default: all. */
  readerK?: number;
  /** Keep passage texts in the written provenance (needed for answer_in_context@k). Default true. */
  withText?: boolean;
  shard?: { index: number; count: number };
  /** Records written per fsync. Default 64. */
  flushEvery?: number;
  onProgress?: (done: number, skipped: number) => void;
}

export interface RunStats {
  records: number;
  written: number;
  /** Already in the output from an earlier, interrupted run. */
  resumed: number;
  failed: { line: number; id: string; error: string }[];
}

const ENT_MARKERS = /\[(?:START|END)_ENT\]/g;

/** The query a text retriever sees: the input without KILT's entity markers. */
export function queryOf(record: KiltRecord, keepEntityMarkers = false): string {
  const input = typeof record.input === "string" ? record.input : "";
  return keepEntityMarkers ? input : input.replace(ENT_MARKERS, " ").replace(/\s+/g, " ").trim();
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

/**
 * Makes `out` safe to append to: cuts a torn last line (a crash mid-write) and returns the ids already
 * written, so they are skipped.
 */
export async function resumeOutput(out: string): Promise<Set<string>> {
  const done = new Set<string>();
  if (!existsSync(out)) return done;
  const size = statSync(out).size;
  if (size > 0) {
    const fd = openSync(out, "r");
    const tail = Buffer.alloc(Math.min(size, 1 << 20));
    readSync(fd, tail, 0, tail.length, size - tail.length);
    closeSync(fd);
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
  const withText = options.withText ?? true;
  const readerK = options.readerK ?? options.topK;
  const flushEvery = options.flushEvery ?? 64;
  const done = await resumeOutput(out);
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
          const hits = await retriever.search(queryOf(record, retriever.kind === "entity"), options.topK);
          const units = hits.map((h) => retriever.units.get(h.unit));
          retrieved = units.map((u, i) => unitProvenance(u, hits[i].score, withText));
          passages = units
            .slice(0, readerK)
            .map((u, i) => ({ text: u.text, provenance: retrieved[i], score: hits[i].score }));
        }
        const answer = await reader.read(record, passages);
        const provenance = mergeProvenance(answer.provenance, retrieved, options.topK);
        const output: KiltRecord["output"][number] = { answer: answer.answer, provenance };
        if (answer.meta) output.meta = answer.meta;
        writeSync(fd, `${JSON.stringify({ id: record.id, input: record.input, output: [output] })}\n`);
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
