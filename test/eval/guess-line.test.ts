// The guess-line parser lifts passage texts out before JSON.parse; the parsed record and the texts must
// be exactly what JSON.parse would give, whatever the escapes, spacing and key order.

import { describe, expect, it } from "vitest";
import { LIFTED_TEXT_KEY, liftedText, parseGuessLine } from "../../src/eval/guess-line.js";

const parse = (line: string, lift = true) => parseGuessLine(line, lift);

/** Puts the lifted texts back, to compare with JSON.parse. */
function restore(value: unknown, texts: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => restore(v, texts));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === LIFTED_TEXT_KEY) out.text = texts[v as number];
      else out[k] = restore(v, texts);
    }
    return out;
  }
  return value;
}

describe("parseGuessLine", () => {
  const lines = [
    '{"id": "q1", "output": [{"answer": "x", "provenance": [{"wikipedia_id": "1", "text": "The cat, sat."}, {"text":"b\\"c\\\\", "wikipedia_id": 2}]}]}',
    '{"id": 5, "output": [{"provenance": [{"title": "\\"text\\": \\"no\\"", "text" : "caf\\u00e9 du monde"}]}]}',
    '{"id": "q", "meta": {"text": "meta text"}, "output": [{"answer": "the text", "provenance": [{"wikipedia_id": "1", "text": "日本語 text"}]}]}',
    '{"id": "q", "output": [{"answer": "a", "provenance": [{"wikipedia_id": "1", "text": 42}]}]}',
    '{"id":"q","output":[{"answer":"a","provenance":[{"text":"","wikipedia_id":"1"}]}]}',
  ];
  it.each(lines.map((l, i) => [i, l]))("line %i: same record as JSON.parse", (_i, line) => {
    const r = parse(line as string);
    expect(restore(r.value, r.texts.map(liftedText))).toEqual(JSON.parse(line as string));
  });

  it("lifts every string-valued text key, and only those", () => {
    expect(parse(lines[0]).texts).toEqual(["The cat, sat.", 'b\\"c\\\\']);
    expect(parse(lines[2]).texts.map(liftedText)).toEqual(["meta text", "日本語 text"]);
    expect(parse(lines[3]).texts).toEqual([]);
  });

  it("parses the whole line when texts are not needed", () => {
    expect(parse(lines[0], false)).toEqual({ value: JSON.parse(lines[0]), texts: [] });
  });

  it("reports invalid JSON with the parser's own message", () => {
    const r = parse('{"id": "q", "output": [{"text": "x"}');
    expect(r.value).toBeUndefined();
    expect(r.reason).toMatch(/^invalid JSON \(/);
    expect(parse("[1, 2]").reason).toBe("expected a JSON object, found an array");
  });
});
