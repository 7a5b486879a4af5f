// The builder's raw-token table: lookups by text range, growth and rehashing, clearing.
import { describe, expect, it } from "vitest";
import { TokenTable } from "../../../src/retrieval/bm25/token-table.js";

describe("TokenTable", () => {
  it("finds tokens by range through growth and rehashing, and tells equal hashes apart", () => {
    const table = new TokenTable();
    const words = Array.from({ length: 200_000 }, (_, i) => `w${i.toString(36)}`);
    words.forEach((w, i) => table.set(w, TokenTable.hash(w, 0, w.length), i));
    expect(table.size).toBe(200_000);
    const text = `  ${words.join(" ")}  `;
    let at = 2;
    for (let i = 0; i < words.length; i++) {
      const end = at + words[i].length;
      expect(table.get(text, at, end, TokenTable.hash(text, at, end))).toBe(i);
      at = end + 1;
    }
    // Same hash, different text (forced): not found.
    const h = TokenTable.hash("w0", 0, 2);
    expect(table.get("zz", 0, 2, h)).toBeUndefined();
    expect(table.get("w0x", 0, 3, TokenTable.hash("w0x", 0, 3))).toBeUndefined();
    table.clear();
    expect(table.size).toBe(0);
    expect(table.get("w0", 0, 2, h)).toBeUndefined();
    table.set("w0", h, 7);
    expect(table.get(" w0 ", 1, 3, h)).toBe(7);
  });
});

describe("the tokenizer's token hashes", () => {
  it("equal TokenTable.hash of the token wherever standardTokens passes one", async () => {
    const { standardTokens } = await import("../../../src/retrieval/bm25/word-break.js");
    const text = `The U.S.A. don't 1,000.5 a_b naïve Ünïcode 東京 ${"x".repeat(300)} end. Tom's 42nd #1 z`;
    const seen: [string, number | undefined, number][] = [];
    standardTokens(text, (start, end, hash) => seen.push([text.slice(start, end), hash, TokenTable.hash(text, start, end)]));
    const hashed = seen.filter(([, h]) => h !== undefined);
    expect(hashed.map(([t]) => t)).toEqual(["The", "x".repeat(45), "42nd", "1", "z"]);
    for (const [, h, want] of hashed) expect(h).toBe(want);
  });
});
