// The BM25 postings writer: one term's postings encoded as the format says (./format.ts's header
// comment): with docFreq ≥ BLOCK, the term's score bound, skip entries and bit-packed full blocks, then
// the varint tail; rarer terms as varints only.

import { BLOCK, ByteSink, bitWidth, packBlock } from "./codec.js";

const SCRATCH_D = new Int32Array(BLOCK);
const SCRATCH_T = new Int32Array(BLOCK);

/** Encodes one term's postings, fed in increasing doc order. */
export class TermEncoder {
  private readonly blocks = new ByteSink(1 << 16);
  private readonly skips = new ByteSink(1 << 10);
  private readonly tail = new ByteSink(1 << 10);
  private readonly docs = new Int32Array(BLOCK);
  private readonly tfs = new Int32Array(BLOCK);
  private readonly xs = new Float32Array(BLOCK);
  private n = 0;
  private count = 0;
  private last = -1;
  private lastBlockDoc = -1;
  private termMax = 0;
  constructor(private readonly normInverse: Float32Array) {}

  reset(): void {
    this.blocks.pos = this.skips.pos = this.tail.pos = 0;
    this.n = this.count = 0;
    this.last = this.lastBlockDoc = -1;
    this.termMax = 0;
  }

  /** The posting (doc, tf) whose unit has norm byte `norm`. */
  add(doc: number, tf: number, norm: number): void {
    const i = this.n++;
    this.docs[i] = doc;
    this.tfs[i] = tf;
    const x = Math.fround(tf * this.normInverse[norm]);
    this.xs[i] = x;
    if (x > this.termMax) this.termMax = x;
    this.count++;
    if (this.n === BLOCK) this.fullBlock();
  }

  private fullBlock(): void {
    const { docs, tfs, xs } = this;
    let prev = this.last;
    let maxDelta = 0;
    let maxTf = 0;
    let maxX = 0;
    const deltas = SCRATCH_D;
    const tfm = SCRATCH_T;
    for (let i = 0; i < BLOCK; i++) {
      const d = docs[i] - prev - 1;
      prev = docs[i];
      deltas[i] = d;
      if (d > maxDelta) maxDelta = d;
      const t = tfs[i] - 1;
      tfm[i] = t;
      if (t > maxTf) maxTf = t;
      if (xs[i] > maxX) maxX = xs[i];
    }
    const start = this.blocks.pos;
    const db = bitWidth(maxDelta);
    const tb = bitWidth(maxTf);
    if (db > 32 || tb > 32) throw new RangeError("posting values exceed 32 bits");
    this.blocks.u8(db);
    this.blocks.u8(tb);
    packBlock(this.blocks, deltas, db);
    packBlock(this.blocks, tfm, tb);
    this.skips.varint(prev - this.lastBlockDoc);
    this.skips.varint(this.blocks.pos - start);
    this.skips.f32(maxX);
    this.lastBlockDoc = prev;
    this.last = prev;
    this.n = 0;
  }

  /** Writes the term's postings to `out`; returns [docFreq, bytes]. */
  finish(out: ByteSink): [number, number] {
    const start = out.pos;
    let prev = this.last;
    for (let i = 0; i < this.n; i++) {
      const d = this.docs[i] - prev - 1;
      prev = this.docs[i];
      const tf = this.tfs[i];
      this.tail.varint(d * 2 + (tf === 1 ? 1 : 0));
      if (tf !== 1) this.tail.varint(tf - 2);
    }
    if (this.count >= BLOCK) {
      out.f32(this.termMax);
      out.bytes(this.skips.buf.subarray(0, this.skips.pos));
      out.bytes(this.blocks.buf.subarray(0, this.blocks.pos));
    }
    out.bytes(this.tail.buf.subarray(0, this.tail.pos));
    const result: [number, number] = [this.count, out.pos - start];
    this.reset();
    return result;
  }
}
