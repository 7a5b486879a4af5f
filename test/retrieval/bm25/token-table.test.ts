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
