// 4-bit product-quantization codes of a compressed dense index ("pq4"): the residual to the list centroid
// in m sub-spaces of 16 centroids (two codes a byte), trained and tabled as ./pq.ts does. At open the
// row-major codes of codes.bin are laid out list by list in the fast-scan blocks of ../fastscan.ts, whose
// kernel sums 16 codes a look-up from the query's table quantized to bytes; `delta · sum + bias` is added
// to the list's centroid score and kept in a bounded min-heap, skipping sums that cannot beat its floor.

import { FastScanMemory, FS_BLOCK, FS_SCAN_BLOCKS, blockStarts, quantizeTable, toBlocks, type FastScanShare } from "../fastscan.js";
import { TopHeap } from "../top-heap.js";
import { listBase, forEachListChunk, type CoarseLists, type CodeType, type ListCodes, type ListScan, type ListSource } from "./code-type.js";
import { PqCodec, pqStoredFloats, pqTable, trainPq, type PqBooks } from "./pq.js";

class Pq4Lists implements ListCodes {
  constructor(
    private readonly memory: FastScanMemory,
    private readonly starts: Float64Array,
    private readonly books: PqBooks,
    private readonly offsets: Float64Array,
    private readonly coarse: CoarseLists,
  ) {}

  share(): FastScanShare {
    return this.memory.share();
  }

  candidates(s: ListScan): Float64Array {
    const { qs, qo, lists, refine } = s;
    const { memory, starts } = this;
    const { table, delta, bias } = quantizeTable(pqTable(this.books, qs, qo), this.books.pqM);
    memory.setTable(table);
    const heap = new TopHeap(refine);
    for (let i = 0; i < lists.length; i++) {
      const l = lists[i];
      const base = listBase(this.coarse, s, i, bias);
      const o0 = this.offsets[l];
      const len = this.offsets[l + 1] - o0;
      const b0 = starts[l];
      const nb = starts[l + 1] - b0;
      for (let j0 = 0; j0 < nb; j0 += FS_SCAN_BLOCKS) {
        const k = Math.min(FS_SCAN_BLOCKS, nb - j0);
        const sums = memory.scan(b0 + j0, k);
        const first = j0 * FS_BLOCK;
        const count = Math.min(k * FS_BLOCK, len - first);
        // sums at or below `skip` cannot beat the heap's floor (one below the bound, so the heap still
        // decides every near case and the candidates are those of pushing every code)
        let skip = Math.floor((heap.floor - base) / delta) - 1;
        for (let j = 0; j < count; j++) {
          if (sums[j] <= skip) continue;
          heap.push(base + delta * sums[j], o0 + first + j);
          skip = Math.floor((heap.floor - base) / delta) - 1;
        }
      }
    }
    return heap.items();
  }
}

class Pq4Codec extends PqCodec {
  readonly kind = "pq4";
  readonly codeBytes: number;

  constructor(books: PqBooks) {
    super(books);
    this.codeBytes = books.pqM / 2;
  }

  openLists(src: ListSource, coarse: CoarseLists): ListCodes {
    const starts = blockStarts(src.offsets);
    const memory = FastScanMemory.create(starts[coarse.lists], this.codeBytes, src.slots);
    readBlocks(src, this.codeBytes, starts, memory.codes());
    return new Pq4Lists(memory, starts, this.books, src.offsets, coarse);
  }

  attachLists(share: unknown, slot: number, offsets: Float64Array, coarse: CoarseLists): ListCodes {
    return new Pq4Lists(FastScanMemory.attach(share as FastScanShare, slot), blockStarts(offsets), this.books, offsets, coarse);
  }
}

/** Reads the row-major 4-bit codes of codes.bin (list by list, as the build laid them out) into fast-scan blocks. */
function readBlocks(src: ListSource, codeBytes: number, starts: Float64Array, dst: Uint8Array): void {
  const offsets = src.offsets;
  forEachListChunk(src, codeBytes, (rows, from, to) => {
    for (let t = from; t < to; t++) toBlocks(rows, (offsets[t] - offsets[from]) * codeBytes, offsets[t + 1] - offsets[t], codeBytes, dst, starts[t] * codeBytes * FS_BLOCK);
  });
}

/** 4-bit product quantization (16 centroids a sub-space, two codes a byte), scanned by the fast-scan kernel. */
export const pq4Codes: CodeType<"pq4"> = {
  name: "pq4",
  version: 1,
  summary: "product quantization with 16 centroids a sub-space (4-bit codes, two a byte), scanned by the fast-scan kernel",
  train: (t) => new Pq4Codec(trainPq(t, 16, "pq4")),
  storedFloats: (dim, h) => pqStoredFloats(dim, h, 16),
  load: (dim, h, stored) => new Pq4Codec({ dim, pqM: h.pqM as number, ksub: 16, codebooks: stored }),
};
