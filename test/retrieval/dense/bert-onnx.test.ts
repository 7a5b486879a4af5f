// The "bert-onnx" encoder against an independent reference (test/fixtures/bert-onnx/make.py, run in
// beforeAll with Debian's python3-onnx and python3-numpy): the WordPiece token ids equal the Python
// BERT tokenizer's (and transformers.js's) on every SQuAD v1.1 dev question and on edge texts
// (accents, CJK, control characters, odd whitespace, punctuation, long and unknown words), cased and
// uncased; the vectors of a random BERT-shaped ONNX graph run by onnxruntime-node equal NumPy's float64
// computation of the same graph to 1e-5 with CLS and mean pooling, the pooler output, normalisation,
// prefixes, truncation and a separate query graph; bad inputs are refused naming the file.

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BertOnnxEncoder } from "../../../src/retrieval/dense/bert.js";
import { createEncoder, type BertOnnxSpec } from "../../../src/retrieval/dense/encoder.js";
import { WordPieceTokenizer } from "../../../src/retrieval/dense/wordpiece.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson } from "../../fixtures/readers/wordpiece.js";
import { makeBertFixture, type BertRef } from "./bert-fixture.js";

let dir = "";
let ref: BertRef;
let vocabLines: string[] = [];
const open: BertOnnxEncoder[] = [];

beforeAll(() => {
  ({ dir, ref } = makeBertFixture());
  vocabLines = readFileSync(join(dir, "vocab.txt"), "utf8").split("\n");
}, 300_000);

afterAll(async () => {
  for (const e of open) await e.close();
});

function tokenizer(lowercase: boolean, maxLength = 100_000): WordPieceTokenizer {
  return WordPieceTokenizer.fromFile(join(dir, "vocab.txt"), { lowercase, maxLength });
}

function pieces(ids: number[]): string[] {
  return ids.map((i) => vocabLines[i]);
}

async function load(spec: Partial<BertOnnxSpec> = {}): Promise<BertOnnxEncoder> {
  const e = await BertOnnxEncoder.load({ type: "bert-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), threads: 1, ...spec });
  open.push(e);
  return e;
}

/** The largest absolute difference between `got` (row-major) and the reference rows. */
function maxDiff(got: Float32Array, want: number[][]): number {
  const dim = want[0].length;
  expect(got.length).toBe(want.length * dim);
  let worst = 0;
  want.forEach((row, i) => row.forEach((x, d) => (worst = Math.max(worst, Math.abs(got[i * dim + d] - x)))));
  return worst;
}

describe("WordPiece tokenizer against the Python reference", () => {
  it("gives the reference's ids on all 10,570 SQuAD dev questions, uncased and cased", () => {
    expect(ref.questions).toBe(10570);
    for (const mode of ["uncased", "cased"] as const) {
      const tok = tokenizer(mode === "uncased");
      const got = ref.tokenizer.texts.slice(0, ref.questions).map((t) => tok.encode(t).ids);
      expect(got).toEqual(ref.tokenizer[mode].slice(0, ref.questions));
    }
    // the reference's totals: pieces and [UNK]s over the questions
    const count = (rows: number[][], id?: number) => rows.slice(0, ref.questions).reduce((s, r) => s + (id === undefined ? r.length : r.filter((x) => x === id).length), 0);
    expect([count(ref.tokenizer.uncased), count(ref.tokenizer.uncased, 1), count(ref.tokenizer.cased), count(ref.tokenizer.cased, 1)]).toEqual([185302, 43, 173367, 24668]);
    expect(pieces(tokenizer(true).encode("Which NFL team represented the AFC at Super Bowl 50?").ids)).toEqual(["[CLS]", "which", "nfl", "team", "represented", "the", "a", "##f", "##c", "at", "super", "bowl", "50", "?", "[SEP]"]);
    expect(pieces(tokenizer(false).encode("Which NFL team represented the AFC at Super Bowl 50?").ids)).toEqual(["[CLS]", "[UNK]", "[UNK]", "team", "represented", "the", "[UNK]", "at", "[UNK]", "[UNK]", "50", "?", "[SEP]"]);
  });

  it("gives the reference's ids on the edge texts, uncased and cased", () => {
    for (const mode of ["uncased", "cased"] as const) {
      const tok = tokenizer(mode === "uncased");
      const got = ref.tokenizer.texts.slice(ref.questions).map((t) => tok.encode(t).ids);
      expect(got).toEqual(ref.tokenizer[mode].slice(ref.questions));
    }
  });

  it("agrees with a third tokenizer, transformers.js's port of Hugging Face's BertNormalizer, BertPreTokenizer and WordPiece", async () => {
    const tf = await import("@huggingface/transformers");
    tf.env.allowLocalModels = true;
    tf.env.allowRemoteModels = false;
    const vocab = vocabLines.slice(0, -1);
    for (const lowercase of [true, false]) {
      const td = join(dir, `hf-tokenizer-${lowercase}`);
      mkdirSync(td);
      const json = bertTokenizerJson(vocab) as { normalizer: { lowercase: boolean } };
      json.normalizer.lowercase = lowercase;
      writeFileSync(join(td, "tokenizer.json"), JSON.stringify(json));
      writeFileSync(join(td, "tokenizer_config.json"), JSON.stringify({ ...BERT_TOKENIZER_CONFIG, do_lower_case: lowercase }));
      writeFileSync(join(td, "config.json"), JSON.stringify({ model_type: "bert" }));
      const hf = await tf.AutoTokenizer.from_pretrained(td, { local_files_only: true });
      const ours = tokenizer(lowercase);
      const texts = ref.tokenizer.texts;
      expect(texts.map((t) => hf.encode(t))).toEqual(texts.map((t) => ours.encode(t).ids));
    }
  });

  it("lower-cases and strips accents only when uncased", () => {
    const text = "Café Déjà Vu: a résumé of naïve façades";
    expect(tokenizer(true).basicTokens(text)).toEqual(["cafe", "deja", "vu", ":", "a", "resume", "of", "naive", "facades"]);
    expect(tokenizer(false).basicTokens(text)).toEqual(["Café", "Déjà", "Vu", ":", "a", "résumé", "of", "naïve", "façades"]);
    expect(pieces(tokenizer(true).encode(text).ids)).toEqual(["[CLS]", "c", "##a", "##f", "##e", "de", "##j", "##a", "v", "##u", ":", "a", "res", "##u", "##m", "##e", "of", "n", "##a", "##ive", "fac", "##ade", "##s", "[SEP]"]);
    // decomposed and composed accents fold alike; İ lower-cases to i + U+0307, which is stripped
    expect(tokenizer(true).basicTokens("e\u0301 \u00e9 İstanbul ΣΟΦΙΑΣ")).toEqual(["e", "e", "istanbul", "σοφιας"]);
    // accents can be kept on an uncased model
    expect(WordPieceTokenizer.fromFile(join(dir, "vocab.txt"), { stripAccents: false }).basicTokens("Café")).toEqual(["café"]);
  });

  it("splits punctuation and CJK ideographs, drops control characters, treats odd spaces as spaces", () => {
    const tok = tokenizer(true);
    expect(tok.basicTokens("U.S.A.'s $100 50% a&b ~x^")).toEqual(["u", ".", "s", ".", "a", ".", "'", "s", "$", "100", "50", "%", "a", "&", "b", "~", "x", "^"]);
    expect(tok.basicTokens("北京大学 is 東京?")).toEqual(["北", "京", "大", "学", "is", "東", "京", "?"]);
    expect(tok.basicTokens("a\u0000b\ufffdc\u200bd\u0007e\u00adf")).toEqual(["abcdef"]);
    expect(tok.basicTokens("tab\there\nnew\u00a0line\u3000ideographic\u2028separator\r\nend")).toEqual(["tab", "here", "new", "line", "ideographic", "separator", "end"]);
    // symbols that are not punctuation stay inside words: the whole word becomes [UNK] when a character is missing
    expect(tok.basicTokens("snow☃man")).toEqual(["snow☃man"]);
    expect(pieces(tok.encode("snow☃man snowman").ids)).toEqual(["[CLS]", "[UNK]", "s", "##n", "##o", "##w", "##man", "[SEP]"]);
  });

  it("gives [UNK] for a word over 100 characters and splits one of 100", () => {
    const tok = tokenizer(true);
    expect(pieces(tok.encode("x".repeat(101)).ids)).toEqual(["[CLS]", "[UNK]", "[SEP]"]);
    expect(pieces(tok.encode("e".repeat(100)).ids)).toEqual(["[CLS]", "e", ...Array<string>(99).fill("##e"), "[SEP]"]);
    expect(pieces(tok.encode("").ids)).toEqual(["[CLS]", "[SEP]"]);
  });

  it("truncates to the maximum length, [CLS] and [SEP] included", () => {
    const tok = tokenizer(true, 16);
    const got = ref.prefixed.texts.map((t) => tok.encode(ref.prefixed.prefix + t));
    expect(got.map((e) => e.ids)).toEqual(ref.prefixed.ids);
    expect(got.filter((e) => e.truncated).length).toBe(32);
    expect(got.filter((e) => e.truncated).every((e) => e.ids.length === 16 && e.ids[15] === 3)).toBe(true);
    expect(got.filter((e) => !e.truncated).map((e) => e.ids.length).sort((a, b) => a - b)).toEqual([12, 12, 13, 13, 13, 13, 14, 14, 14, 14, 15, 15, 15, 15, 15, 16, 16, 16]);
    expect(pieces(tokenizer(true, 5).encode("which nfl team represented the").ids)).toEqual(["[CLS]", "which", "nfl", "team", "[SEP]"]);
    expect(() => tokenizer(true, 1)).toThrow(/maxLength must be an integer of at least 2/);
  });

  it("refuses a missing or empty vocabulary and one without special tokens, naming the file", () => {
    const missing = join(dir, "no-vocab.txt");
    expect(() => WordPieceTokenizer.fromFile(missing)).toThrow(`vocab file ${missing}: cannot read (no such file)`);
    writeFileSync(join(dir, "empty.txt"), "");
    expect(() => WordPieceTokenizer.fromFile(join(dir, "empty.txt"))).toThrow(`vocab file ${join(dir, "empty.txt")}: empty`);
    writeFileSync(join(dir, "nounk.txt"), "[PAD]\n[CLS]\n[SEP]\nthe\n");
    expect(() => WordPieceTokenizer.fromFile(join(dir, "nounk.txt"))).toThrow(`vocab file ${join(dir, "nounk.txt")}: the vocabulary has no [UNK] token`);
    // CRLF line ends are read as LF
    writeFileSync(join(dir, "crlf.txt"), "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\nthe\r\n##y\r\n");
    expect(WordPieceTokenizer.fromFile(join(dir, "crlf.txt")).encode("They").ids).toEqual([2, 4, 5, 3]);
  });
});

describe("bert-onnx encoder against the NumPy reference", () => {
  it("tokenizes as the reference and gives its [CLS] vectors to 1e-5, padded batches included", async () => {
    const e = await load({ pooling: "cls", normalize: false, maxLength: ref.vectors.maxLength });
    expect(e.dim).toBe(32);
    expect(ref.vectors.texts.map((t) => e.tokenize(t))).toEqual(ref.vectors.ids);
    const got = await e.encodeQueries(ref.vectors.texts);
    expect(maxDiff(got, ref.vectors.cls)).toBeLessThan(1e-5);
    // CLS is the default pooling; normalised by default
    const unit = await (await load({ maxLength: 128, batchSize: 7 })).encodePassages(ref.vectors.texts);
    expect(maxDiff(unit, ref.vectors.clsUnit)).toBeLessThan(1e-5);
  });

  it("mean-pools under the attention mask, with and without normalisation", async () => {
    const raw = await (await load({ pooling: "mean", normalize: false, maxLength: 128 })).encodeQueries(ref.vectors.texts);
    expect(maxDiff(raw, ref.vectors.mean)).toBeLessThan(1e-5);
    const unit = await (await load({ pooling: "mean", maxLength: 128, batchSize: 1 })).encodeQueries(ref.vectors.texts);
    expect(maxDiff(unit, ref.vectors.meanUnit)).toBeLessThan(1e-5);
    for (let i = 0; i < ref.vectors.texts.length; i++) expect(Math.abs(Math.hypot(...unit.subarray(i * 32, (i + 1) * 32)) - 1)).toBeLessThan(1e-6);
  });

  it("takes a 2-d output (pooler_output) as it is", async () => {
    const raw = await (await load({ output: "pooler_output", normalize: false, maxLength: 128 })).encodeQueries(ref.vectors.texts);
    expect(maxDiff(raw, ref.vectors.pooler)).toBeLessThan(1e-5);
    const unit = await (await load({ output: "pooler_output", maxLength: 128 })).encodeQueries(ref.vectors.texts);
    expect(maxDiff(unit, ref.vectors.poolerUnit)).toBeLessThan(1e-5);
  });

  it("prefixes queries and passages separately and truncates after the prefix", async () => {
    const e = await load({ pooling: "mean", maxLength: 16, queryPrefix: "query: ", passagePrefix: "passage: " });
    expect(maxDiff(await e.encodeQueries(ref.prefixed.texts), ref.prefixed.meanUnit)).toBeLessThan(1e-5);
    const asPassages = await (await load({ pooling: "mean", maxLength: 16, passagePrefix: "query: " })).encodePassages(ref.prefixed.texts);
    expect(maxDiff(asPassages, ref.prefixed.meanUnit)).toBeLessThan(1e-5);
    const passages = await e.encodePassages(ref.prefixed.texts.slice(0, 2));
    expect(maxDiff(passages, ref.prefixed.meanUnit.slice(0, 2))).toBeGreaterThan(0.01);
  });

  it("runs a graph without token_type_ids (the same weights give the same vectors)", async () => {
    const got = await (await load({ model: join(dir, "model-no-types.onnx"), normalize: false, maxLength: 128 })).encodeQueries(ref.vectors.texts);
    expect(maxDiff(got, ref.vectors.cls)).toBeLessThan(1e-5);
  });

  it("encodes queries with a separate query graph when given one (DPR's two encoders)", async () => {
    const e = await load({ queryModel: join(dir, "model-query.onnx"), maxLength: 128 });
    expect(e.spec.queryModel).toBe(join(dir, "model-query.onnx"));
    const q = ref.queryModel.texts;
    expect(maxDiff(await e.encodeQueries(q), ref.queryModel.clsUnit)).toBeLessThan(1e-5);
    expect(maxDiff(await e.encodePassages(q), ref.vectors.clsUnit.slice(0, 50))).toBeLessThan(1e-5);
    expect(maxDiff(await e.encodeQueries(q), ref.vectors.clsUnit.slice(0, 50))).toBeGreaterThan(0.1);
    const bad = join(dir, "bad-inputs.onnx");
    await expect(load({ queryModel: bad })).rejects.toThrow(`model file ${bad}: graph input "tokens" is not a BERT input`);
    await expect(load({ queryModel: join(dir, "nothing.onnx") })).rejects.toThrow(`model file ${join(dir, "nothing.onnx")}: cannot read (no such file)`);
  });

  it("is created from its spec by createEncoder, recording absolute paths", async () => {
    const e = await createEncoder({ type: "bert-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), pooling: "mean", maxLength: 128, threads: 1 });
    try {
      expect(e).toBeInstanceOf(BertOnnxEncoder);
      expect(e.spec).toEqual({ type: "bert-onnx", model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), pooling: "mean", maxLength: 128, threads: 1 });
      expect(maxDiff(await e.encodeQueries(ref.vectors.texts.slice(0, 3)), ref.vectors.meanUnit.slice(0, 3))).toBeLessThan(1e-5);
      expect(await e.encodeQueries([])).toEqual(new Float32Array(0));
    } finally {
      await e.close();
    }
  });

  it("refuses missing files, a graph that is not BERT's, an unknown output and bad settings, naming the file", async () => {
    const model = join(dir, "model.onnx");
    const vocab = join(dir, "vocab.txt");
    await expect(load({ vocab: join(dir, "missing.txt") })).rejects.toThrow(`vocab file ${join(dir, "missing.txt")}: cannot read (no such file)`);
    await expect(load({ model: join(dir, "missing.onnx") })).rejects.toThrow(`model file ${join(dir, "missing.onnx")}: cannot read (no such file)`);
    await expect(load({ model: vocab })).rejects.toThrow(`model file ${vocab}: onnxruntime cannot load it as an ONNX graph`);
    const bad = join(dir, "bad-inputs.onnx");
    await expect(load({ model: bad })).rejects.toThrow(`model file ${bad}: graph input "tokens" is not a BERT input (inputs: tokens; expected input_ids, attention_mask, optionally token_type_ids and position_ids)`);
    await expect(load({ output: "sentence_embedding" })).rejects.toThrow(`model file ${model}: the graph has no output "sentence_embedding" (outputs: last_hidden_state, pooler_output)`);
    await expect(load({ pooling: "max" as "cls" })).rejects.toThrow('bert-onnx encoder: pooling must be "cls" or "mean", not "max"');
    await expect(createEncoder({ type: "bert-onnx", model } as BertOnnxSpec)).rejects.toThrow('bert-onnx encoder: "vocab" (the path of vocab.txt) is required');
    // more positions than the graph's embeddings: onnxruntime's error, with the file and the likely cause
    const e = await load({ maxLength: 512 });
    await expect(e.encodeQueries(["the ".repeat(200)])).rejects.toThrow(new RegExp(`^model file ${model.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: onnxruntime failed on 1 texts of up to 202 tokens \\(.*\\); is maxLength \\(512\\) within the model's position embeddings\\?$`, "s"));
  });
});
