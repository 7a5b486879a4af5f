import { describe, expect, it } from "vitest";
import type { KiltPage } from "../../src/records/types.js";
import { cpSlice } from "../../src/knowledge/codepoints.js";
import { ABSTRACT_SECTION, cutPassages, passageProvenance, type Passage } from "../../src/knowledge/passages.js";
import { splitSentences } from "../../src/knowledge/sentences.js";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";

const SQUAD_V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;

/** The passage text rebuilt from its sources: code-point slices of the page paragraphs joined by spaces. */
function rebuilt(page: KiltPage, p: Passage): string {
  return p.sources.map((s) => cpSlice(page.text[s.paragraph_id], s.start, s.end)).join(" ");
}

const page: KiltPage = {
  wikipedia_id: "42",
  wikipedia_title: "Test page",
  text: [
    "Test page\n",
    "One two three. Four five six seven. Eight nine ten eleven twelve.\n", // 3 + 4 + 5 words
    "Short tail here.\n", // 3 words: merged into the previous chunk (5 + 3 < 10)
    "More.\n", // 1 word: 1 + (5 + 3 + 1) = 10, not < 10, so a chunk of its own
    "Section::::History.\n",
    "Tiny.\n", // new section: never merged into the previous section's chunk
    "A very long sentence with many many words that exceeds the limit by far indeed. Next.\n", // 15 + 1
    "   \n",
    "Section::::History.:Early years.\n",
    "BULLET::::- item one\n",
  ],
  anchors: [
    { text: "two", href: "Two", paragraph_id: 1, start: 4, end: 7 },
    { text: "seven. Eight", href: "Across", paragraph_id: 1, start: 29, end: 41 }, // crosses a chunk boundary
    { text: "tail", href: "Tail", paragraph_id: 2, start: 6, end: 10, wikipedia_title: "Tail", wikipedia_id: "7" },
    { text: "item", href: "Item", paragraph_id: 9, start: 12, end: 16 },
  ],
};

describe("cutPassages (chunk)", () => {
  const passages = cutPassages(page, { words: 10 });

  it("buffers sentences, merges short tails within a section and keeps oversized sentences whole", () => {
    expect(passages.map((p) => [p.id, p.section, p.text, p.words])).toEqual([
      ["42#0", ABSTRACT_SECTION, "One two three. Four five six seven.", 7],
      ["42#1", ABSTRACT_SECTION, "Eight nine ten eleven twelve. Short tail here.", 8],
      ["42#2", ABSTRACT_SECTION, "More.", 1],
      ["42#3", "Section::::History.", "Tiny.", 1],
      ["42#4", "Section::::History.", "A very long sentence with many many words that exceeds the limit by far indeed.", 15],
      ["42#5", "Section::::History.", "Next.", 1],
      ["42#6", "Section::::History.:Early years.", "BULLET::::- item one", 3],
    ]);
  });

  it("records paragraph and character spans, several sources for a merged chunk", () => {
    expect(passages[0]).toMatchObject({ start_paragraph_id: 1, start_character: 0, end_paragraph_id: 1, end_character: 35 });
    expect(passages[1]).toMatchObject({ start_paragraph_id: 1, start_character: 36, end_paragraph_id: 2, end_character: 16 });
    expect(passages[1].sources).toEqual([
      { paragraph_id: 1, start: 36, end: 65 },
      { paragraph_id: 2, start: 0, end: 16 },
    ]);
    expect(passages[6]).toMatchObject({ start_paragraph_id: 9, start_character: 0, end_paragraph_id: 9, end_character: 20 });
    for (const p of passages) expect(rebuilt(page, p)).toBe(p.text);
    expect(page.text[1].slice(passages[0].start_character, passages[0].end_character)).toBe(passages[0].text);
  });

  it("keeps anchors that lie inside a chunk, with offsets relative to the chunk text", () => {
    expect(passages[0].anchors).toEqual([{ text: "two", href: "Two", paragraph_id: 1, start: 4, end: 7 }]);
    // "Eight nine ten eleven twelve." is 29 characters: the merged piece starts at 30.
    expect(passages[1].anchors).toEqual([
      { text: "tail", href: "Tail", paragraph_id: 2, start: 36, end: 40, wikipedia_title: "Tail", wikipedia_id: "7" },
    ]);
    expect(passages[1].text.slice(36, 40)).toBe("tail");
    expect(passages[6].anchors).toEqual([{ text: "item", href: "Item", paragraph_id: 9, start: 12, end: 16 }]);
    const all = passages.flatMap((p) => p.anchors.map((a) => a.href));
    expect(all).not.toContain("Across");
  });

  it("uses the default size of 100 words: the whole test page's abstract paragraphs fit one chunk each, tails merged", () => {
    const big = cutPassages(page);
    expect(big.map((p) => p.text)).toEqual([
      "One two three. Four five six seven. Eight nine ten eleven twelve. Short tail here. More.",
      "Tiny. A very long sentence with many many words that exceeds the limit by far indeed. Next.",
      "BULLET::::- item one",
    ]);
    expect(big[0].sources.map((s) => s.paragraph_id)).toEqual([1, 2, 3]);
    expect(big[0].words).toBe(16);
  });

  it("counts offsets in code points, as KILT does", () => {
    const astral: KiltPage = {
      wikipedia_id: "9",
      wikipedia_title: "Clef",
      text: ["Clef\n", "The clef 𝄞 marks notes. The second sentence has words.\n"],
      anchors: [{ text: "notes", href: "Note", paragraph_id: 1, start: 17, end: 22 }],
    };
    const [first, second] = cutPassages(astral, { words: 6 });
    expect(first.text).toBe("The clef 𝄞 marks notes.");
    expect(first.end_character).toBe(23); // 24 UTF-16 units
    expect(second.start_character).toBe(24);
    expect(second.end_character).toBe(54);
    expect(first.anchors).toEqual([{ text: "notes", href: "Note", paragraph_id: 1, start: 17, end: 22 }]);
    expect(cpSlice(first.text, 17, 22)).toBe("notes");
    expect(first.text.slice(17, 22)).not.toBe("notes");
    expect(cpSlice(astral.text[1], second.start_character, second.end_character)).toBe(second.text);
  });

  it("gives the KILT provenance of a passage", () => {
    expect(passageProvenance(passages[1])).toEqual({
      wikipedia_id: "42",
      title: "Test page",
      section: ABSTRACT_SECTION,
      start_paragraph_id: 1,
      start_character: 36,
      end_paragraph_id: 2,
      end_character: 16,
      text: "Eight nine ten eleven twelve. Short tail here.",
    });
    expect(passageProvenance(passages[1], false).text).toBeUndefined();
  });

  it("rejects bad options and bad pages, naming the page and field", () => {
    expect(() => cutPassages(page, { words: 0 })).toThrow("positive integer");
    expect(() => cutPassages(page, { unit: "sentence" as never })).toThrow('"chunk" or "paragraph"');
    expect(() => cutPassages({ ...page, text: ["t", 5 as unknown as string] })).toThrow("page 42: text[1]: expected a string, found number");
    expect(() => cutPassages({ ...page, wikipedia_id: "" })).toThrow("wikipedia_id: missing");
  });
});

describe("cutPassages (paragraph)", () => {
  it("makes one passage per non-header, non-empty paragraph, stripped", () => {
    const ps = cutPassages(page, { unit: "paragraph" });
    expect(ps.map((p) => [p.start_paragraph_id, p.section, p.words])).toEqual([
      [1, ABSTRACT_SECTION, 12],
      [2, ABSTRACT_SECTION, 3],
      [3, ABSTRACT_SECTION, 1],
      [5, "Section::::History.", 1],
      [6, "Section::::History.", 16],
      [9, "Section::::History.:Early years.", 3],
    ]);
    for (const p of ps) {
      expect(p.text).toBe(page.text[p.start_paragraph_id].trim());
      expect(p.end_paragraph_id).toBe(p.start_paragraph_id);
    }
    expect(ps[0].anchors.map((a) => a.href)).toEqual(["Two", "Across"]);
  });
});

describe("sentence splitter", () => {
  it("does not break after abbreviations, initials or dotted forms, nor at newlines", () => {
    const t = "Mr. Smith met J. R. R. Tolkien in the U.S. on Jan. 5. He left! Was it O\n2? Yes.[3] Done.";
    expect(splitSentences(t).map((s) => t.slice(s.start, s.end))).toEqual([
      "Mr. Smith met J. R. R. Tolkien in the U.S. on Jan. 5.",
      "He left!",
      "Was it O\n2?",
      "Yes.[3]",
      "Done.",
    ]);
  });

  it("needs a capital, digit or opening quote after the stop", () => {
    const t = 'It costs 3.5 dollars. e.g. this stays. "Quoted." 1999 was a year.';
    expect(splitSentences(t).map((s) => t.slice(s.start, s.end))).toEqual([
      "It costs 3.5 dollars. e.g. this stays.",
      '"Quoted."',
      "1999 was a year.",
    ]);
    expect(splitSentences("   ")).toEqual([]);
  });
});

describe("cutPassages on the SQuAD v1.1 dev pages", () => {
  const pages = squadToPages(readSquadFile(SQUAD_V11));

  it("cuts 3,580 chunks of 100 words (69 merged) and 2,067 paragraph passages", () => {
    const chunks = pages.flatMap((p) => cutPassages(p, { words: 100 }));
    expect(chunks.length).toBe(3580);
    expect(chunks.filter((c) => c.sources.length > 1).length).toBe(69);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(3580);
    const paragraphs = pages.flatMap((p) => cutPassages(p, { unit: "paragraph" }));
    expect(paragraphs.length).toBe(2067);
  });

  it("reproduces every chunk from its page spans; a chunk of 100+ words is a single sentence", () => {
    const byId = new Map(pages.map((p) => [p.wikipedia_id, p]));
    let oversized = 0;
    for (const page of pages) {
      for (const c of cutPassages(page, { words: 100 })) {
        const pg = byId.get(c.wikipedia_id)!;
        expect(rebuilt(pg, c)).toBe(c.text);
        expect(c.section).toBe(ABSTRACT_SECTION);
        if (c.words >= 100) {
          oversized++;
          expect(c.sources.length).toBe(1);
          expect(splitSentences(c.text).length).toBe(1);
        }
      }
    }
    expect(oversized).toBe(19);
  });

  it("cuts Super Bowl 50's first paragraph at a sentence boundary", () => {
    const [a, b, c] = cutPassages(pages[0], { words: 100 });
    expect([a.id, a.start_paragraph_id, a.start_character, a.end_character, a.words]).toEqual(["squad:Super_Bowl_50#0", 1, 0, 427, 68]);
    expect(a.text.endsWith("at Santa Clara, California.")).toBe(true);
    expect([b.start_paragraph_id, b.start_character, b.end_character, b.words]).toEqual([1, 428, 775, 56]);
    expect(b.text.startsWith("As this was the 50th Super Bowl")).toBe(true);
    expect([c.start_paragraph_id, c.start_character, c.end_character, c.words]).toEqual([2, 0, 498, 83]);
  });
});
