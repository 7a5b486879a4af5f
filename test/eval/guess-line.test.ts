// The guess-line parser lifts passage texts out before JSON.parse; the parsed record and the texts must
// be exactly what JSON.parse would give, whatever the escapes, spacing and key order.

import { describe, expect, it } from "vitest";
import { LIFTED_TEXT_KEY, normalizeSpan, parseGuessBytes } from "../../src/eval/guess-line.js";
import { normalizeAnswer } from "../../src/eval/normalize.js";

function parse(line: string, keep = true) {
  const buf = Buffer.from(`xx${line}yy`); // the line sits inside a larger buffer, as in a read chunk
  return parseGuessBytes(buf, 2, buf.length - 2, keep);
}

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

describe("parseGuessBytes", () => {
  const lines = [
    '{"id": "q1", "output": [{"answer": "x", "provenance": [{"wikipedia_id": "1", "text": "The cat, sat."}, {"text":"b\\"c\\\\", "wikipedia_id": 2}]}]}',
    '{"id": 5, "output": [{"provenance": [{"title": "\\"text\\": \\"no\\"", "text" : "caf\\u00e9 du monde"}]}]}',
    '{"id": "q", "meta": {"text": "meta text"}, "output": [{"answer": "the text", "provenance": [{"wikipedia_id": "1", "text": "日本語 text"}]}]}',
    '{"id": "q", "output": [{"answer": "a", "provenance": [{"wikipedia_id": "1", "text": 42}]}]}',
    '{"id":"q","output":[{"answer":"a","provenance":[{"text":"","wikipedia_id":"1"}]}]}',
  ];
  it.each(lines.map((l, i) => [i, l]))("line %i: same record as JSON.parse", (_i, line) => {
    const r = parse(line as string);
    const texts = r.texts.map((t) => JSON.parse(`"${t.buf.toString("utf8", t.start, t.end)}"`) as string);
    expect(restore(r.value, texts)).toEqual(JSON.parse(line as string));
  });

  it("normalizes a lifted text exactly as the text itself", () => {
    for (const line of lines) {
      const r = parse(line);
      for (const span of r.texts) {
        const text = JSON.parse(`"${span.buf.toString("utf8", span.start, span.end)}"`) as string;
        expect(normalizeSpan(span)).toBe(normalizeAnswer(text));
      }
    }
  });

  it("drops texts when they are not needed", () => {
    const r = parse(lines[0], false);
    expect(r.texts).toEqual([]);
    expect((r.value as { output: { provenance: Record<string, unknown>[] }[] }).output[0].provenance[0]).toEqual({
      wikipedia_id: "1",
      [LIFTED_TEXT_KEY]: 0,
    });
  });

  it("reports invalid JSON with the parser's own message", () => {
    const r = parse('{"id": "q", "output": [{"text": "x"}');
    expect(r.value).toBeUndefined();
    expect(r.reason).toMatch(/^invalid JSON \(/);
    expect(parse("[1, 2]").reason).toBe("expected a JSON object, found an array");
  });
});
