import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { OnnxQaReader } from "../../../src/readers/onnx/reader.js";
import type { ReaderPassage } from "../../../src/readers/types.js";
import { ROBERTA_TOKENIZER_CONFIG, robertaTokenizerJson, trainByteBpe } from "../../fixtures/readers/bytelevel.js";
import { XLMR_TOKENIZER_CONFIG, unigramTokenizerJson, unigramVocab } from "../../fixtures/readers/sentencepiece.js";
import { squadPassage, squadRecord } from "../../fixtures/readers/squad.js";
import { writeModelDir } from "../../fixtures/readers/tiny-onnx.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson, buildVocab } from "../../fixtures/readers/wordpiece.js";

// A real WordPiece tokenizer (vocabulary from the passages) and a Gather-only ONNX model whose logits are
// fixed per token: the span the reader must find is known in advance.
const AFC = "56be4db0acb8001400a502ec"; // Which NFL team represented the AFC at Super Bowl 50? (gold: Denver Broncos @177)
const warsaw = squadPassage("Warsaw", 1, 12.5);
const superBowl = squadPassage("Super_Bowl_50", 1, 11.0);
const normans = squadPassage("Normans", 1, 9.75);
const emoji: ReaderPassage = { text: "🏈 Super Bowl 50: 😀 Denver Broncos won.", provenance: { wikipedia_id: "synthetic", title: "Synthetic" } };
const vocab = buildVocab([warsaw.text, superBowl.text, normans.text, emoji.text], { omitWords: ["broncos"], omitChars: ["🏈", "😀"], extra: ["bron", "##cos"] });

function modelDir(start: Record<string, number>, end: Record<string, number>): string {
  for (const t of [...Object.keys(start), ...Object.keys(end)]) if (!vocab.includes(t)) throw new Error(`${t} is not in the vocabulary`);
  const dir = mkdtempSync(join(tmpdir(), "tartan-onnx-qa-"));
  writeModelDir(dir, bertTokenizerJson(vocab), BERT_TOKENIZER_CONFIG, vocab.map((t) => start[t] ?? 0), vocab.map((t) => end[t] ?? 0));
  return dir;
}

describe("OnnxQaReader with a tiny ONNX QA model from a local directory", () => {
  let dir: string;
  let reader: OnnxQaReader;
  beforeAll(async () => {
    // Denver … Broncos scores 5 + 5; Frédéric … Chopin 4 + 4
    dir = modelDir({ denver: 5, frederic: 4 }, { "##cos": 5, chopin: 4 });
    reader = await OnnxQaReader.load({ model: dir });
  });

  it("loads the tokenizer's scheme and pair layout", () => {
    expect(reader.scheme).toEqual({ byteLevel: false, prefix: "##", unk: "[UNK]" });
    expect(reader.layout.map((i) => (i.kind === "special" ? vocab[i.id] : `${i.kind}:${i.type}`))).toEqual(["[CLS]", "question:0", "[SEP]", "context:1", "[SEP]"]);
    expect(reader.name).toBe(`onnx-qa:${dir}`);
  });

  it("answers a real SQuAD question with the exact span of the best passage, at SQuAD's own offsets", async () => {
    const record = squadRecord(AFC);
    const a = await reader.read(record, [warsaw, superBowl, normans]);
    expect(a).toEqual({
      answer: "Denver Broncos",
      provenance: [superBowl.provenance],
      score: 10,
      meta: { passage_index: 1, start_character: 177, end_character: 191, token_start: 33, token_end: 35, window: 0, logit_score: 10, windows: 3 },
    });
    const gold = record.output[0].provenance![0];
    expect([gold.start_character, gold.end_character]).toEqual([177, 191]);
  });

  it("keeps the passage's own spelling although the tokenizer lowercased and stripped accents", async () => {
    const a = await reader.read(squadRecord(AFC), [warsaw]);
    expect([a.answer, a.meta?.start_character, a.meta?.end_character, a.score]).toEqual(["Frédéric Chopin", 249, 264, 8]);
    expect(warsaw.text.slice(249, 264)).toBe("Frédéric Chopin");
  });

  it("counts offsets in code points past astral characters ([UNK] in the vocabulary)", async () => {
    const a = await reader.read(squadRecord(AFC), [emoji]);
    expect(a.answer).toBe("Denver Broncos");
    expect(emoji.text.indexOf("Denver")).toBe(21); // UTF-16 units
    expect([a.meta?.start_character, a.meta?.end_character]).toEqual([19, 33]); // code points, as KILT counts
    expect(a.provenance).toEqual([{ wikipedia_id: "synthetic", title: "Synthetic" }]);
  });

  it("adds the retrieval score when asked: the weight decides between two passages", async () => {
    const at = async (retrievalWeight: number) => {
      const r = await OnnxQaReader.load({ model: dir, retrievalWeight });
      const a = await r.read(squadRecord(AFC), [warsaw, superBowl]);
      await r.close();
      return [a.answer, a.score, a.meta?.passage_index, a.meta?.logit_score];
    };
    expect(await at(0)).toEqual(["Denver Broncos", 10, 1, 10]);
    expect(await at(1)).toEqual(["Denver Broncos", 21, 1, 10]); // 10 + 11 beats 8 + 12.5
    expect(await at(2)).toEqual(["Frédéric Chopin", 33, 0, 8]); // 8 + 25 beats 10 + 22
  });

  it("answers nothing without passages and refuses a record without input", async () => {
    expect(await reader.read(squadRecord(AFC), [])).toEqual({ answer: "", provenance: [], meta: { no_answer: true, windows: 0 } });
    expect(await reader.read(squadRecord(AFC), [{ text: "", provenance: { wikipedia_id: "empty" } }])).toEqual({
      answer: "",
      provenance: [],
      meta: { no_answer: true, windows: 0 },
    });
    await expect(reader.read({ id: "sfq_17752", output: [] }, [superBowl])).rejects.toThrow('record "sfq_17752" has no input');
  });
});

describe("OnnxQaReader sliding windows", () => {
  it("finds an answer in the last window of a long passage, the same for any batch size", async () => {
    // "Arabic numerals 50" ends the paragraph; "50" also appears early, but no "arabic" precedes it there
    const dir = modelDir({ arabic: 5 }, { "50": 5 });
    const answers = [];
    for (const batchSize of [1, 3, 8]) {
      const reader = await OnnxQaReader.load({ model: dir, maxLength: 64, stride: 16, batchSize });
      answers.push(await reader.read(squadRecord(AFC), [superBowl, warsaw]));
      await reader.close();
    }
    // 7 windows for Super Bowl 50's 153 tokens (windows.test.ts), 4 for Warsaw's
    expect(answers[0]).toEqual({
      answer: "Arabic numerals 50",
      provenance: [superBowl.provenance],
      score: 10,
      meta: { passage_index: 0, start_character: 756, end_character: 774, token_start: 149, token_end: 151, window: 6, logit_score: 10, windows: 11 },
    });
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it("never joins a start and an end that no single window holds together", async () => {
    // start on "denver" (token 33) and end on "numerals" (token 150): too far apart for maxAnswerTokens, and
    // in no common window: the best span stays within one window
    const dir = modelDir({ denver: 5 }, { numerals: 5 });
    const reader = await OnnxQaReader.load({ model: dir, maxLength: 64, stride: 16, maxAnswerTokens: 200 });
    const a = await reader.read(squadRecord(AFC), [superBowl]);
    await reader.close();
    expect(a.score).toBe(5);
    expect(a.answer).toBe("Denver"); // start 5 + end 0 at the same token beats any span reaching "numerals" from elsewhere
  });
});

describe("OnnxQaReader loading", () => {
  it("looks model ids up locally only unless allowed to download", async () => {
    await expect(OnnxQaReader.load({ model: "tartan-test/no-such-model" })).rejects.toThrow(
      'cannot load the QA model "tartan-test/no-such-model" (a model id, looked up locally only: pass allowRemote to download)',
    );
  });

  it("names the directory when a file is missing", async () => {
    const dir = modelDir({}, {});
    rmSync(join(dir, "onnx", "model.onnx"));
    await expect(OnnxQaReader.load({ model: dir })).rejects.toThrow(`${dir}: not a complete model directory: onnx/model.onnx is missing`);
  });
});

describe("OnnxQaReader with a RoBERTa-style byte-level BPE tokenizer", () => {
  // merges learnt on the Super Bowl 50 paragraph only: its words are whole tokens, Warsaw's split into pieces
  const { vocab: bpeVocab, merges } = trainByteBpe([superBowl.text], 400);

  async function load(start: Record<string, number>, end: Record<string, number>): Promise<OnnxQaReader> {
    for (const t of [...Object.keys(start), ...Object.keys(end)]) if (!bpeVocab.includes(t)) throw new Error(`${t} is not in the vocabulary`);
    const dir = mkdtempSync(join(tmpdir(), "tartan-onnx-qa-bpe-"));
    writeModelDir(
      dir,
      robertaTokenizerJson(bpeVocab, merges),
      ROBERTA_TOKENIZER_CONFIG,
      bpeVocab.map((t) => start[t] ?? 0),
      bpeVocab.map((t) => end[t] ?? 0),
      "roberta",
    );
    return OnnxQaReader.load({ model: dir });
  }

  it("lays out <s> question </s></s> passage </s> and answers at SQuAD's offsets", async () => {
    const reader = await load({ "ĠDenver": 5 }, { "ĠBroncos": 5 });
    expect(reader.scheme).toEqual({ byteLevel: true });
    expect(reader.layout.map((i) => (i.kind === "special" ? bpeVocab[i.id] : `${i.kind}:${i.type}`))).toEqual([
      "<s>",
      "question:0",
      "</s>",
      "</s>",
      "context:1",
      "</s>",
    ]);
    const a = await reader.read(squadRecord(AFC), [warsaw, superBowl]);
    await reader.close();
    expect([a.answer, a.provenance, a.meta?.passage_index, a.meta?.start_character, a.meta?.end_character, a.score]).toEqual([
      "Denver Broncos",
      [superBowl.provenance],
      1,
      177,
      191,
      10,
    ]);
  });

  it("answers across a character of three bytes (the en dash of 24–10)", async () => {
    const reader = await load({ "Ġ24": 5 }, { "10": 5 });
    const a = await reader.read(squadRecord(AFC), [superBowl]);
    await reader.close();
    expect([a.answer, a.meta?.start_character, a.meta?.end_character]).toEqual(["24–10", 267, 272]);
  });

  it("ends an answer on a token holding half a character with that whole character", async () => {
    // Warsaw's "Skłodowska" is "ĠS k Å Ĥ o d ow s k a" here ("ł" is the two byte tokens Å Ĥ): a span ending
    // on Ĥ ends after the ł
    const reader = await load({ "ĠS": 5 }, { "Ĥ": 5 });
    const a = await reader.read(squadRecord(AFC), [warsaw]);
    await reader.close();
    expect([a.answer, a.meta?.start_character, a.meta?.end_character]).toEqual(["Skł", 55, 58]);
  });
});

describe("OnnxQaReader with an XLM-R-style SentencePiece Unigram tokenizer", () => {
  it("lays out <s> question </s></s> passage </s> from a template and answers at SQuAD's offsets", async () => {
    const vocab = unigramVocab([warsaw.text, superBowl.text]);
    const dir = mkdtempSync(join(tmpdir(), "tartan-onnx-qa-spm-"));
    const weight = (piece: string) => vocab.map(([t]) => (t === piece ? 5 : 0));
    writeModelDir(dir, unigramTokenizerJson(vocab), XLMR_TOKENIZER_CONFIG, weight("▁Denver"), weight("▁Broncos"), "xlm-roberta");
    const reader = await OnnxQaReader.load({ model: dir });
    expect(reader.scheme).toEqual({ byteLevel: false, spaceMarker: "▁", unk: "<unk>" });
    expect(reader.layout.map((i) => (i.kind === "special" ? vocab[i.id][0] : `${i.kind}:${i.type}`))).toEqual([
      "<s>",
      "question:0",
      "</s>",
      "</s>",
      "context:0",
      "</s>",
    ]);
    const a = await reader.read(squadRecord(AFC), [warsaw, superBowl]);
    await reader.close();
    expect([a.answer, a.provenance, a.meta?.start_character, a.meta?.end_character, a.score]).toEqual(["Denver Broncos", [superBowl.provenance], 177, 191, 10]);
  });
});
