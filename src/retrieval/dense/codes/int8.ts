// "int8" codes of a compressed dense index: no codes at all (codes.bin holds rows of 0 bytes). Every row
// of a query's probed lists is a candidate, rescored with the int8 rows of rescore.i8 as every code
// type's shortlist is (../ivf-search.ts).

import { allPositions, type Codec, type CodeType, type ListCodes, type ListScan, type ListSource } from "./code-type.js";

class Int8Lists implements ListCodes {
  constructor(private readonly offsets: Float64Array) {}

  share(): null {
    return null;
  }

  candidates(s: ListScan): Float64Array {
    return allPositions(this.offsets, s.lists, s.total);
  }
}

class Int8Codec implements Codec {
  readonly kind = "int8";
  readonly codeBytes = 0;
  readonly header = { pqM: 0 };
  readonly stored = new Float32Array(0);

  constructor(readonly dim: number) {}

  encode(xs: Float32Array): Uint8Array {
    return new Uint8Array((xs.length / this.dim) * this.codeBytes);
  }

  openLists(src: ListSource): ListCodes {
    src.read(); // its header still says the index's rows and build
    return new Int8Lists(src.offsets);
  }

  attachLists(_share: unknown, _slot: number, offsets: Float64Array): ListCodes {
    return new Int8Lists(offsets);
  }
}

/** int8: the probed lists' int8 rows themselves, every one rescored. */
export const int8Codes: CodeType<"int8"> = {
  name: "int8",
  version: 1,
  summary: "no codes: every vector of the probed lists is scored with its int8 row",
  train: (t) => new Int8Codec(t.coarse.dim),
  storedFloats: () => 0,
  load: (dim) => new Int8Codec(dim),
};
