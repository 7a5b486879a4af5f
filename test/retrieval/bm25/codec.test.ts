// The postings codec: 128-value blocks packed at every bit width decode to the same values through the
// generated (unrolled) decoders as through the reference bit loop.
import { describe, expect, it } from "vitest";
import { BLOCK, ByteSink, packBlock, unpackBlock, unpackGaps, unpackPlusOne } from "../../../src/retrieval/bm25/codec.js";

describe("block codec", () => {
  it("unpackGaps and unpackPlusOne equal the bit loop at widths 0-32, at odd offsets", () => {
    let a = 12345;
    const rand = () => {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0;
      return a;
    };
    for (let width = 0; width <= 32; width++) {
      const max = width === 32 ? 0xffffffff : 2 ** width - 1;
      const values = new Uint32Array(BLOCK);
      // Random values, the largest and 0 included.
      for (let i = 0; i < BLOCK; i++) values[i] = i === 3 ? max : i === 5 ? 0 : width === 0 ? 0 : rand() % (max + 1);
      const sink = new ByteSink();
      sink.u8(7); // the block starts at an odd byte offset
      packBlock(sink, values, width);
      sink.u8(9);
      const buf = sink.buf.subarray(0, sink.pos);
      expect(buf.length).toBe(2 + 16 * width);
      const ref = new Int32Array(BLOCK);
      expect(unpackBlock(buf, 1, width, ref)).toBe(1 + 16 * width);
      expect(Array.from(ref, (v) => v >>> 0)).toEqual(Array.from(values));
      const plus = new Int32Array(BLOCK);
      expect(unpackPlusOne(buf, 1, width, plus)).toBe(1 + 16 * width);
      expect(Array.from(plus)).toEqual(Array.from(values, (v) => (v + 1) | 0));
      if (width < 32) {
        // Gaps small enough for doc numbers (< 2^31 in all).
        const small = values.map((v) => v >>> Math.max(0, width - 23));
        const s2 = new ByteSink();
        s2.u8(1);
        packBlock(s2, small, Math.min(width, 23));
        const docs = new Int32Array(BLOCK);
        expect(unpackGaps(s2.buf.subarray(0, s2.pos), 1, Math.min(width, 23), 41, docs)).toBe(1 + 16 * Math.min(width, 23));
        let d = 41;
        expect(Array.from(docs)).toEqual(Array.from(small, (v) => (d += v + 1)));
      }
    }
  });
});
