// Tests for provenanceText: KILT's paragraph/character spans (code points, exclusive end), spans
// across paragraphs, defaults for missing fields, and the errors for spans that do not fit the page.

import { describe, expect, it } from "vitest";
import { provenanceText, SpanError } from "../../src/knowledge/span.js";
import type { KiltPage } from "../../src/records/types.js";

const page: KiltPage = {
  wikipedia_id: "42",
  wikipedia_title: "Example",
  text: ["Example\n", "Hello world.\n", "Second 😀 para.\n", "Third\n"],
};

describe("provenanceText", () => {
  it("slices one paragraph by character offsets, end exclusive", () => {
    expect(provenanceText(page, { start_paragraph_id: 1, start_character: 6, end_paragraph_id: 1, end_character: 11 })).toBe("world");
  });

  it("counts characters as code points, like Python", () => {
    // S0 e1 c2 o3 n4 d5 _6 😀7 _8 p9 a10 r11 a12 .13
    expect(provenanceText(page, { start_paragraph_id: 2, start_character: 7, end_paragraph_id: 2, end_character: 8 })).toBe("😀");
    expect(provenanceText(page, { start_paragraph_id: 2, start_character: 9, end_paragraph_id: 2, end_character: 13 })).toBe("para");
  });

  it("joins a span across paragraphs as stored", () => {
    expect(provenanceText(page, { start_paragraph_id: 1, start_character: 6, end_paragraph_id: 3, end_character: 3 })).toBe(
      "world.\nSecond 😀 para.\nThi",
    );
  });

  it("takes whole paragraphs when character offsets are missing, and accepts ids written as strings", () => {
    expect(provenanceText(page, { start_paragraph_id: "1" })).toBe("Hello world.\n");
    expect(provenanceText(page, { start_paragraph_id: 1, end_paragraph_id: "2" })).toBe("Hello world.\nSecond 😀 para.\n");
    expect(provenanceText(page, { start_paragraph_id: 3, start_character: 2 })).toBe("ird\n");
  });

  it("puts a newline between paragraphs that lack one", () => {
    const bare: KiltPage = { wikipedia_id: "1", wikipedia_title: "T", text: ["T", "alpha", "beta"] };
    expect(provenanceText(bare, { start_paragraph_id: 1, start_character: 2, end_paragraph_id: 2, end_character: 2 })).toBe("pha\nbe");
  });

  it("allows empty spans at a paragraph's end", () => {
    expect(provenanceText(page, { start_paragraph_id: 3, start_character: 6, end_character: 6 })).toBe("");
  });

  const errors: [string, Parameters<typeof provenanceText>[1], string][] = [
    ["paragraph past the end", { start_paragraph_id: 4 }, 'page 42 ("Example"): start_paragraph_id 4 is out of range (the page has 4 paragraphs, 0-3)'],
    ["end paragraph past the end", { start_paragraph_id: 1, end_paragraph_id: 9 }, 'page 42 ("Example"): end_paragraph_id 9 is out of range (the page has 4 paragraphs, 0-3)'],
    ["end before start", { start_paragraph_id: 2, end_paragraph_id: 1 }, 'page 42 ("Example"): end_paragraph_id 1 is before start_paragraph_id 2'],
    ["character past the paragraph", { start_paragraph_id: 1, start_character: 0, end_character: 14 }, 'page 42 ("Example"): end_character 14 is beyond paragraph 1, which has 13 characters'],
    ["start character past the paragraph", { start_paragraph_id: 2, start_character: 16, end_paragraph_id: 3 }, 'page 42 ("Example"): start_character 16 is beyond paragraph 2, which has 15 characters'],
    ["reversed characters", { start_paragraph_id: 1, start_character: 5, end_character: 2 }, 'page 42 ("Example"): end_character 2 is before start_character 5 in paragraph 1'],
    ["no start paragraph", { start_character: 1 }, 'page 42 ("Example"): provenance has no start_paragraph_id'],
    ["not an integer", { start_paragraph_id: "one" }, 'page 42 ("Example"): start_paragraph_id "one" is not an integer'],
  ];
  for (const [name, span, message] of errors) {
    it(`explains a bad span: ${name}`, () => {
      expect(() => provenanceText(page, span)).toThrow(new SpanError(message));
    });
  }

  it("explains KILT's -1 offsets", () => {
    expect(() => provenanceText(page, { start_paragraph_id: 1, start_character: -1, end_character: -1 })).toThrow(
      /start_character -1 is negative \(KILT writes -1 when it has no character offsets/,
    );
  });
});
