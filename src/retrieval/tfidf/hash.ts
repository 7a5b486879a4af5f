// Feature hashing as DrQA does it: `murmurhash3_32(ngram, positive=True) % num_buckets` (scikit-learn's
// MurmurHash3 x86_32, seed 0, over the UTF-8 bytes). The `murmurhash` package hashes byte arrays with
// the same algorithm; strings are encoded into one reused buffer to avoid an allocation per n-gram.

import murmurhash from "murmurhash";

const encoder = new TextEncoder();
let buffer = new Uint8Array(1024);

/** MurmurHash3 x86_32 of the UTF-8 bytes of `s`, unsigned (scikit-learn `murmurhash3_32(s, seed, positive=True)`). */
export function murmur3(s: string, seed = 0): number {
  if (s.length * 3 > buffer.length) buffer = new Uint8Array(s.length * 3);
  const { written } = encoder.encodeInto(s, buffer);
  return murmurhash.v3(buffer.subarray(0, written), seed);
}

/** DrQA's `utils.hash(token, num_buckets)`. */
export function hashBucket(ngram: string, buckets: number): number {
  return murmur3(ngram) % buckets;
}
