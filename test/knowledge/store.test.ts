// Tests for the ingest and the KnowledgeSource lookups, in-process: hand-written pages with exact
// expected results (ids, exact and case-insensitive titles, URLs, iteration, count), malformed lines
// and duplicates reported as file:line: reason, --strict, .gz input, refusing another input, and a
// synthetic file whose every page must come back unchanged.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { ingest, IngestError } from "../../src/knowledge/ingest.js";
import { KnowledgeSource, readStoreInfo, StoreError } from "../../src/knowledge/store.js";
import { syntheticPages, writeSyntheticKnowledgeSource } from "../../src/knowledge/synthetic.js";
import type { LineError } from "../../src/records/jsonl.js";
import type { KiltPage } from "../../src/records/types.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-ks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EMAIL: KiltPage = {
  _id: "10",
  wikipedia_id: "10",
  wikipedia_title: "Email marketing",
  text: ["Email marketing\n", "Email marketing is the act of sending a commercial message.\n", "Section::::History.\n", "BULLET::::- Early use 😀 of email.\n"],
  anchors: [{ text: "commercial message", href: "Commercial%20message", paragraph_id: 1, start: 41, end: 59 }],
  categories: "Marketing,Email",
  history: { revid: 907008348, pageid: 10, url: "https://en.wikipedia.org/w/index.php?title=Email_marketing&oldid=907008348" },
};
const RED_DWARF_SHOW = { wikipedia_id: 11, wikipedia_title: "Red Dwarf", text: ["Red Dwarf\n", "A British sitcom.\n"] };
const RED_DWARF_STAR: KiltPage = { wikipedia_id: "12", wikipedia_title: "Red dwarf", text: ["Red dwarf\n", "A small star.\n"] };
const AERO: KiltPage = { wikipedia_id: "13", wikipedia_title: "Ærø", text: ["Ærø\n", "A Danish island.\n"] };
const ATT: KiltPage = { wikipedia_id: "14", wikipedia_title: "AT&T", text: ["AT&T\n", "A telecom company.\n"] };

/** Lines of the hand-written file, numbered from 1; the comments give each line's fate. */
const LINES = [
  JSON.stringify(EMAIL), // 1 ok
  JSON.stringify(RED_DWARF_SHOW), // 2 ok (numeric id)
  '{"wikipedia_id": "20", "wikipedia_title": "Broken", "text": ["x"', // 3 invalid JSON
  "", // 4 blank: not a problem
  JSON.stringify(RED_DWARF_STAR) + "\r", // 5 ok (CRLF)
  "[1, 2]", // 6 not an object
  JSON.stringify({ wikipedia_id: "21", text: ["No title\n"] }), // 7 no title
  JSON.stringify({ wikipedia_id: "22", wikipedia_title: "T", text: "not a list" }), // 8 text not a list
  JSON.stringify({ wikipedia_id: "23", wikipedia_title: "T", text: ["a", 5] }), // 9 text[1] not a string
  JSON.stringify({ _id: "24", wikipedia_id: "25", wikipedia_title: "T", text: [] }), // 10 _id differs
  JSON.stringify({ ...EMAIL, wikipedia_title: "Email marketing (copy)" }), // 11 duplicate id 10
  JSON.stringify({ wikipedia_id: 2.5, wikipedia_title: "T", text: [] }), // 12 id not an integer
  JSON.stringify(AERO), // 13 ok
  JSON.stringify(ATT), // 14 ok, no final newline
];
const EXPECTED_PROBLEMS = (file: string) => [
  new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: invalid JSON \\(`),
  `${file}:6: expected a JSON object, found an array`,
  `${file}:7: missing field "wikipedia_title"`,
  `${file}:8: field "text" must be a list of strings, found string`,
  `${file}:9: field "text[1]" must be a string, found number`,
  `${file}:10: field "_id" ("24") differs from "wikipedia_id" ("25")`,
  `${file}:11: duplicate wikipedia_id "10" (first at line 1); skipped`,
  `${file}:12: field "wikipedia_id" must be a string or an integer, found number`,
];

function writeHandFile(name: string): string {
  const file = join(dir, name);
  writeFileSync(file, LINES.join("\n"));
  return file;
}

function expectProblems(problems: string[], file: string): void {
  const expected = EXPECTED_PROBLEMS(file);
  expect(problems).toHaveLength(expected.length);
  expected.forEach((e, i) => (typeof e === "string" ? expect(problems[i]).toBe(e) : expect(problems[i]).toMatch(e)));
}

describe("ingest + KnowledgeSource on hand-written pages", () => {
  let file: string;
  let out: string;
  let ks: KnowledgeSource;
  const problems: string[] = [];

  beforeAll(async () => {
    file = writeHandFile("hand.jsonl");
    out = join(dir, "hand.ks");
    const r = await ingest(file, { out, workers: 0, onProblem: (e: LineError) => problems.push(e.message) });
    expect({ pages: r.pages, badLines: r.badLines, duplicates: r.duplicates, resumedAt: r.resumedAt, alreadyComplete: r.alreadyComplete }).toEqual({
      pages: 5,
      badLines: 7,
      duplicates: 1,
      resumedAt: null,
      alreadyComplete: false,
    });
    ks = KnowledgeSource.open(out);
  });
  afterAll(() => ks?.close());

  it("reports each malformed line and duplicate as file:line: reason", () => {
    expectProblems(problems, file);
  });

  it("finds pages by id, as stored, with numeric ids as strings", () => {
    expect(ks.getPageById("10")).toEqual(EMAIL);
    expect(ks.getPageById(10)).toEqual(EMAIL);
    expect(ks.getPageById("11")).toEqual({ ...RED_DWARF_SHOW, wikipedia_id: "11" });
    expect(ks.getPageById("25")).toBeNull();
    expect(ks.getPageById("1")).toBeNull();
  });

  it("keeps the first page of a duplicated id", () => {
    expect(ks.getPageById("10")?.wikipedia_title).toBe("Email marketing");
    expect(ks.getPageByTitle("Email marketing (copy)")).toBeNull();
  });

  it("finds titles exactly first, then ignoring case (first in input order)", () => {
    expect(ks.getPageByTitle("Red Dwarf")?.wikipedia_id).toBe("11");
    expect(ks.getPageByTitle("Red dwarf")?.wikipedia_id).toBe("12");
    expect(ks.getPageByTitle("RED DWARF")?.wikipedia_id).toBe("11");
    expect(ks.getPageByTitle("ærø")?.wikipedia_id).toBe("13");
    expect(ks.getPageByTitle("Red")).toBeNull();
  });

  it("finds pages from URLs by KILT's rules, then the decoded path", () => {
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/Email_marketing")?.wikipedia_id).toBe("10");
    expect(ks.getPageFromUrl("https://en.wikipedia.org/w/index.php?title=Red_dwarf&oldid=1")?.wikipedia_id).toBe("12");
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/AT%26T")?.wikipedia_id).toBe("14");
    // "red dwarf" matches nothing exactly; the display form "Red dwarf" does, before any case-insensitive match.
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/red_dwarf")?.wikipedia_id).toBe("12");
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/Email_marketing#History")?.wikipedia_id).toBe("10");
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/RED_DWARF")?.wikipedia_id).toBe("11");
    expect(ks.getPageFromUrl("https://en.wikipedia.org/wiki/Nothing_here")).toBeNull();
  });

  it("counts and iterates the pages in input order", () => {
    expect(ks.count()).toBe(5);
    expect([...ks.pages(2)].map((p) => p.wikipedia_id)).toEqual(["10", "11", "12", "13", "14"]);
    expect([...ks].length).toBe(5);
  });

  it("looks ids and titles up through indexes, never a scan", () => {
    for (const kind of ["id", "title", "title_lower"] as const) {
      const plan = ks.explain(kind).join(" | ");
      expect(plan).toMatch(/USING (COVERING )?INDEX/);
      expect(plan).not.toMatch(/SCAN/);
    }
  });

  it("does nothing when run again on the same input", async () => {
    const again = await ingest(file, { out, workers: 0 });
    expect(again.alreadyComplete).toBe(true);
    expect(again.pages).toBe(5);
  });

  it("refuses another input, or a changed one, unless forced", async () => {
    const other = join(dir, "other.jsonl");
    writeFileSync(other, `${JSON.stringify(AERO)}\n`);
    await expect(ingest(other, { out, workers: 0 })).rejects.toThrow(/holds an ingest of .*hand\.jsonl.*refusing to continue it with .*other\.jsonl.*--force/);
    const changed = writeHandFile("changed.jsonl");
    const changedOut = join(dir, "changed.ks");
    await ingest(changed, { out: changedOut, workers: 0 });
    appendFileSync(changed, `\n${JSON.stringify({ wikipedia_id: "99", wikipedia_title: "New", text: [] })}`);
    await expect(ingest(changed, { out: changedOut, workers: 0 })).rejects.toThrow(/changed since the ingest in .* began .*--force/);
    const forced = await ingest(changed, { out: changedOut, workers: 0, force: true });
    expect(forced.pages).toBe(6);
    expect(forced.resumedAt).toBeNull();
  });
});

describe("--strict", () => {
  it("stops at the first problem, keeps the lines before it, and a normal run resumes there", async () => {
    const file = writeHandFile("strict.jsonl");
    const out = join(dir, "strict.ks");
    await expect(ingest(file, { out, workers: 0, strict: true })).rejects.toThrow(
      new RegExp(`^${file.replace(/[.]/g, "\\.")}:3: invalid JSON .*\\(--strict: stopped; the 2 pages before it are stored\\)$`),
    );
    const info = readStoreInfo(out);
    expect({ pages: info.pages, line: info.checkpoint_line, complete: info.complete }).toEqual({ pages: 2, line: 2, complete: 0 });
    expect(() => KnowledgeSource.open(out)).toThrow(StoreError);
    expect(() => KnowledgeSource.open(out)).toThrow(/not complete \(stopped after line 2\); re-run `tartan ks ingest` to resume it/);

    const problems: string[] = [];
    const r = await ingest(file, { out, workers: 0, onProblem: (e) => problems.push(e.message) });
    expect(r.resumedAt).toEqual({ line: 2, byte: Buffer.byteLength(`${LINES[0]}\n${LINES[1]}\n`) });
    expect({ pages: r.pages, badLines: r.badLines, duplicates: r.duplicates }).toEqual({ pages: 5, badLines: 7, duplicates: 1 });
    expectProblems(problems, file);
    const ks = KnowledgeSource.open(out);
    expect([...ks.pages()].map((p) => p.wikipedia_id)).toEqual(["10", "11", "12", "13", "14"]);
    ks.close();
  });

  it("also stops at a duplicate id", async () => {
    const file = join(dir, "dup.jsonl");
    writeFileSync(file, `${JSON.stringify(AERO)}\n${JSON.stringify(ATT)}\n${JSON.stringify(AERO)}\n`);
    await expect(ingest(file, { out: join(dir, "dup.ks"), workers: 0, strict: true })).rejects.toThrow(
      `${file}:3: duplicate wikipedia_id "13" (first at line 1); skipped (--strict: stopped; the 2 pages before it are stored)`,
    );
  });
});

describe(".gz input", () => {
  it("reads compressed input and resumes it by skipping the committed lines", async () => {
    const file = join(dir, "hand.jsonl.gz");
    writeFileSync(file, gzipSync(LINES.join("\n")));
    const out = join(dir, "gz.ks");
    await expect(ingest(file, { out, workers: 0, strict: true })).rejects.toThrow(/:3: invalid JSON/);
    const problems: string[] = [];
    const r = await ingest(file, { out, workers: 0, onProblem: (e) => problems.push(e.message) });
    expect(r.resumedAt?.line).toBe(2);
    expectProblems(problems, file);
    const ks = KnowledgeSource.open(out);
    expect(ks.count()).toBe(5);
    expect(ks.getPageById("10")).toEqual(EMAIL);
    ks.close();
  });
});

describe("a synthetic knowledge source", () => {
  it("stores every page unchanged, findable by id and title, in less space than the input", async () => {
    const file = join(dir, "synthetic.jsonl");
    await writeSyntheticKnowledgeSource(file, { pages: 2000, seed: 7 });
    const out = join(dir, "synthetic.ks");
    // Small commits: the run crosses many checkpoints.
    const r = await ingest(file, { out, workers: 0, commitBytes: 1 << 20, chunkSize: 1 << 18 });
    expect({ pages: r.pages, badLines: r.badLines, duplicates: r.duplicates }).toEqual({ pages: 2000, badLines: 0, duplicates: 0 });
    expect(r.storeBytes).toBeLessThan(statSync(file).size);
    const ks = KnowledgeSource.open(out);
    const input = readFileSync(file, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as KiltPage);
    expect(input).toHaveLength(2000);
    let i = 0;
    for (const page of ks.pages()) expect(page).toEqual(input[i++]);
    expect(i).toBe(2000);
    for (const page of input.filter((_, k) => k % 97 === 0)) {
      expect(ks.getPageById(page.wikipedia_id)).toEqual(page);
      expect(ks.getPageByTitle(page.wikipedia_title)?.wikipedia_id).toBe(page.wikipedia_id);
    }
    ks.close();
  });

  it("is deterministic and shaped like KILT pages", () => {
    const a = [...syntheticPages({ pages: 300, seed: 5 })];
    const b = [...syntheticPages({ pages: 300, seed: 5 })];
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify([...syntheticPages({ pages: 300, seed: 6 })])).not.toBe(JSON.stringify(a));
    expect(new Set(a.map((p) => p.wikipedia_title)).size).toBe(300);
    for (const p of a) {
      expect(p._id).toBe(p.wikipedia_id);
      expect(p.text[0]).toBe(`${p.wikipedia_title}\n`);
      // Anchors point at their text, in code points.
      for (const an of p.anchors ?? []) expect([...p.text[an.paragraph_id]].slice(an.start, an.end).join("")).toBe(an.text);
    }
    expect(a.some((p) => p.text.some((t) => t.startsWith("Section::::")))).toBe(true);
    expect(a.some((p) => p.text.some((t) => t.startsWith("BULLET::::- ")))).toBe(true);
    expect(a.some((p) => p.text.some((t) => /[\u{10000}-\u{10FFFF}]/u.test(t)))).toBe(true);
  });
});

describe("opening a store", () => {
  it("explains a missing store", () => {
    expect(() => KnowledgeSource.open(join(dir, "nowhere"))).toThrow(/no knowledge-source store here .*tartan ks ingest/);
  });

  it("refuses a missing input file", async () => {
    await expect(ingest(join(dir, "missing.jsonl"), { out: join(dir, "m.ks") })).rejects.toThrow(new IngestError(`${join(dir, "missing.jsonl")}: no such file`));
  });
});
