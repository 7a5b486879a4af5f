// Fusion in `tartan serve`'s search: naming two loaded indexes (SQuAD's BM25 and TF-IDF paragraph
// indexes) with a fusion, its normalisation and weights gives the hits the library's fusion stage gives
// (GET and POST alike); fusion parameters over one index, or weights that do not fit, are a 400.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { buildTfidfIndex } from "../../src/retrieval/tfidf/build.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { openIndexes } from "../../src/retrieval/open.js";
import { squadFixture, type SquadFixture } from "./fixture.js";

let f: SquadFixture;
let server: RunningServer;
let tfidf = "";
const QUESTIONS = ["Which NFL team represented the AFC at Super Bowl 50?", "Who was the Super Bowl 50 MVP?", "Normans Normandy"];

beforeAll(async () => {
  f = await squadFixture();
  tfidf = join(f.dir, "tfidf");
  await buildTfidfIndex(unitsFromPagesFile(f.pages, { unit: "paragraph" }), tfidf, { unit: "paragraph", source: f.pages });
  server = await startServer({ ks: f.ks, indexes: [f.bm25, tfidf], port: 0, data: f.dir });
}, 300_000);
afterAll(async () => {
  await server?.close();
  rmSync(f.dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: await res.json() };
}

describe("search over a fusion of loaded indexes", () => {
  it("GET index=bm25&index=tfidf&fusion=wsum&weights=…&norm=z-score gives the library's wsum stage", async () => {
    const lib = await openIndexes([f.bm25, tfidf], { fusion: { name: "wsum", options: { weights: [0.8, 0.2], norm: "z-score", depth: 40 } } });
    for (const q of QUESTIONS) {
      const r = await get(`/api/search?q=${encodeURIComponent(q)}&k=5&index=bm25&index=tfidf&fusion=wsum&weights=0.8,0.2&norm=z-score&depth=40`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ index: "bm25+tfidf", kind: "hybrid", unit: "paragraph", k: 5 });
      const want = await lib.search(q, 5);
      expect(r.body.hits.map((h: any) => h.score)).toEqual(want.map((h) => h.score));
      expect(r.body.hits.map((h: any) => h.provenance.start_paragraph_id)).toEqual(want.map((h) => lib.units.get(h.unit).start_paragraph_id));
    }
    await lib.close();
  });

  it("POST with index [bm25, tfidf] and alpha gives Pyserini's form, as the library", async () => {
    const lib = await openIndexes([f.bm25, tfidf], { fusion: { name: "wsum", options: { alpha: 0.3 } } });
    const res = await fetch(`${server.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: QUESTIONS, k: 4, index: ["bm25", "tfidf"], alpha: 0.3 }) });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    for (let i = 0; i < QUESTIONS.length; i++) expect(body.results[i].hits.map((h: any) => h.score)).toEqual((await lib.search(QUESTIONS[i], 4)).map((h) => h.score));
    await lib.close();
    // the indexes stay open for the next request
    expect((await get(`/api/search?q=Normans&index=tfidf&k=1`)).body.hits).toHaveLength(1);
  });

  it("k1 and b per request: the library's search at those parameters; refused for a TF-IDF index", async () => {
    const lib = await openIndexes([f.bm25]);
    for (const q of QUESTIONS) {
      const r = await get(`/api/search?q=${encodeURIComponent(q)}&k=5&index=bm25&k1=1.2&b=0.75`);
      expect(r.status).toBe(200);
      const want = await lib.search(q, 5, { bm25: { k1: 1.2, b: 0.75 } });
      expect(r.body.hits.map((h: any) => h.score)).toEqual(want.map((h) => h.score));
      expect(want).not.toEqual(await lib.search(q, 5));
    }
    await lib.close();
    expect(await get(`/api/search?q=x&index=tfidf&k1=1.2`)).toMatchObject({ status: 400, body: { error: "k1 and b apply to a BM25 index; this index is tfidf" } });
    expect(await get(`/api/search?q=x&index=bm25&b=2`)).toMatchObject({ status: 400, body: { error: "b must be a number from 0 to 1" } });
  });

  it("rm3 and rocchio per request (GET and POST): the library's feedback stages; refused for a TF-IDF index, bad parameters named", async () => {
    const rm3 = await openIndexes([f.bm25], { stages: [{ name: "rm3", options: { fbTerms: 20 } }] });
    const rocchio = await openIndexes([f.bm25], { stages: [{ name: "rocchio", options: {} }] });
    const plain = await openIndexes([f.bm25]);
    for (const q of QUESTIONS) {
      const r = await get(`/api/search?q=${encodeURIComponent(q)}&k=5&index=bm25&rm3=fbTerms=20`);
      expect(r.status).toBe(200);
      const want = await rm3.search(q, 5);
      expect(r.body.hits.map((h: any) => h.score)).toEqual(want.map((h) => h.score));
      expect(want).not.toEqual(await plain.search(q, 5));
      const d = await get(`/api/search?q=${encodeURIComponent(q)}&k=5&index=bm25&rocchio=`);
      expect(d.body.hits.map((h: any) => h.score)).toEqual((await rocchio.search(q, 5)).map((h) => h.score));
    }
    const res = await fetch(`${server.url}/api/search`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ queries: QUESTIONS, k: 4, index: "bm25", rm3: { fbTerms: 20 } }) });
    const body = (await res.json()) as any;
    expect(res.status).toBe(200);
    for (let i = 0; i < QUESTIONS.length; i++) expect(body.results[i].hits.map((h: any) => h.score)).toEqual((await rm3.search(QUESTIONS[i], 4)).map((h) => h.score));
    for (const r of [rm3, rocchio, plain]) await r.close();
    expect(await get(`/api/search?q=x&index=tfidf&rm3=true`)).toMatchObject({ status: 400, body: { error: "rm3 expands the query of a BM25 index; this index is tfidf" } });
    expect(await get(`/api/search?q=x&index=bm25&rm3=fbDocs=0`)).toMatchObject({ status: 400, body: { error: "rm3: fbDocs must be a whole number from 1 to 100000, got 0" } });
    expect(await get(`/api/search?q=x&index=bm25&rm3=&rocchio=`)).toMatchObject({ status: 400, body: { error: "give rm3 or rocchio, not both" } });
  });

  it("refuses fusion parameters over one index, and weights that do not fit", async () => {
    expect(await get(`/api/search?q=x&index=bm25&fusion=combsum`)).toMatchObject({ status: 400, body: { error: "fusion: fusion parameters go with several indexes (index=a&index=b)" } });
    expect(await get(`/api/search?q=x&index=bm25&index=tfidf&fusion=wsum&weights=1`)).toMatchObject({ status: 400, body: { error: "fusion: 1 weights for 2 members: give one per index, in order" } });
    expect(await get(`/api/search?q=x&index=bm25&index=tfidf&fusion=borda`)).toMatchObject({ status: 400 });
    expect(await get(`/api/search?q=x&index=bm25&index=nope`)).toMatchObject({ status: 404 });
  });
});
