// Runs the encoder contract (./contract.ts) on every encoder type registered in ENCODERS, each set up by
// its line in ./cases.ts; a type registered without a case, or a case naming no type, fails the guard.

import { describe, expect, it } from "vitest";
import { createEncoder, ENCODERS, type EncoderSpec } from "../../../../src/retrieval/dense/encoder.js";
import { ENCODER_CASES } from "./cases.js";
import { encoderContract } from "./contract.js";

describe("every registered encoder type has a contract case", () => {
  it("and every case names a registered type; an unknown type is refused by name", async () => {
    expect(ENCODERS.names().filter((n) => !(n in ENCODER_CASES))).toEqual([]);
    expect(Object.keys(ENCODER_CASES).filter((n) => !ENCODERS.has(n))).toEqual([]);
    await expect(createEncoder({ type: "word2vec" } as unknown as EncoderSpec)).rejects.toThrow('unknown encoder type "word2vec"');
  });
});

for (const name of ENCODERS.names()) {
  const setup = ENCODER_CASES[name];
  if (setup) describe(`encoder ${name}`, () => encoderContract(name, setup));
}
