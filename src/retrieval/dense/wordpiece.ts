// BERT's WordPiece tokenizer from a `vocab.txt` (one token a line, the line number is its id), as the
// BERT-style ONNX encoders (DPR, e5, bge, Contriever) were trained with: the basic tokenizer (drops NUL,
// U+FFFD and control characters, turns whitespace into spaces, puts spaces around CJK ideographs, splits
// on whitespace, lower-cases and strips accents (NFD, no Mn marks) when the model is uncased, splits off
// every punctuation character), then greedy longest-match-first WordPiece with `##` continuations ([UNK]
// for a word longer than 100 characters or one the vocabulary cannot cover), then [CLS] … [SEP],
// truncated to the maximum length. Control characters are every Unicode category C but tab, newline and
// carriage return, as Hugging Face's BertNormalizer has it (Google's original drops only Cc and Cf).
// Literal special tokens in a text ("[SEP]") are ordinary text here, as in Google's original.

import { readFileSync, statSync } from "node:fs";

/** How a vocabulary tokenizes. */
export interface WordPieceOptions {
  /** Lower-case (uncased models, e.g. bert-base-uncased, DPR, e5, bge-en); default true. */
  lowercase?: boolean;
  /** Strip accents (NFD, drop Mn marks); default: as `lowercase`. */
  stripAccents?: boolean;
  /** Tokens of an encoded text, [CLS] and [SEP] included; longer texts are truncated. Default 512. */
  maxLength?: number;
  /** A longer word is one [UNK]; default 100. */
  maxCharsPerWord?: number;
}

/** One text encoded: token ids with [CLS] first and [SEP] last. */
export interface Encoded {
  ids: number[];
  /** True when pieces were dropped to fit the maximum length. */
  truncated: boolean;
}

const SPECIAL_NAMES = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] as const;

const CONTROL = /^\p{C}$/u;
const SPACE_SEPARATOR = /^\p{Zs}$/u;
const PUNCTUATION = /^\p{P}$/u;
const MARK_NONSPACING = /\p{Mn}/gu;

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || SPACE_SEPARATOR.test(ch);
}

function isControl(ch: string): boolean {
  if (ch === "\t" || ch === "\n" || ch === "\r") return false;
  return CONTROL.test(ch);
}

/** ASCII symbols count as punctuation as in BERT ($, +, <, =, >, ^, `, |, ~), and every category P. */
function isPunctuation(ch: string, cp: number): boolean {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return PUNCTUATION.test(ch);
}

/** The CJK Unified Ideographs blocks BERT splits character by character. */
function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** A WordPiece vocabulary and BERT's tokenization with it. */
export class WordPieceTokenizer {
  readonly lowercase: boolean;
  readonly stripAccents: boolean;
  readonly maxLength: number;
  readonly maxCharsPerWord: number;
  readonly padId: number;
  readonly unkId: number;
  readonly clsId: number;
  readonly sepId: number;

  /** `vocab`: token → id; `source` names the vocabulary in errors. */
  constructor(
    private readonly vocab: ReadonlyMap<string, number>,
    options: WordPieceOptions = {},
    readonly source = "vocabulary",
  ) {
    this.lowercase = options.lowercase ?? true;
    this.stripAccents = options.stripAccents ?? this.lowercase;
    this.maxLength = options.maxLength ?? 512;
    this.maxCharsPerWord = options.maxCharsPerWord ?? 100;
    if (!Number.isInteger(this.maxLength) || this.maxLength < 2) throw new Error(`${source}: maxLength must be an integer of at least 2 ([CLS] and [SEP]), not ${this.maxLength}`);
    const ids = SPECIAL_NAMES.map((name) => {
      const id = vocab.get(name);
      if (id === undefined) throw new Error(`${source}: the vocabulary has no ${name} token`);
      return id;
    });
    [this.padId, this.unkId, this.clsId, this.sepId] = ids;
  }

  /** Reads `vocab.txt` (UTF-8, one token a line; a line's number from 0 is its id; a repeated token keeps its last line, as BERT's loader does). */
  static fromFile(file: string, options: WordPieceOptions = {}): WordPieceTokenizer {
    let text: string;
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
      text = readFileSync(file, "utf8");
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : err instanceof Error ? err.message : String(err);
      throw new Error(`vocab file ${file}: cannot read (${why})`);
    }
    const lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    if (lines.length === 0) throw new Error(`vocab file ${file}: empty (a WordPiece vocab.txt has one token a line)`);
    const vocab = new Map<string, number>();
    lines.forEach((line, i) => vocab.set(line.endsWith("\r") ? line.slice(0, -1) : line, i));
    return new WordPieceTokenizer(vocab, options, `vocab file ${file}`);
  }

  /** Tokens in the vocabulary (distinct). */
  get size(): number {
    return this.vocab.size;
  }

  /** The token of every id, in id order (an id no token keeps, a repeated line's earlier one, is ""). */
  tokens(): string[] {
    let n = 0;
    for (const id of this.vocab.values()) if (id + 1 > n) n = id + 1;
    const out = new Array<string>(n).fill("");
    for (const [token, id] of this.vocab) out[id] = token;
    return out;
  }

  /** The id of a token, or undefined. */
  id(token: string): number | undefined {
    return this.vocab.get(token);
  }

  /** BERT's basic tokenizer: the words WordPiece is applied to. */
  basicTokens(text: string): string[] {
    let cleaned = "";
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
      if (isWhitespace(ch)) cleaned += " ";
      else if (isCjk(cp)) cleaned += ` ${ch} `;
      else cleaned += ch;
    }
    const out: string[] = [];
    for (let word of cleaned.split(/\s+/u)) {
      if (word === "") continue;
      if (this.lowercase) word = word.toLowerCase();
      if (this.stripAccents) word = word.normalize("NFD").replace(MARK_NONSPACING, "");
      let cur = "";
      for (const ch of word) {
        if (isPunctuation(ch, ch.codePointAt(0)!)) {
          if (cur !== "") out.push(cur);
          out.push(ch);
          cur = "";
        } else cur += ch;
      }
      if (cur !== "") out.push(cur);
    }
    return out;
  }

  /** Greedy longest-match-first WordPiece ids of one basic token ([UNK] alone when it cannot be covered or is too long). */
  wordPieces(word: string, out: number[] = []): number[] {
    const chars = Array.from(word);
    if (chars.length > this.maxCharsPerWord) {
      out.push(this.unkId);
      return out;
    }
    const mark = out.length;
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        const piece = chars.slice(start, end).join("");
        found = this.vocab.get(start > 0 ? `##${piece}` : piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) {
        out.length = mark;
        out.push(this.unkId);
        return out;
      }
      out.push(found);
      start = end;
    }
    return out;
  }

  /** [CLS], the text's WordPiece ids (the first `maxLength - 2`), [SEP]. */
  encode(text: string): Encoded {
    const pieces: number[] = [];
    for (const word of this.basicTokens(text)) this.wordPieces(word, pieces);
    const room = this.maxLength - 2;
    const truncated = pieces.length > room;
    if (truncated) pieces.length = room;
    return { ids: [this.clsId, ...pieces, this.sepId], truncated };
  }
}
