// TREC qrels and run files, read as trec_eval 10.0 reads them: qrels lines `qid iter docno rel`
// (iter ignored, `#` at the start of a line a comment), run lines `qid Q0 docno rank score tag` (Q0
// and rank ignored; the ranking comes from the score, ties broken by docno). Errors name the file,
// line and field instead of trec_eval's bare "Malformed line".

import { readFileSync } from "node:fs";

/** One relevance judgment of a qrels file. */
export interface Judgment {
  docno: string;
  rel: number;
}

/** Judgments per query, queries in trec_eval's order (byte order of the qid). */
export type Qrels = Map<string, Judgment[]>;

/** One retrieved document of a TREC run. */
export interface RunEntry {
  docno: string;
  score: number;
  /** The rank column as written (not used for scoring). */
  rank: number;
}

/** A TREC run file: its tag and the ranked documents per query. */
export interface TrecRun {
  /** The run tag of the first line (trec_eval's `runid`). */
  tag: string;
  queries: Map<string, RunEntry[]>;
}

/** strcmp: byte order of the UTF-8 encodings (code-unit order agrees for ASCII, checked first). */
export function compareBytes(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0x80 && y < 0x80) return x - y;
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  }
  return a.length - b.length;
}

function lines(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const out = text.split("\n");
  if (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
}

/** C's atof on a field: the longest numeric prefix (0 when none). */
function atof(s: string): number {
  const m = /^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)/iu.exec(s);
  if (!m) return 0;
  const t = m[0].toLowerCase();
  if (t.endsWith("inf") || t.endsWith("infinity")) return t.startsWith("-") ? -Infinity : Infinity;
  return Number(t);
}

/** C's atol: the longest integer prefix. */
function atol(s: string): number {
  const m = /^[+-]?\d+/u.exec(s);
  return m ? Number(m[0]) : 0;
}

function sortedMap<T>(m: Map<string, T>): Map<string, T> {
  return new Map([...m.entries()].sort((a, b) => compareBytes(a[0], b[0])));
}

/** Reads a qrels file. */
export function readQrels(path: string): Qrels {
  const out = new Map<string, Judgment[]>();
  lines(path).forEach((line, i) => {
    if (line.startsWith("#")) return;
    const f = line.trim().split(/\s+/u);
    if (f.length === 1 && f[0] === "") throw new Error(`${path}:${i + 1}: empty line (a qrels line is "qid iter docno rel")`);
    if (f.length !== 4) throw new Error(`${path}:${i + 1}: ${f.length} fields, a qrels line has 4 (qid iter docno rel)`);
    const rel = atol(f[3]);
    if (!/^[+-]?\d/u.test(f[3])) throw new Error(`${path}:${i + 1}: relevance "${f[3]}" is not an integer`);
    let list = out.get(f[0]);
    if (!list) out.set(f[0], (list = []));
    list.push({ docno: f[2], rel });
  });
  if (out.size === 0) throw new Error(`${path}: no judgments`);
  for (const list of out.values()) list.sort((a, b) => compareBytes(a.docno, b.docno));
  return sortedMap(out);
}

/** Reads a TREC run file. */
export function readRun(path: string): TrecRun {
  const queries = new Map<string, RunEntry[]>();
  let tag: string | undefined;
  lines(path).forEach((line, i) => {
    const f = line.trim().split(/\s+/u);
    if (f.length !== 6) throw new Error(`${path}:${i + 1}: ${f.length} fields, a run line has 6 (qid Q0 docno rank score tag)`);
    tag ??= f[5];
    let list = queries.get(f[0]);
    if (!list) queries.set(f[0], (list = []));
    list.push({ docno: f[2], rank: atol(f[3]), score: atof(f[4]) });
  });
  if (queries.size === 0) throw new Error(`${path}: an empty run (trec_eval stops with "Cannot read results file")`);
  return { tag: tag!, queries: sortedMap(queries) };
}

/** One query's documents in trec_eval's order: score descending, ties by docno descending (byte order). */
export function rankEntries(entries: readonly RunEntry[]): RunEntry[] {
  return entries.slice().sort((a, b) => (a.score > b.score ? -1 : a.score < b.score ? 1 : compareBytes(b.docno, a.docno)));
}
