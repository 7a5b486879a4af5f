// Shared by the live-index tests: SQuAD dev's 48 pages (KILT pages, passage units), its questions as
// queries, pages files for updates, fresh builds of a list of pages, and hits as (unit provenance, score).

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSquadFile, squadToPages } from "../../../../src/knowledge/squad.js";
import type { KiltPage } from "../../../../src/records/types.js";
import { buildIndex } from "../../../../src/retrieval/build.js";
import type { Retriever } from "../../../../src/retrieval/types.js";

const SQUAD = new URL("../../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;

export const tmp = (): string => mkdtempSync(join(tmpdir(), "tartan-live-"));

/** SQuAD dev's pages and its first questions. */
export function squad(questions = 40): { pages: KiltPage[]; queries: string[] } {
  const file = readSquadFile(SQUAD);
  const pages = squadToPages(file);
  const queries: string[] = [];
  for (const a of file.data) for (const p of a.paragraphs) for (const q of p.qas) if (queries.length < questions) queries.push(q.question);
  return { pages, queries };
}

/** Writes pages as a pages JSONL file. */
export function pagesFile(dir: string, name: string, pages: readonly KiltPage[]): string {
  const path = join(dir, name);
  writeFileSync(path, pages.map((p) => `${JSON.stringify(p)}\n`).join(""));
  return path;
}

/** Writes ids, one a line. */
export function idsFile(dir: string, name: string, ids: readonly string[]): string {
  const path = join(dir, name);
  writeFileSync(path, ids.map((i) => `${i}\n`).join(""));
  return path;
}

/** A fresh BM25 passage index of `pages` in that order. */
export async function freshBuild(dir: string, pages: readonly KiltPage[]): Promise<string> {
  const out = join(dir, `fresh-${Math.random().toString(36).slice(2)}`);
  await buildIndex({ pages: pagesFile(dir, `${out.split("/").pop()}.jsonl`, pages), kind: "bm25", unit: "passage", out, threads: 1 }, () => {});
  return out;
}

/** A page changed (its paragraphs after the title reversed and the last dropped): same id, other text. */
export function edited(p: KiltPage, n: number): KiltPage {
  const body = p.text.slice(1).reverse();
  return { ...p, text: [p.text[0], ...body.slice(0, Math.max(1, body.length - 1 - (n % 3)))] };
}

/** Hits as `page/paragraph/start-end score`, comparable across indexes. */
export async function ranked(r: Retriever, queries: readonly string[], k: number): Promise<string[][]> {
  const out: string[][] = [];
  for (const q of queries) {
    const hits = await r.search(q, k);
    out.push(
      hits.map((h) => {
        const u = r.units.get(h.unit);
        return `${u.wikipedia_id}/${u.start_paragraph_id}:${u.start_character}-${u.end_paragraph_id}:${u.end_character} ${h.score}`;
      }),
    );
  }
  return out;
}
