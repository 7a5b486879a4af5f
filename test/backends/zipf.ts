// Zipfian words for the ClickHouse BM25 tests: word r of the vocabulary `w<r in base 36>x` drawn with
// probability proportional to 1 / (r + 1), from a seeded generator (the same words for the same seed).

/** A function drawing one word of a `size`-word Zipfian vocabulary with `rand` (values in [0, 1)). */
export function zipfWords(rand: () => number, size: number): () => string {
  const vocab = Array.from({ length: size }, (_, i) => `w${i.toString(36)}x`);
  const cum = new Float64Array(size);
  let s = 0;
  for (let r = 0; r < size; r++) cum[r] = s += 1 / (r + 1);
  return () => {
    const x = rand() * s;
    let lo = 0;
    let hi = size - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return vocab[lo];
  };
}
