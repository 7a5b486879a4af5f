import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoTokenizer } from "@huggingface/transformers";
import { describe, expect, it } from "vitest";
import { alignTokens, tokenSchemeOf } from "../../../src/readers/onnx/align.js";
import { bestSpan } from "../../../src/readers/onnx/spans.js";
import { type LayoutItem, makeWindows, pairLayout } from "../../../src/readers/onnx/windows.js";
import { squadPassage, squadRecord } from "../../fixtures/readers/squad.js";
import { writeModelDir } from "../../fixtures/readers/tiny-onnx.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson, buildVocab } from "../../fixtures/readers/wordpiece.js";

const BERT: LayoutItem[] = [
  { kind: "special", id: 2, type: 0 },
  { kind: "question", type: 0 },
  { kind: "special", id: 3, type: 0 },
  { kind: "context", type: 1 },
  { kind: "special", id: 3, type: 1 },
];

describe("pairLayout", () => {
  const ids: Record<string, number> = { "<s>": 0, "</s>": 2 };
  it("reads RoBERTa's <s> q </s></s> c </s>", () => {
    const roberta = (a: string[], b: string[]) => ({ tokens: ["<s>", ...a, "</s>", "</s>", ...b, "</s>"], token_type_ids: [0, 0, 0, 1, 1, 1] });
    expect(pairLayout(roberta, (t) => ids[t])).toEqual([
      { kind: "special", id: 0, type: 0 },
      { kind: "question", type: 0 },
      { kind: "special", id: 2, type: 0 },
      { kind: "special", id: 2, type: 1 },
      { kind: "context", type: 1 },
      { kind: "special", id: 2, type: 1 },
    ]);
  });

  it("puts question then context when there is no post-processor, or one that keeps the pair apart", () => {
    const plain = [{ kind: "question", type: 0 }, { kind: "context", type: 0 }];
    expect(pairLayout(null, () => undefined)).toEqual(plain);
    expect(pairLayout((a, b) => ({ tokens: a, tokens_pair: b }), () => undefined)).toEqual(plain);
  });

  it("fails clearly on special tokens without ids or a layout it cannot read", () => {
    expect(() => pairLayout((a, b) => ({ tokens: ["<cls>", ...a, ...b] }), () => undefined)).toThrow(`the tokenizer's post-processor adds "<cls>", which has no id`);
    expect(() => pairLayout((a) => ({ tokens: a }), () => undefined)).toThrow("cannot read the tokenizer's pair layout");
  });
});

describe("makeWindows", () => {
  const context = Array.from({ length: 20 }, (_, i) => 100 + i);

  it("cuts the passage into overlapping windows after the question, BERT layout", () => {
    // 12 tokens: 3 special + 2 question → 7 passage tokens per window, next window 7 - 2 = 5 later
    const w = makeWindows(BERT, [10, 11], context, { maxLength: 12, stride: 2 });
    expect(w.map((x) => [x.contextStart, x.contextLength, x.contextOffset])).toEqual([
      [0, 7, 4],
      [5, 7, 4],
      [10, 7, 4],
      [15, 5, 4],
    ]);
    expect(w[1].inputIds).toEqual([2, 10, 11, 3, 105, 106, 107, 108, 109, 110, 111, 3]);
    expect(w[1].tokenTypeIds).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(w[3].inputIds).toEqual([2, 10, 11, 3, 115, 116, 117, 118, 119, 3]);
  });

  it("makes one window for a passage that fits, none for an empty one; stride 0 tiles", () => {
    expect(makeWindows(BERT, [10], context, { maxLength: 30, stride: 4 }).map((x) => [x.contextStart, x.contextLength])).toEqual([[0, 20]]);
    expect(makeWindows(BERT, [10], [], { maxLength: 30, stride: 4 })).toEqual([]);
    expect(makeWindows(BERT, [10], context, { maxLength: 11, stride: 0 }).map((x) => [x.contextStart, x.contextLength])).toEqual([
      [0, 7],
      [7, 7],
      [14, 6],
    ]);
  });

  it("cuts the question, never the passage, and refuses windows with no room", () => {
    const q = Array.from({ length: 100 }, (_, i) => 1000 + i);
    const w = makeWindows(BERT, q, context, { maxLength: 20, stride: 1, maxQuestionTokens: 8 });
    expect(w[0].inputIds.slice(0, 10)).toEqual([2, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1007, 3]);
    expect(w.map((x) => [x.contextStart, x.contextLength])).toEqual([[0, 9], [8, 9], [16, 4]]);
    expect(() => makeWindows(BERT, q, context, { maxLength: 64, stride: 128 })).toThrow(
      "maxLength 64 leaves -3 passage tokens per window (question 64, special 3): not more than the stride 128",
    );
  });

  it("windows a real SQuAD paragraph with a real tokenizer: exact token and character ranges", async () => {
    const passage = squadPassage("Super_Bowl_50", 1);
    const dir = mkdtempSync(join(tmpdir(), "tartan-windows-"));
    writeModelDir(dir, bertTokenizerJson(buildVocab([passage.text], { omitWords: ["broncos"], extra: ["bron", "##cos"] })), BERT_TOKENIZER_CONFIG, [0], [0]);
    const tok: any = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    const layout = pairLayout((a, b) => tok._tokenizer.post_processor(a, b, { add_special_tokens: true }), (t) => tok._tokenizer.token_to_id(t));
    expect(layout).toEqual(BERT);
    const question = tok._tokenizer.encode(squadRecord("56be4db0acb8001400a502ec").input, { add_special_tokens: false });
    const context = tok._tokenizer.encode(passage.text, { add_special_tokens: false });
    expect(question.tokens.length).toBe(24);
    expect(context.tokens.length).toBe(153);
    const spans = alignTokens(passage.text, context.tokens, tokenSchemeOf(tok._tokenizerJSON));
    const windows = makeWindows(layout, question.ids, context.ids, { maxLength: 64, stride: 16 });
    // 64 - 3 - 24 = 37 passage tokens per window, each 21 after the previous
    const ranges = windows.map((w) => [w.contextStart, w.contextLength, spans[w.contextStart]![0], spans[w.contextStart + w.contextLength - 1]![1]]);
    expect(ranges).toEqual([
      [0, 37, 0, 200],
      [21, 37, 112, 310],
      [42, 37, 235, 399],
      [63, 37, 334, 506],
      [84, 37, 426, 624],
      [105, 37, 526, 711],
      [126, 27, 652, 775],
    ]);
    expect(passage.text.slice(112, 200)).toBe("the 2015 season. The American Football Conference (AFC) champion Denver Broncos defeated");
  });
});

describe("bestSpan", () => {
  const window = { inputIds: [], tokenTypeIds: [], contextOffset: 4, contextStart: 10, contextLength: 6 };
  //            [CLS] q   q  [SEP] t10 t11 t12 t13 t14 t15
  const start = [9, 0, 0, 9, 1, 5, 0, 2, 0, 0];
  const end = [9, 0, 0, 9, 0, 1, 0, 4, 3, 0];

  it("maximises start + end over passage tokens only, start before end", () => {
    expect(bestSpan(start, end, window, () => true)).toEqual({ start: 11, end: 13, score: 9 });
  });

  it("limits the answer length and skips unusable tokens", () => {
    // at most 2 tokens: 11..11 and 13..13 both score 6; the earlier start wins
    expect(bestSpan(start, end, window, () => true, 2)).toEqual({ start: 11, end: 11, score: 6 });
    expect(bestSpan(start, end, window, (k) => k !== 13)).toEqual({ start: 11, end: 14, score: 8 });
    expect(bestSpan(start, end, window, () => false)).toBeUndefined();
    expect(() => bestSpan(start, end, window, () => true, 0)).toThrow("maxAnswerTokens must be a positive integer, got 0");
  });

  it("breaks ties by earlier start, then shorter span", () => {
    const flat = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1];
    expect(bestSpan(flat, flat, window, () => true)).toEqual({ start: 10, end: 10, score: 2 });
  });
});
