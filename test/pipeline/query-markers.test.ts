// One rule for KILT's entity markers: `queryOf` (what `tartan run` searches with) removes them as the
// retriever does, by KILT's rule (src/retrieval/markers.ts), not by its old rule of its own (markers to
// spaces, whitespace runs collapsed, trimmed). Checked on every real record at hand (the KILT samples, the
// complete HotpotQA and Wizard of Wikipedia dev files, the evaluator fixtures' gold): the query strings
// differ only in whitespace, every analyzer and tokenizer a retriever uses reads the same tokens from both,
// and BM25 and TF-IDF over the SQuAD paragraphs return the same hits with the same scores.

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../src/knowledge/build.js";
import { queryOf } from "../../src/pipeline/run.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { englishAnalyzer, lowercaseAnalyzer } from "../../src/retrieval/bm25/analyzer.js";
import { buildIndex } from "../../src/retrieval/build.js";
import { useLiteText } from "../../src/retrieval/dense/use-lite.js";
import { WordPieceTokenizer } from "../../src/retrieval/dense/wordpiece.js";
import { ENT_END, ENT_START, stripEntityMarkers } from "../../src/retrieval/markers.js";
import { openIndex } from "../../src/retrieval/open.js";
import { drqaTokens } from "../../src/retrieval/tfidf/tokenize.js";

const SHARED = new URL("../../../shared/", import.meta.url).pathname;
const SQUAD = join(SHARED, "data/squad/dev-v1.1.reconstructed.json");

/** The rule `queryOf` had of its own until it used KILT's: markers to spaces, whitespace runs to one space, trimmed. */
function legacyQuery(input: string): string {
  return input.replace(/\[(?:START|END)_ENT\]/g, " ").replace(/\s+/g, " ").trim();
}

/** Every real KILT record file here: the samples, the two complete dev files, the evaluator fixtures' gold. */
function recordFiles(): string[] {
  const inDir = (dir: string) => readdirSync(join(SHARED, dir)).filter((f) => f.endsWith(".jsonl")).map((f) => join(SHARED, dir, f));
  const gold = readdirSync(join(SHARED, "fixtures/eval"), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => join(SHARED, "fixtures/eval", d.name, "gold.jsonl"));
  return [...inDir("data/kilt-samples"), ...inDir("data/kilt-dev"), ...gold];
}

const tmp = mkdtempSync(join(tmpdir(), "tartan-query-markers-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A record with its input. */
type Rec = KiltRecord & { input: string };
const records: Rec[] = [];
/** The records whose query string the change of rule changes. */
let changed: Rec[] = [];

beforeAll(async () => {
  for (const f of recordFiles()) {
    try {
      records.push(...(await readJsonlAll<KiltRecord>(f)).filter((r): r is Rec => typeof r.input === "string"));
    } catch {
      // a fixture gold that is not JSONL on purpose (the evaluator's error cases)
    }
  }
  changed = records.filter((r) => queryOf(r) !== legacyQuery(r.input));
});

describe("queryOf on real records", () => {
  it("removes the markers by KILT's rule, as the retriever does, and keeps them for the entity retriever", () => {
    expect(records.length).toBe(15223);
    const marked = records.filter((r) => r.input.includes(ENT_START));
    expect(marked.length).toBe(20);
    for (const r of records) {
      expect(queryOf(r)).toBe(stripEntityMarkers(r.input));
      expect(stripEntityMarkers(queryOf(r))).toBe(queryOf(r)); // the retriever's second pass changes nothing
      expect(queryOf(r, true)).toBe(r.input);
    }
    for (const r of marked) expect(queryOf(r)).not.toMatch(/_ENT\]/);
  });

  it("differs from the old rule only in whitespace: the markers' surrounding spaces, runs of spaces, newlines", () => {
    // 3,833 of the 15,223: WNED's 10 marked samples, 15 of WoW's samples, 178 HotpotQA and 2,673 WoW dev
    // records, 962 records of the evaluator fixtures' gold (many copies of the same dev records)
    expect(changed.length).toBe(3833);
    for (const r of records) expect(queryOf(r).replace(/\s+/g, " ")).toBe(legacyQuery(r.input));
    // an example of each: a marked mention (WNED), a double space (HotpotQA), a dialogue's newlines (WoW)
    const byId = (id: string) => changed.find((r) => String(r.id) === id)!;
    expect(queryOf(byId("38c2828e-0895-4c65-b996-e5cd87bf43bd_Bob_Coverdal:4"))).toContain("at club level for  Hull  , Wa");
    expect(queryOf(byId("5a77bdcb5542997042120b0b"))).toBe("Who was born first,  Morgan Llywelyn or Robert Jordan?");
    expect(queryOf(byId("54ba0872-99cd-11ea-aa09-57c1ffc5a65b_2"))).toContain("number 7.\nme too");
  });

  it("gives every analyzer and tokenizer a retriever uses the same tokens as the old rule did", () => {
    const vocab = new Map(["[PAD]", "[UNK]", "[CLS]", "[SEP]"].map((t, i) => [t, i]));
    const wordpiece = new WordPieceTokenizer(vocab);
    for (const r of changed) {
      const [now, old] = [queryOf(r), legacyQuery(r.input)];
      expect(englishAnalyzer.analyze(now)).toEqual(englishAnalyzer.analyze(old)); // BM25
      expect(lowercaseAnalyzer.analyze(now)).toEqual(lowercaseAnalyzer.analyze(old));
      expect(drqaTokens(now)).toEqual(drqaTokens(old)); // TF-IDF
      expect(wordpiece.basicTokens(now)).toEqual(wordpiece.basicTokens(old)); // BERT/DPR encoders
      expect(useLiteText(now)).toBe(useLiteText(old)); // Universal Sentence Encoder lite
    }
  });

  it("finds the same hits with the same scores with BM25 and TF-IDF over the SQuAD paragraphs", async () => {
    const quiet = () => {};
    await fromSquad(SQUAD, join(tmp, "pages.jsonl"), quiet);
    for (const kind of ["bm25", "tfidf"] as const) {
      const out = join(tmp, kind);
      await buildIndex({ pages: join(tmp, "pages.jsonl"), kind, unit: "paragraph", out }, quiet);
      const retriever = await openIndex(out);
      try {
        for (const r of changed) expect(await retriever.search(queryOf(r), 10)).toEqual(await retriever.search(legacyQuery(r.input), 10));
      } finally {
        await retriever.close();
      }
    }
  }, 240_000);
});

// The markers themselves: KILT removes every occurrence, end markers first, and strips the ends.
describe("stripEntityMarkers", () => {
  it("is KILT's rule", () => {
    expect(stripEntityMarkers(`  a ${ENT_START} b ${ENT_END} c ${ENT_START}d${ENT_END}\n`)).toBe("a  b  c d");
  });
});
