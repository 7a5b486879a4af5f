// A fast random orthogonal rotation for RaBitQ codes (./codes/rabitq.ts): rounds of random sign flips,
// a normalised fast Walsh–Hadamard transform over a power-of-two window (the first `h` coordinates in
// even rounds, the last `h` in odd ones, h the largest power of two ≤ the padded dimension) and, when the
// padded dimension is not a power of two, a Kac walk step that mixes coordinate i with i + half (a 45°
// rotation of each pair). Every step is orthogonal, so the whole is; it costs O(D log D) a vector instead
// of a stored D × D matrix's D² (the FHT-Kac construction of RaBitQ-Library's rotators, written here).
// The signs are the rotation's only state (`rounds × dim` of ±1, stored in quantizer.bin).

import { seededRandom } from "../../util/random.js";

/** Rounds of sign flips and transforms. */
export const ROTATION_ROUNDS = 4;

/** The padded dimension a rotation works in: a multiple of 64 (whole 8-byte groups of sign bits). */
export function paddedDim(dim: number): number {
  return Math.ceil(dim / 64) * 64;
}

/** Random signs (±1) for `rounds` rounds over `dim` padded coordinates, from `seed`. */
export function rotationSigns(dim: number, seed: number, rounds = ROTATION_ROUNDS): Float32Array {
  const r = seededRandom(seed);
  const out = new Float32Array(rounds * dim);
  for (let i = 0; i < out.length; i++) out[i] = r() < 0.5 ? -1 : 1;
  return out;
}

/** In-place normalised Walsh–Hadamard transform of `x[at … at + h − 1]` (h a power of two). */
function fht(x: Float32Array, at: number, h: number): void {
  for (let len = 1; len < h; len <<= 1)
    for (let i = at; i < at + h; i += len << 1)
      for (let j = i; j < i + len; j++) {
        const a = x[j];
        const b = x[j + len];
        x[j] = a + b;
        x[j + len] = a - b;
      }
  const s = 1 / Math.sqrt(h);
  for (let i = at; i < at + h; i++) x[i] *= s;
}

/** The orthogonal rotation of `dim` (padded) coordinates that `signs` define. */
export class Rotation {
  readonly rounds: number;
  private readonly h: number;

  constructor(
    readonly dim: number,
    readonly signs: Float32Array,
  ) {
    if (dim % 64 !== 0 || dim <= 0) throw new Error(`a rotation needs a positive multiple of 64 dimensions, not ${dim}`);
    if (signs.length % dim !== 0 || signs.length === 0) throw new Error(`rotation signs: ${signs.length} values are not whole rounds of ${dim}`);
    this.rounds = signs.length / dim;
    let h = 1;
    while (h * 2 <= dim) h *= 2;
    this.h = h;
  }

  /** Rotates `x` (its first `x.length ≤ dim` coordinates from `xo`, the rest zero) into `out` (`dim` values). */
  apply(x: Float32Array, xo: number, n: number, out: Float32Array): Float32Array {
    const { dim, h, signs } = this;
    out.fill(0);
    for (let i = 0; i < n; i++) out[i] = x[xo + i];
    const half = dim >> 1;
    const kac = h !== dim;
    for (let r = 0; r < this.rounds; r++) {
      const so = r * dim;
      for (let i = 0; i < dim; i++) out[i] *= signs[so + i];
      fht(out, r % 2 === 0 ? 0 : dim - h, h);
      if (kac) {
        for (let i = 0; i < half; i++) {
          const a = out[i];
          const b = out[i + half];
          out[i] = (a + b) * Math.SQRT1_2;
          out[i + half] = (a - b) * Math.SQRT1_2;
        }
      }
    }
    return out;
  }
}
