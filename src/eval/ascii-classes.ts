// The byte classes of `normalize_answer` on ASCII text (./normalize.ts), shared with the WebAssembly
// normalizer (./string-kernel.ts), which reads the same two tables from its memory: what each byte
// does (a word byte, whitespace, punctuation, another ASCII byte, or non-ASCII) and a word byte's
// lower-case form.

export const OTHER = 0;
export const WORD = 1;
export const SPACE = 2;
export const PUNCT = 3;
export const NON_ASCII = 4;
/** Each byte's class. */
export const CLASS = new Uint8Array(256).fill(NON_ASCII);
/** Each ASCII byte's lower-case form. */
export const LOWER = new Uint8Array(256);
for (let c = 0; c < 128; c++) {
  CLASS[c] = OTHER;
  LOWER[c] = c >= 0x41 && c <= 0x5a ? c + 0x20 : c;
}
for (const ch of "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~") CLASS[ch.charCodeAt(0)] = PUNCT;
for (let c = 0x30; c <= 0x39; c++) CLASS[c] = WORD;
for (let c = 0x61; c <= 0x7a; c++) CLASS[c] = WORD;
for (let c = 0x41; c <= 0x5a; c++) CLASS[c] = WORD;
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20]) CLASS[c] = SPACE;
/** The lower-case form of a word byte (letter or digit), 0 for any other byte: one load a byte inside words. */
export const WORD_LOWER = new Uint8Array(256);
for (let c = 0; c < 128; c++) if (CLASS[c] === WORD) WORD_LOWER[c] = LOWER[c];
