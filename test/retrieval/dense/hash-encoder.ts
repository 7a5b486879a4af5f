// A small deterministic dense encoder (words hashed into 16 buckets) and synthetic units, shared by
// the dense index tests.

import type { Encoder, EncoderSpec } from "../../../src/retrieval/dense/index.js";
import { normalizeRows } from "../../../src/retrieval/dense/encoder.js";
import type { Unit } from "../../../src/retrieval/units/unit.js";

export const DIM = 16;

/** Words hashed into 16 buckets (FNV-1a), normalised: texts sharing words score higher. */
export class HashEncoder implements Encoder {
  readonly spec: EncoderSpec = { type: "openai", baseUrl: "http://127.0.0.1:1", model: "hash-test" };
  readonly dim = DIM;
  calls: string[][] = [];
  closed = false;
  private enc(texts: readonly string[]): Float32Array {
    this.calls.push([...texts]);
    const m = new Float32Array(texts.length * DIM);
    texts.forEach((t, i) => {
      for (const w of t.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
        let h = 0x811c9dc5;
        for (const ch of w) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
        m[i * DIM + (h % DIM)] += 1;
      }
    });
    return normalizeRows(m, DIM);
  }
  async encodeQueries(texts: readonly string[]): Promise<Float32Array> {
    return this.enc(texts);
  }
  async encodePassages(texts: readonly string[]): Promise<Float32Array> {
    return this.enc(texts);
  }
  async close(): Promise<void> {
    this.closed = true;
  }
}

const WORDS = ["river", "castle", "music", "engine", "football", "election", "physics", "opera", "harbour", "winter", "forest", "bridge"];
export function makeUnits(n: number): Unit[] {
  return Array.from({ length: n }, (_, i) => ({
    wikipedia_id: `p${Math.floor(i / 5)}`,
    wikipedia_title: `Page ${Math.floor(i / 5)}`,
    start_paragraph_id: (i % 5) + 1,
    end_paragraph_id: (i % 5) + 1,
    start_character: 0,
    end_character: 20,
    text: `${WORDS[i % 12]} ${WORDS[(i * 7) % 12]} ${WORDS[(i * 5 + 3) % 12]} item${i}`,
  }));
}

export async function* slowly(units: Unit[]): AsyncGenerator<Unit> {
  for (const u of units) yield u;
}
