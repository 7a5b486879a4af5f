// Units of a dense index from precomputed vectors: what row i of the vectors is.
//   - `idsFile`: one unit a line, `wikipedia_id` or `wikipedia_id<TAB>start_paragraph_id<TAB>end_paragraph_id`;
//   - `dprPassages`: KILT's DPR passage file (`kilt_w100_title.tsv`: a header line, then passage id, text
//     and title separated by tabs), mapped to KILT provenance through a knowledge source: the title gives
//     the page (its wikipedia_id), and the passage's words, found in the page's paragraphs from where the
//     previous passage of that page ended, give the paragraph span.
// Bad lines are refused naming the file, the line and the field.

import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { KiltPage } from "../../records/types.js";
import type { KnowledgeSourceReader } from "../../knowledge/source.js";
import type { Unit } from "../units/unit.js";

async function* lines(file: string): AsyncGenerator<{ line: string; no: number }> {
  const rl = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  let no = 0;
  for await (const line of rl) yield { line, no: ++no };
}

/** Units of an ids file (see the module comment). */
export async function* unitsFromIdsFile(file: string): AsyncGenerator<Unit> {
  for await (const { line, no } of lines(file)) {
    if (line.length === 0) throw new Error(`${file}:${no}: empty line (one unit a line: wikipedia_id, or wikipedia_id<TAB>start_paragraph_id<TAB>end_paragraph_id)`);
    const f = line.split("\t");
    if (f.length !== 1 && f.length !== 3) throw new Error(`${file}:${no}: ${f.length} fields; expected wikipedia_id, or wikipedia_id<TAB>start_paragraph_id<TAB>end_paragraph_id`);
    if (!/^\S+$/.test(f[0])) throw new Error(`${file}:${no}: wikipedia_id ${JSON.stringify(f[0])} is empty or has spaces`);
    const unit: Unit = { wikipedia_id: f[0], wikipedia_title: "", text: "" };
    if (f.length === 3) {
      const [s, e] = [Number(f[1]), Number(f[2])];
      if (!Number.isInteger(s) || s < 0 || f[1].trim() !== f[1] || f[1] === "") throw new Error(`${file}:${no}: start_paragraph_id ${JSON.stringify(f[1])} is not a paragraph number`);
      if (!Number.isInteger(e) || e < s || f[2] === "") throw new Error(`${file}:${no}: end_paragraph_id ${JSON.stringify(f[2])} is not a paragraph number at or after ${s}`);
      unit.start_paragraph_id = s;
      unit.end_paragraph_id = e;
    }
    yield unit;
  }
}

/** Words compared when placing a passage: lower-cased letters and digits, markup markers dropped. */
function words(text: string): string[] {
  return text
    .replace(/Section::::|BULLET::::-?/g, " ")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
}

/** A page's words with the paragraph each is in (paragraph 0, the title line, left out). */
interface PageWords {
  page: KiltPage;
  words: string[];
  para: Int32Array;
  /** Where the previous passage of this page ended. */
  cursor: number;
}

function pageWords(page: KiltPage): PageWords {
  const ws: string[] = [];
  const para: number[] = [];
  for (let p = 1; p < page.text.length; p++)
    for (const w of words(page.text[p])) {
      ws.push(w);
      para.push(p);
    }
  return { page, words: ws, para: Int32Array.from(para), cursor: 0 };
}

/** Where `needle` (the passage's first words) starts in `pw.words`, searching from the cursor, then from the start. */
function find(pw: PageWords, needle: string[]): number {
  const m = Math.min(needle.length, 8);
  const at = (from: number, to: number) => {
    for (let i = from; i + m <= to; i++) {
      let j = 0;
      while (j < m && pw.words[i + j] === needle[j]) j++;
      if (j === m) return i;
    }
    return -1;
  };
  if (m === 0) return -1;
  const i = at(pw.cursor, pw.words.length);
  return i >= 0 ? i : at(0, Math.min(pw.words.length, pw.cursor + m));
}

/** What mapping a DPR passage file found. */
export interface DprStats {
  passages: number;
  /** Passages whose words were not found in their page: given the whole page as provenance. */
  pageOnly: number;
}

/** Units of KILT's DPR passage file, placed in `ks` (see the module comment); `stats` is filled as it goes. */
export async function* unitsFromDprPassages(file: string, ks: KnowledgeSourceReader, stats: DprStats = { passages: 0, pageOnly: 0 }): AsyncGenerator<Unit> {
  let current: PageWords | null = null;
  for await (const { line, no } of lines(file)) {
    if (no === 1 && /^id\ttext\ttitle$/.test(line)) continue;
    const f = line.split("\t");
    if (f.length !== 3) throw new Error(`${file}:${no}: ${f.length} fields; a DPR passage line is id<TAB>text<TAB>title`);
    const [, rawText, title] = f;
    const text = rawText.startsWith('"') && rawText.endsWith('"') && rawText.length >= 2 ? rawText.slice(1, -1).replace(/""/g, '"') : rawText;
    if (title.length === 0) throw new Error(`${file}:${no}: title is empty`);
    if (!current || current.page.wikipedia_title !== title) {
      const page = await ks.getPageByTitle(title);
      if (!page) throw new Error(`${file}:${no}: title ${JSON.stringify(title)} is not in the knowledge source ${ks.location ?? ""}`.trimEnd());
      current = pageWords(page);
    }
    stats.passages++;
    const w = words(text);
    const start = find(current, w);
    const unit: Unit = { wikipedia_id: current.page.wikipedia_id, wikipedia_title: current.page.wikipedia_title, text };
    if (start < 0) stats.pageOnly++;
    else {
      const end = Math.min(current.words.length - 1, start + Math.max(0, w.length - 1));
      unit.start_paragraph_id = current.para[start];
      unit.end_paragraph_id = current.para[end];
      current.cursor = end + 1;
    }
    yield unit;
  }
}
