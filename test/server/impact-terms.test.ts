// POST /api/search with `terms` (one sparse query vector per query) against an impact index (BM25's
// scores as 24-bit impacts over SQuAD's paragraphs): hits equal the library's search of the same
// vectors, alone and fused with BM25 (which searches the text) and with a dense index (which searches
// `vectors`), as `openRetriever` fuses them; bad vectors are refused naming the query and the term.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openRetriever } from "../../src/backends/open.js";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { DENSE_DIM } from "./dense-fixture.js";
import { impactFixture, type ImpactFixture } from "./impact-fixture.js";

let f: ImpactFixture;
let server: RunningServer;

beforeAll(async () => {
  f = await impactFixture();
  server = await startServer({ indexes: [f.bm25, f.impact, f.dense], port: 0, searchThreads: 1 });
}, 300_000);
afterAll(async () => {
  await server?.close();
});

async function post(body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const units = (hits: { provenance: { wikipedia_id: string; start_paragraph_id: number }; score: number }[]) => hits.map((h) => [h.provenance.wikipedia_id, h.provenance.start_paragraph_id, h.score]);

/** The library's hits for the same queries, as [wikipedia_id, paragraph, score]. */
async function library(dirs: string[], inputs: { text: string; terms?: Record<string, number>; vector?: Float32Array }[], k: number): Promise<unknown[][]> {
  const r = await openRetriever(dirs);
  try {
    const out: unknown[][] = [];
    for (const q of inputs) out.push((await r.search(q, k)).map((h) => { const u = r.units.get(h.unit); return [u.wikipedia_id, u.start_paragraph_id, h.score]; }));
    return out;
  } finally {
    await r.close();
  }
}

describe("POST /api/search with terms", () => {
  it("searches an impact index with the vectors given, not the text", async () => {
    const r = await post({ queries: f.questions.map(() => "unrelated words"), k: 5, index: "impact", terms: f.terms });
    expect(r.status).toBe(200);
    const want = await library([f.impact], f.terms.map((terms) => ({ text: "unrelated words", terms })), 5);
    expect(r.body.results.map((x: any) => units(x.hits))).toEqual(want);
    expect(want[0]).toHaveLength(5);
    // the text alone (pretokenized: nothing matches these words as stems) finds other hits
    const text = await post({ queries: f.questions, k: 5, index: "impact" });
    expect(text.body.results.map((x: any) => units(x.hits))).not.toEqual(want);
  });

  it("fuses with BM25 (the text) and with dense (the vectors) as the library does", async () => {
    const bm25 = await post({ queries: f.questions, k: 10, index: ["bm25", "impact"], terms: f.terms });
    expect(bm25.status).toBe(200);
    expect(bm25.body.results.map((x: any) => units(x.hits))).toEqual(await library([f.bm25, f.impact], f.questions.map((text, i) => ({ text, terms: f.terms[i] })), 10));
    const vectors = f.questions.map((_, i) => Array.from({ length: DENSE_DIM }, (_, d) => Math.cos(i + d)));
    const dense = await post({ queries: f.questions, k: 10, index: ["impact", "dense"], terms: f.terms, vectors });
    expect(dense.status, JSON.stringify(dense.body)).toBe(200);
    expect(dense.body.results.map((x: any) => units(x.hits))).toEqual(await library([f.impact, f.dense], f.questions.map((text, i) => ({ text, terms: f.terms[i], vector: Float32Array.from(vectors[i]) })), 10));
  });

  it("refuses bad vectors naming the query and the term, and terms for an index that is not an impact one", async () => {
    const bad = async (body: unknown) => {
      const r = await post(body);
      expect(r.status).toBe(400);
      return r.body.error as string;
    };
    expect(await bad({ queries: ["a", "b"], index: "impact", terms: [{ a: 1 }, { super: -2 }] })).toBe('terms[1]["super"]: bad weight -2 (expected a finite number ≥ 0)');
    expect(await bad({ queries: ["a", "b"], index: "impact", terms: [{ a: 1 }, ["super"]] })).toBe('terms[1] must be an object of term weights {"term": weight, …}');
    expect(await bad({ queries: ["a"], index: "impact", terms: [{ "new york": 1 }] })).toBe('terms[0]: term "new york" has a space, tab or line break');
    expect(await bad({ queries: ["a", "b"], index: "impact", terms: [{ a: 1 }] })).toBe("terms must be an array of 2 objects of term weights, one per query");
    expect(await bad({ queries: ["a"], index: "bm25", terms: [{ a: 1 }] })).toBe("terms are searched by an impact index; this index is bm25");
  });
});
