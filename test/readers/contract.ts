// The contract every reader kind keeps, declared once and run on each registered reader
// (./contract.test.ts walks READERS, ./cases.ts says how each one is set up): opened through its
// descriptor, it answers real records with the KILT output shape (`tartan validate` accepts the guesses),
// cites only passages it was given, answers the same twice, batches as it reads one by one, and cites
// nothing without passages.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openReader } from "../../src/readers/open.js";
import { answerRecord, type Reader, type ReaderAnswer, type ReaderPassage } from "../../src/readers/types.js";
import type { KiltRecord } from "../../src/records/types.js";
import { validateFile } from "../../src/records/validate.js";

/** One reader's contract case: how it is opened and the real records it answers. */
export interface ReaderCase {
  /** What `openReader` is given (model files, endpoints). */
  options: Parameters<typeof openReader>[1];
  /** Records with their passages, and the answer an existing test records for each (undefined: not asserted). */
  items: { record: KiltRecord; passages: readonly ReaderPassage[]; answer?: string }[];
  /** What no passages give: an empty answer (span readers), or any answer as long as it cites nothing. */
  emptyAnswer?: string;
  /** Stops what the case started (a server). */
  close?: () => Promise<void>;
}

/** The provenance keys of a passage, as a reader copies them (page id, title, paragraph span). */
const key = (p: { wikipedia_id?: unknown; start_paragraph_id?: unknown; end_paragraph_id?: unknown }) =>
  JSON.stringify([p.wikipedia_id, p.start_paragraph_id ?? null, p.end_paragraph_id ?? null]);

/** Declares the reader contract for the reader called `name`, set up by `setup`. */
export function readerContract(name: string, setup: () => Promise<ReaderCase>): void {
  let c: ReaderCase;
  let reader: Reader;
  const answers: ReaderAnswer[] = [];

  beforeAll(async () => {
    c = await setup();
    reader = await openReader(name, c.options);
    for (const { record, passages } of c.items) answers.push(await reader.read(record, passages));
  }, 120_000);
  afterAll(async () => {
    await reader?.close?.();
    await c?.close?.();
  });

  it("answers real records: the answers existing tests record, a string answer and a provenance list", () => {
    expect(c.items.length).toBeGreaterThanOrEqual(2);
    answers.forEach((a, i) => {
      expect(typeof a.answer).toBe("string");
      expect(Array.isArray(a.provenance)).toBe(true);
      if (c.items[i].answer !== undefined) expect(a.answer).toBe(c.items[i].answer);
    });
    expect(answers.some((a) => a.answer.trim() !== "")).toBe(true);
  });

  it("cites only the passages it was given, with their page ids and titles", () => {
    answers.forEach((a, i) => {
      const given = c.items[i].passages;
      const pages = new Map(given.map((p) => [p.provenance.wikipedia_id, p.provenance.title]));
      const spans = new Set(given.map((p) => key(p.provenance)));
      for (const p of a.provenance) {
        expect(pages.has(p.wikipedia_id)).toBe(true);
        if (p.title !== undefined) expect(p.title).toBe(pages.get(p.wikipedia_id));
        if (p.start_paragraph_id !== undefined) expect(spans.has(key(p))).toBe(true);
      }
    });
  });

  it("writes guesses in the KILT output shape that tartan validate accepts", async () => {
    const guesses = c.items.map(({ record }, i) => answerRecord(record, answers[i]));
    guesses.forEach((g, i) => {
      expect(g.id).toBe(c.items[i].record.id);
      expect(g.input).toBe(c.items[i].record.input);
      expect(g.output).toHaveLength(1);
      expect(g.output[0].answer).toBe(answers[i].answer);
      expect(g.output[0].provenance).toEqual(answers[i].provenance);
    });
    const file = join(mkdtempSync(join(tmpdir(), `tartan-reader-${name}-`)), "guess.jsonl");
    writeFileSync(file, guesses.map((g) => JSON.stringify(g)).join("\n") + "\n");
    const report = await validateFile(file, { kind: "task" });
    expect(report.problems).toEqual([]);
    expect([report.valid, report.records]).toEqual([true, guesses.length]);
  });

  it("answers the same twice, and batches as it reads one by one", async () => {
    const again = [];
    for (const { record, passages } of c.items) again.push(await reader.read(record, passages));
    expect(strip(again)).toEqual(strip(answers));
    if (reader.readBatch) expect(strip(await reader.readBatch(c.items))).toEqual(strip(answers));
  });

  it("cites nothing without passages", async () => {
    const a = await reader.read(c.items[0].record, []);
    expect(a.provenance).toEqual([]);
    if (c.emptyAnswer !== undefined) expect(a.answer).toBe(c.emptyAnswer);
  });
}

/** Answers without what varies between calls of a remote model (token usage). */
function strip(answers: ReaderAnswer[]): unknown[] {
  return answers.map((a) => ({ ...a, meta: a.meta === undefined ? undefined : { ...a.meta, usage: undefined } }));
}
