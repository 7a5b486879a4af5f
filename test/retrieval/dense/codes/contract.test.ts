// The code-type contract (./contract.ts) on every code type the registry holds
// (src/retrieval/dense/codes/registry.ts), each set up by its line in ./cases.ts; the guard fails naming
// a registered code type with no case, or a case naming nothing registered.

import { describe, expect, it } from "vitest";
import { codeTypes } from "../../../../src/retrieval/dense/codes/registry.js";
import { CODE_CASES } from "./cases.js";
import { codeTypeContract } from "./contract.js";

for (const name of codeTypes.names()) {
  const c = CODE_CASES[name];
  if (c) describe(`code type ${name}`, () => codeTypeContract(name, c));
}

describe("the code-type cases", () => {
  it("cover every registered code type and name only registered ones", () => {
    expect(codeTypes.names().filter((n) => !(n in CODE_CASES))).toEqual([]);
    expect(Object.keys(CODE_CASES).filter((n) => !codeTypes.has(n))).toEqual([]);
  });

  it("an unregistered code type is refused, naming the known ones", () => {
    expect(() => codeTypes.get("lvq", "quantize")).toThrow('quantize: unknown code type "lvq" (known: binary, pq, pq4, int8, rabitq)');
  });
});
