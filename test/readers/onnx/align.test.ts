import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AutoTokenizer } from "@huggingface/transformers";
import { beforeAll, describe, expect, it } from "vitest";
import { readSquadFile } from "../../../src/knowledge/squad.js";
import { type TokenScheme, alignTokens, byteLevelDecoder, foldChar, tokenSchemeOf, tokenUnits } from "../../../src/readers/onnx/align.js";
import { ROBERTA_TOKENIZER_CONFIG, robertaTokenizerJson, trainByteBpe } from "../../fixtures/readers/bytelevel.js";
import { XLMR_TOKENIZER_CONFIG, unigramTokenizerJson, unigramVocab } from "../../fixtures/readers/sentencepiece.js";
import { SQUAD_V11, squadPassage } from "../../fixtures/readers/squad.js";
import { writeModelDir } from "../../fixtures/readers/tiny-onnx.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson, buildVocab } from "../../fixtures/readers/wordpiece.js";

const WORDPIECE: TokenScheme = { byteLevel: false, prefix: "##", unk: "[UNK]" };
const METASPACE: TokenScheme = { byteLevel: false, spaceMarker: "▁", unk: "<unk>" };
const BYTES: TokenScheme = { byteLevel: true };

/** Each token with the text its span covers. */
const covered = (text: string, tokens: string[], scheme: TokenScheme) =>
  alignTokens(text, tokens, scheme).map((s, i) => [tokens[i], s === null ? null : text.slice(s[0], s[1])]);

describe("tokenSchemeOf", () => {
  it("reads WordPiece, byte-level BPE, SentencePiece Unigram and byte-fallback BPE tokenizers", () => {
    expect(tokenSchemeOf({ model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", vocab: {} }, pre_tokenizer: { type: "BertPreTokenizer" } })).toEqual(
      WORDPIECE,
    );
    expect(
      tokenSchemeOf({
        model: { type: "BPE", unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "", vocab: {} },
        pre_tokenizer: { type: "ByteLevel", add_prefix_space: false },
        decoder: { type: "ByteLevel" },
      }),
    ).toEqual({ byteLevel: true });
    expect(
      tokenSchemeOf({
        model: { type: "Unigram", unk_id: 2, vocab: [["<s>", 0], ["</s>", 0], ["<unk>", 0]] },
        pre_tokenizer: { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "Metaspace", replacement: "▁" }] },
      }),
    ).toEqual(METASPACE);
    expect(
      tokenSchemeOf({
        model: { type: "BPE", unk_token: "<unk>", byte_fallback: true, vocab: {} },
        decoder: { type: "Sequence", decoders: [{ type: "Replace" }, { type: "ByteFallback" }, { type: "Fuse" }] },
      }),
    ).toEqual({ byteLevel: false, unk: "<unk>" });
    expect(tokenSchemeOf({ model: { type: "BPE", end_of_word_suffix: "</w>", vocab: {} } })).toEqual({ byteLevel: false, suffix: "</w>" });
  });
});

describe("folding and token surfaces", () => {
  it("folds characters the way normalizers may have: compatibility forms, case, accents", () => {
    expect(["É", "ß", "İ", "ﬁ", "Ａ", "²", "\u0301", " ", "\u00ad", "ł", "😀"].map(foldChar)).toEqual(["e", "ß", "i", "fi", "a", "2", "", "", "", "ł", "😀"]);
  });

  it("strips subword prefixes, space markers and byte-level characters", () => {
    expect(tokenUnits("##ium", WORDPIECE)).toEqual([..."ium"].map((c) => c.codePointAt(0)));
    expect(tokenUnits("[UNK]", WORDPIECE)).toBe("unknown");
    expect(tokenUnits("##", WORDPIECE)).toEqual([35, 35]); // the token "##" itself is text
    expect(tokenUnits("▁Bowl", METASPACE)).toEqual([..."bowl"].map((c) => c.codePointAt(0)));
    expect(tokenUnits("▁", METASPACE)).toEqual([]);
    expect(tokenUnits("<0xE2>", METASPACE)).toBe("unknown");
    expect(tokenUnits("ĠCafÃ©", BYTES)).toEqual([0x43, 0x61, 0x66, 0xc3, 0xa9]);
    expect(tokenUnits("€uro", BYTES)).toBe("unknown"); // "€" stands for no byte
  });

  it("uses GPT-2's byte table", () => {
    const dec = byteLevelDecoder();
    expect(dec.size).toBe(256);
    expect([dec.get("Ġ"), dec.get("Ċ"), dec.get("ĉ"), dec.get("Ã"), dec.get("©"), dec.get("!"), dec.get("ÿ"), dec.get("Ā"), dec.get("ł"), dec.get("Ń")]).toEqual([
      32, 10, 9, 0xc3, 0xa9, 33, 255, 0, 0xa0, 0xad,
    ]);
  });
});

describe("alignTokens on hand-made tokenizations", () => {
  it("finds uncased, accent-stripped WordPiece tokens in the original text", () => {
    const text = "Café Münster, 24–10 (Skłodowska-Curie)!";
    const tokens = ["cafe", "mu", "##nster", ",", "24", "–", "10", "(", "sk", "##ł", "##odowska", "-", "curie", ")", "!"];
    expect(alignTokens(text, tokens, WORDPIECE)).toEqual([
      [0, 4], [5, 7], [7, 12], [12, 13], [14, 16], [16, 17], [17, 19], [20, 21], [21, 23], [23, 24], [24, 31], [31, 32], [32, 37], [37, 38], [38, 39],
    ]);
    expect(covered(text, tokens, WORDPIECE).map((c) => c[1]).join("|")).toBe("Café|Mü|nster|,|24|–|10|(|Sk|ł|odowska|-|Curie|)|!");
  });

  it("keeps combining marks with their letter, and ligatures and full-width forms whole", () => {
    expect(covered("Cafe\u0301 au lait", ["cafe", "au", "lait"], WORDPIECE)).toEqual([["cafe", "Cafe\u0301"], ["au", "au"], ["lait", "lait"]]);
    expect(covered("the ﬁnal ﬂight", ["the", "final", "flight"], WORDPIECE)).toEqual([["the", "the"], ["final", "ﬁnal"], ["flight", "ﬂight"]]);
    expect(alignTokens("the ﬁnal", ["the", "f", "##inal"], WORDPIECE)).toEqual([[0, 3], [4, 5], [4, 8]]);
    expect(covered("ＡＢＣ news", ["abc", "news"], WORDPIECE)).toEqual([["abc", "ＡＢＣ"], ["news", "news"]]);
  });

  it("gives unknown tokens the words between their neighbours (astral characters count two UTF-16 units)", () => {
    expect(alignTokens("I ❤️ 😀 Warsaw", ["i", "[UNK]", "[UNK]", "warsaw"], WORDPIECE)).toEqual([[0, 1], [2, 4], [5, 7], [8, 14]]);
    expect(alignTokens("x 😀😀 y", ["x", "[UNK]", "[UNK]", "y"], WORDPIECE)).toEqual([[0, 1], [2, 6], [2, 6], [7, 8]]);
    expect(alignTokens("Warsaw 😀", ["warsaw", "[UNK]"], WORDPIECE)).toEqual([[0, 6], [7, 9]]);
    expect(alignTokens("😀 Warsaw", ["[UNK]", "warsaw"], WORDPIECE)).toEqual([[0, 2], [3, 9]]);
    expect(alignTokens("Warsaw", ["warsaw", "[UNK]"], WORDPIECE)).toEqual([[0, 6], null]);
  });

  it("skips characters the tokenizer dropped", () => {
    expect(alignTokens("foo\u0000bar", ["foo", "##bar"], WORDPIECE)).toEqual([[0, 3], [4, 7]]);
    expect(alignTokens("foo \uFFFD bar", ["foo", "bar"], WORDPIECE)).toEqual([[0, 3], [6, 9]]);
    expect(alignTokens("soft\u00adhyphen", ["softhyphen"], WORDPIECE)).toEqual([[0, 11]]);
  });

  it("treats a token it cannot find as unknown rather than jumping far ahead", () => {
    // "zzz" is nowhere: it takes the gap up to the next token that matches
    expect(alignTokens("alpha beta gamma", ["alpha", "zzz", "gamma"], WORDPIECE)).toEqual([[0, 5], [6, 10], [11, 16]]);
  });

  it("aligns byte-level BPE tokens by UTF-8 bytes, including characters split across tokens", () => {
    const text = "Café in Kraków 😀";
    expect(alignTokens(text, ["Caf", "Ã©", "Ġin", "ĠKrak", "Ã³", "w", "ĠðŁĺ", "Ģ"], BYTES)).toEqual([
      [0, 3], [3, 4], [5, 7], [8, 12], [12, 13], [13, 14], [15, 17], [15, 17],
    ]);
    expect(alignTokens("Café", ["Caf", "Ã", "©"], BYTES)).toEqual([[0, 3], [3, 4], [3, 4]]);
    expect(alignTokens("a\nb", ["a", "Ċ", "b"], BYTES)).toEqual([[0, 1], null, [2, 3]]);
  });

  it("aligns SentencePiece tokens, a bare space marker covering nothing", () => {
    expect(alignTokens("Super Bowl 50 was", ["▁Super", "▁Bowl", "▁", "5", "0", "▁was"], METASPACE)).toEqual([[0, 5], [6, 10], null, [11, 12], [12, 13], [14, 17]]);
  });
});

describe("alignTokens with a real WordPiece tokenizer (@huggingface/transformers) on SQuAD v1.1 dev", () => {
  const squad = readSquadFile(SQUAD_V11);
  const contexts = squad.data.flatMap((a) => a.paragraphs.map((p) => p.context));
  let tokenizer: any;
  let scheme: TokenScheme;

  beforeAll(async () => {
    // every word whole but a few (split into pieces), and two letters left out (their words become [UNK])
    const vocab = buildVocab(contexts, { omitWords: ["broncos", "warsaw", "stadium"], omitChars: ["ł", "ø"], extra: ["bron", "##cos", "war", "##saw"] });
    const dir = mkdtempSync(join(tmpdir(), "tartan-align-"));
    writeModelDir(dir, bertTokenizerJson(vocab), BERT_TOKENIZER_CONFIG, [0], [0]);
    tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    scheme = tokenSchemeOf(tokenizer._tokenizerJSON);
  });

  it("reads the scheme from the loaded tokenizer", () => {
    expect(scheme).toEqual(WORDPIECE);
  });

  it("places the tokens of a real paragraph exactly", () => {
    const text = contexts[0];
    const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
    const c = covered(text, tokens, scheme);
    expect(c.slice(0, 8)).toEqual([
      ["super", "Super"], ["bowl", "Bowl"], ["50", "50"], ["was", "was"], ["an", "an"], ["american", "American"], ["football", "football"], ["game", "game"],
    ]);
    expect(c.slice(33, 37)).toEqual([["denver", "Denver"], ["bron", "Bron"], ["##cos", "cos"], ["defeated", "defeated"]]);
    const spans = alignTokens(text, tokens, scheme);
    expect(spans.slice(33, 36)).toEqual([[177, 183], [184, 188], [188, 191]]);
    expect(text.slice(177, 191)).toBe("Denver Broncos");
    expect(c.filter((x) => x[0] === "levi" || x[0] === "'" || x[0] === "s").slice(0, 3)).toEqual([["levi", "Levi"], ["'", "'"], ["s", "s"]]);
  });

  it("gives [UNK] the whole word holding a character outside the vocabulary", () => {
    const warsaw = squad.data.find((a) => a.title === "Warsaw")!.paragraphs[0].context;
    const { tokens } = tokenizer._tokenizer.encode(warsaw, { add_special_tokens: false });
    const c = covered(warsaw, tokens, scheme);
    const unk = c.filter((x) => x[0] === "[UNK]").map((x) => x[1]);
    expect(unk).toEqual(["Skłodowska", "Władysław"]);
    // WordPiece takes the longest known prefix: "wars" (a word of other paragraphs), then ##a, ##w
    expect(c.slice(0, 13)).toEqual([
      ["one", "One"], ["of", "of"], ["the", "the"], ["most", "most"], ["famous", "famous"], ["people", "people"], ["born", "born"], ["in", "in"],
      ["wars", "Wars"], ["##a", "a"], ["##w", "w"], ["was", "was"], ["maria", "Maria"],
    ]);
  });

  it("places every token of all 2,067 dev paragraphs: spans in order, and each span folds to its token", () => {
    let tokensSeen = 0;
    let unknown = 0;
    const problems: string[] = [];
    const fold = (s: string) => [...s].map(foldChar).join("");
    contexts.forEach((text, p) => {
      const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
      const spans = alignTokens(text, tokens, scheme);
      let prevEnd = 0;
      tokens.forEach((t: string, k: number) => {
        tokensSeen++;
        const s = spans[k];
        if (s === null) return void problems.push(`${p}:${k} ${t} has no span`);
        if (s[0] < prevEnd) problems.push(`${p}:${k} ${t} starts at ${s[0]} before ${prevEnd}`);
        prevEnd = s[1];
        const piece = text.slice(s[0], s[1]);
        if (t === "[UNK]") {
          unknown++;
          if (!/[łø]/i.test(piece) || /\s/.test(piece)) problems.push(`${p}:${k} [UNK] covers ${JSON.stringify(piece)}`);
        } else if (fold(piece) !== fold(t.replace(/^##(?=.)/, ""))) problems.push(`${p}:${k} ${t} covers ${JSON.stringify(piece)}`);
      });
    });
    expect(problems).toEqual([]);
    expect(tokensSeen).toBeGreaterThan(300_000);
    expect(unknown).toBeGreaterThan(10);
  });
});

describe("alignTokens with a real byte-level BPE tokenizer (RoBERTa style, @huggingface/transformers) on SQuAD v1.1 dev", () => {
  const squad = readSquadFile(SQUAD_V11);
  const contexts = squad.data.flatMap((a) => a.paragraphs.map((p) => p.context));
  let tokenizer: any;
  let scheme: TokenScheme;

  beforeAll(async () => {
    // 600 merges learnt on the Super Bowl 50 article and one Warsaw paragraph: most other words split
    const { vocab, merges } = trainByteBpe([...squad.data[0].paragraphs.map((p) => p.context), squadPassage("Warsaw", 1).text], 600);
    const dir = mkdtempSync(join(tmpdir(), "tartan-align-bpe-"));
    writeModelDir(dir, robertaTokenizerJson(vocab, merges), ROBERTA_TOKENIZER_CONFIG, [0], [0], "roberta");
    tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    scheme = tokenSchemeOf(tokenizer._tokenizerJSON);
  });

  it("reads the scheme from the loaded tokenizer", () => {
    expect(scheme).toEqual(BYTES);
  });

  it("places characters split into several byte tokens, and gives a lone space token no span", () => {
    const text = "Skłodowska 😀 Frédéric";
    const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
    expect(covered(text, tokens, scheme)).toEqual([
      ["S", "S"], ["k", "k"], ["Å", "ł"], ["Ĥ", "ł"], ["od", "od"], ["ow", "ow"], ["s", "s"], ["k", "k"], ["a", "a"],
      ["Ġ", null], ["ð", "😀"], ["Ł", "😀"], ["ĺ", "😀"], ["Ģ", "😀"],
      ["ĠF", "F"], ["r", "r"], ["Ã©", "é"], ["d", "d"], ["Ã©", "é"], ["r", "r"], ["ic", "ic"],
    ]);
  });

  it("places every token of every other dev paragraph (1,034): spans in order, each span's bytes holding the token's", () => {
    const dec = byteLevelDecoder();
    let tokensSeen = 0;
    let midCharacter = 0;
    const problems: string[] = [];
    contexts.forEach((text, p) => {
      if (p % 2 === 1) return; // tokenizers.js byte-level BPE encodes ~3 ms per paragraph: half the file is enough
      const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
      const spans = alignTokens(text, tokens, scheme);
      let prevStart = 0;
      tokens.forEach((t: string, k: number) => {
        tokensSeen++;
        const bytes = Buffer.from([...t].map((c) => dec.get(c)!).filter((b) => ![9, 10, 11, 12, 13, 32].includes(b)));
        const s = spans[k];
        if (s === null) {
          if (bytes.length > 0) problems.push(`${p}:${k} ${t} has no span`);
          return;
        }
        if (s[0] < prevStart) problems.push(`${p}:${k} ${t} starts at ${s[0]} before ${prevStart}`);
        prevStart = s[0];
        const piece = Buffer.from(text.slice(s[0], s[1]), "utf8");
        if (!piece.includes(bytes)) problems.push(`${p}:${k} ${t} covers ${JSON.stringify(text.slice(s[0], s[1]))}`);
        if (/^[ \t\n\r]|[ \t\n\r]$/.test(text.slice(s[0], s[1]))) problems.push(`${p}:${k} ${t} covers whitespace`);
        if (piece.length > bytes.length) midCharacter++;
      });
    });
    expect(problems).toEqual([]);
    expect(tokensSeen).toBeGreaterThan(250_000);
    expect(midCharacter).toBeGreaterThan(1000);
  });
});

describe("alignTokens with a real SentencePiece Unigram tokenizer (XLM-R style, NFKC, @huggingface/transformers) on SQuAD v1.1 dev", () => {
  const squad = readSquadFile(SQUAD_V11);
  const contexts = squad.data.flatMap((a) => a.paragraphs.map((p) => p.context));
  let tokenizer: any;
  let scheme: TokenScheme;

  beforeAll(async () => {
    const vocab = unigramVocab(contexts, { omitWords: ["Broncos", "Warsaw"], omitChars: ["ł"] });
    const dir = mkdtempSync(join(tmpdir(), "tartan-align-spm-"));
    writeModelDir(dir, unigramTokenizerJson(vocab), XLMR_TOKENIZER_CONFIG, [0], [0], "xlm-roberta");
    tokenizer = await AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    scheme = tokenSchemeOf(tokenizer._tokenizerJSON);
  });

  it("reads the scheme from the loaded tokenizer", () => {
    expect(scheme).toEqual(METASPACE);
  });

  it("places ▁-marked pieces, NFKC-normalized ligatures, and lone ▁ tokens of doubled spaces", () => {
    const text = "the ﬁnal  Café 😀";
    const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
    expect(covered(text, tokens, scheme)).toEqual([["▁the", "the"], ["▁final", "ﬁnal"], ["▁", null], ["▁Café", "Café"], ["▁", null], ["😀", "😀"]]);
    const warsaw = squadPassage("Warsaw", 1).text;
    const w = tokenizer._tokenizer.encode(warsaw, { add_special_tokens: false }).tokens;
    expect(covered(warsaw, w, scheme).slice(8, 16)).toEqual([
      ["▁Wars", "Wars"], ["a", "a"], ["w", "w"], ["▁was", "was"], ["▁Maria", "Maria"], ["▁S", "S"], ["k", "k"], ["ł", "ł"],
    ]);
  });

  it("places every token of every fourth dev paragraph (517): spans in order, each span folds to its piece", () => {
    const fold = (s: string) => [...s].map(foldChar).join("");
    let tokensSeen = 0;
    const problems: string[] = [];
    contexts.forEach((text, p) => {
      if (p % 4 !== 0) return; // tokenizers.js Unigram encodes ~4 ms per paragraph
      const { tokens } = tokenizer._tokenizer.encode(text, { add_special_tokens: false });
      const spans = alignTokens(text, tokens, scheme);
      let prevEnd = 0;
      tokens.forEach((t: string, k: number) => {
        tokensSeen++;
        const s = spans[k];
        const surface = t.replaceAll("▁", "");
        if (s === null) {
          if (surface.trim() !== "") problems.push(`${p}:${k} ${JSON.stringify(t)} has no span`); // "▁", "\n" cover no character
          return;
        }
        if (s[0] < prevEnd) problems.push(`${p}:${k} ${t} starts at ${s[0]} before ${prevEnd}`);
        prevEnd = s[1];
        if (fold(text.slice(s[0], s[1])) !== fold(surface)) problems.push(`${p}:${k} ${t} covers ${JSON.stringify(text.slice(s[0], s[1]))}`);
      });
    });
    expect(problems).toEqual([]);
    expect(tokensSeen).toBeGreaterThan(60_000);
  });
});
