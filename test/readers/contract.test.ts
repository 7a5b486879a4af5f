// Runs the reader contract (./contract.ts) on every reader registered in READERS, each set up by its
// line in ./cases.ts; a reader registered without a case, or a case naming no reader, fails the guard.

import { describe, expect, it } from "vitest";
import { READERS } from "../../src/readers/open.js";
import { READER_CASES } from "./cases.js";
import { readerContract } from "./contract.js";

describe("every registered reader has a contract case", () => {
  it("and every case names a registered reader", () => {
    expect(READERS.names().filter((n) => !(n in READER_CASES))).toEqual([]);
    expect(Object.keys(READER_CASES).filter((n) => !READERS.has(n))).toEqual([]);
  });
});

for (const name of READERS.names()) {
  const setup = READER_CASES[name];
  if (setup) describe(`reader ${name}`, () => readerContract(name, setup));
}
