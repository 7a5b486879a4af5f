// Token → character alignment. @huggingface/transformers gives tokens and ids but no offset mapping,
// so each token is located in the original passage here: token surfaces (markers like `##`, `▁`, `Ġ`
// removed) and the text are folded alike (NFKD, lowercase, no combining marks, no whitespace) or, for
// byte-level BPE, compared as UTF-8 bytes; tokens are then matched left to right. Unknown tokens
// ([UNK], byte fallbacks) take the text between their matched neighbours. Offsets are UTF-16 indexes
// of the original string, [start, end).

/** How a tokenizer writes token surfaces. */
export interface TokenScheme {
  /** GPT-2 style byte-level tokens (each character stands for one byte). */
  byteLevel: boolean;
  /** Continuing-subword prefix to strip (`##` for WordPiece). */
  prefix?: string;
  /** End-of-word suffix to strip (`</w>` for some BPE models). */
  suffix?: string;
  /** Character standing for a space (`▁` for SentencePiece / Metaspace). */
  spaceMarker?: string;
  /** The unknown token, which covers text whose characters the vocabulary lacks. */
  unk?: string;
}

/** A token's place in the text: UTF-16 [start, end), or null when it covers no character. */
export type TokenSpan = readonly [number, number] | null;

interface Unit {
  code: number;
  start: number;
  end: number;
}

function collectTypes(node: unknown, out: Set<string>, configs: Record<string, unknown>[]): void {
  if (node === null || typeof node !== "object") return;
  const n = node as Record<string, unknown>;
  if (typeof n.type === "string") {
    out.add(n.type);
    configs.push(n);
  }
  for (const key of ["pretokenizers", "decoders", "processors", "normalizers"]) {
    const list = n[key];
    if (Array.isArray(list)) for (const item of list) collectTypes(item, out, configs);
  }
}

/** The token scheme of a tokenizer, read from its `tokenizer.json` content. */
export function tokenSchemeOf(tokenizerJson: unknown): TokenScheme {
  const json = (tokenizerJson ?? {}) as Record<string, unknown>;
  const model = (json.model ?? {}) as Record<string, unknown>;
  const types = new Set<string>();
  const configs: Record<string, unknown>[] = [];
  collectTypes(json.pre_tokenizer, types, configs);
  collectTypes(json.decoder, types, configs);
  const scheme: TokenScheme = { byteLevel: types.has("ByteLevel") };
  const prefix = model.continuing_subword_prefix ?? (model.type === "WordPiece" ? "##" : undefined);
  if (typeof prefix === "string" && prefix !== "") scheme.prefix = prefix;
  if (typeof model.end_of_word_suffix === "string" && model.end_of_word_suffix !== "") scheme.suffix = model.end_of_word_suffix;
  const metaspace = configs.find((c) => c.type === "Metaspace");
  if (metaspace !== undefined) scheme.spaceMarker = typeof metaspace.replacement === "string" ? metaspace.replacement : "▁";
  else if (model.type === "Unigram") scheme.spaceMarker = "▁";
  if (typeof model.unk_token === "string") scheme.unk = model.unk_token;
  else if (model.type === "Unigram" && typeof model.unk_id === "number" && Array.isArray(model.vocab)) {
    const entry = model.vocab[model.unk_id];
    if (Array.isArray(entry) && typeof entry[0] === "string") scheme.unk = entry[0];
  }
  return scheme;
}

// ---- folding ---------------------------------------------------------------------------------------

const foldCache = new Map<string, string>();

/** A character as compared: NFKD, lowercase, without combining marks, whitespace, control or format characters. */
export function foldChar(c: string): string {
  let f = foldCache.get(c);
  if (f === undefined) {
    f = c
      .normalize("NFKD")
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[\p{M}\s\p{Cc}\p{Cf}]/gu, "");
    foldCache.set(c, f);
  }
  return f;
}

const IS_MARK = /^\p{M}$/u;
const IS_SPACE = /^\s$/u;

function charUnits(text: string): Unit[] {
  const units: Unit[] = [];
  let i = 0;
  for (const c of text) {
    const end = i + c.length;
    if (!IS_SPACE.test(c)) {
      const f = foldChar(c);
      if (f === "") {
        // a combining mark belongs to the character before it
        const last = units[units.length - 1];
        if (IS_MARK.test(c) && last !== undefined && last.end === i) {
          for (let k = units.length - 1; k >= 0 && units[k].end === i; k--) units[k].end = end;
        }
      } else {
        for (const fc of f) units.push({ code: fc.codePointAt(0)!, start: i, end });
      }
    }
    i = end;
  }
  return units;
}

const ASCII_SPACE = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]);

function byteUnits(text: string): Unit[] {
  const units: Unit[] = [];
  let i = 0;
  for (const c of text) {
    const end = i + c.length;
    const code = c.charCodeAt(0);
    if (code < 0x80) {
      if (!ASCII_SPACE.has(code)) units.push({ code, start: i, end });
    } else {
      for (const b of Buffer.from(c, "utf8")) units.push({ code: b, start: i, end });
    }
    i = end;
  }
  return units;
}

let byteDecoder: Map<string, number> | undefined;

/** GPT-2's byte ↔ character table, character → byte. */
export function byteLevelDecoder(): Map<string, number> {
  if (byteDecoder === undefined) {
    const bs: number[] = [];
    for (let b = 33; b <= 126; b++) bs.push(b);
    for (let b = 161; b <= 172; b++) bs.push(b);
    for (let b = 174; b <= 255; b++) bs.push(b);
    const cs = [...bs];
    let n = 0;
    for (let b = 0; b < 256; b++) {
      if (!bs.includes(b)) {
        bs.push(b);
        cs.push(256 + n++);
      }
    }
    byteDecoder = new Map(bs.map((b, k) => [String.fromCodePoint(cs[k]), b]));
  }
  return byteDecoder;
}

const BYTE_FALLBACK = /^<0x[0-9A-Fa-f]{2}>$/;

/** The units a token should match, or "unknown" for tokens that stand for text they do not spell. */
export function tokenUnits(token: string, scheme: TokenScheme): number[] | "unknown" {
  if (scheme.unk !== undefined && token === scheme.unk) return "unknown";
  if (scheme.byteLevel) {
    const dec = byteLevelDecoder();
    const out: number[] = [];
    for (const c of token) {
      const b = dec.get(c);
      if (b === undefined) return "unknown";
      if (!ASCII_SPACE.has(b)) out.push(b);
    }
    return out;
  }
  if (BYTE_FALLBACK.test(token)) return "unknown";
  let s = token;
  if (scheme.prefix !== undefined && s.startsWith(scheme.prefix) && s.length > scheme.prefix.length) s = s.slice(scheme.prefix.length);
  if (scheme.suffix !== undefined && s.endsWith(scheme.suffix)) s = s.slice(0, s.length - scheme.suffix.length);
  if (scheme.spaceMarker !== undefined) s = s.split(scheme.spaceMarker).join(" ");
  const out: number[] = [];
  for (const c of s) for (const fc of foldChar(c)) out.push(fc.codePointAt(0)!);
  return out;
}

function matchesAt(units: Unit[], pattern: number[], at: number): boolean {
  if (at + pattern.length > units.length) return false;
  for (let k = 0; k < pattern.length; k++) if (units[at + k].code !== pattern[k]) return false;
  return true;
}

/** Characters a token may skip before it matches (text the tokenizer dropped). */
const LOOKAHEAD = 16;
/** How far the token after unknown tokens may be looked for. */
const UNKNOWN_LOOKAHEAD = 1024;

function assignGap(spans: TokenSpan[], pending: number[], units: Unit[], from: number, to: number): void {
  if (from >= to) {
    for (const k of pending) spans[k] = null;
    return;
  }
  // words of the gap: units whose characters touch
  const groups: [number, number][] = [];
  for (let u = from; u < to; u++) {
    const last = groups[groups.length - 1];
    if (last !== undefined && units[u].start <= last[1]) last[1] = Math.max(last[1], units[u].end);
    else groups.push([units[u].start, units[u].end]);
  }
  if (groups.length === pending.length) pending.forEach((k, g) => (spans[k] = groups[g]));
  else for (const k of pending) spans[k] = [units[from].start, units[to - 1].end];
}

/**
 * Where each token of `tokens` (the tokenization of `text`, without special tokens) lies in `text`:
 * UTF-16 [start, end) per token, null for tokens that cover no character. Tokens split inside one
 * character (byte-level BPE, ligatures) share that character.
 */
export function alignTokens(text: string, tokens: readonly string[], scheme: TokenScheme): TokenSpan[] {
  const units = scheme.byteLevel ? byteUnits(text) : charUnits(text);
  const spans: TokenSpan[] = new Array(tokens.length).fill(null);
  let pos = 0;
  let pending: number[] = [];
  let pendingFrom = 0;
  tokens.forEach((token, k) => {
    const pattern = tokenUnits(token, scheme);
    if (pattern !== "unknown" && pattern.length === 0) return; // a bare space marker: no character
    let at = -1;
    if (pattern !== "unknown") {
      const limit = Math.min(units.length - pattern.length, pos + (pending.length > 0 ? UNKNOWN_LOOKAHEAD : LOOKAHEAD));
      for (let j = pos; j <= limit; j++) {
        if (matchesAt(units, pattern, j)) {
          at = j;
          break;
        }
      }
    }
    if (at < 0) {
      if (pending.length === 0) pendingFrom = pos;
      pending.push(k);
      return;
    }
    const p = pattern as number[];
    if (pending.length > 0) {
      assignGap(spans, pending, units, pendingFrom, at);
      pending = [];
    }
    spans[k] = [units[at].start, units[at + p.length - 1].end];
    pos = at + p.length;
  });
  if (pending.length > 0) assignGap(spans, pending, units, pendingFrom, units.length);
  return spans;
}
