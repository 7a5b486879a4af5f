// One line per registered code type of a compressed dense index (src/retrieval/dense/codes/registry.ts):
// its training parameters, its code size for `dim` dimensions and its brute-force reference
// (./references.ts). ./contract.test.ts runs the contract (./contract.ts) on each, and fails naming a
// registered code type with no line here, or a line naming nothing registered.

import { binaryReference, int8Reference, pq4Reference, pqReference, rabitqReference, type ReferenceFn } from "./references.js";

/** How one code type is set up for the contract. */
export interface CodeCase {
  /** Extra training parameters (sub-spaces, …). */
  params?: { pqM?: number };
  /** Bytes of one row's code at `dim` dimensions. */
  codeBytes: (dim: number) => number;
  reference: ReferenceFn;
}

export const CODE_CASES: Record<string, CodeCase> = {
  binary: { codeBytes: (dim) => Math.ceil(dim / 128) * 16, reference: binaryReference },
  pq: { params: { pqM: 8 }, codeBytes: () => 8, reference: pqReference },
  pq4: { params: { pqM: 16 }, codeBytes: () => 8, reference: pq4Reference },
  int8: { codeBytes: () => 0, reference: int8Reference },
  rabitq: { codeBytes: (dim) => Math.ceil(dim / 64) * 8 + 8, reference: rabitqReference },
};
