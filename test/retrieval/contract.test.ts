// One contract for every Retriever tartan has, on the SQuAD knowledge source: best first with ties by
// unit, k respected, units in range, provenance that `tartan validate` accepts, deterministic (also
// through searchBatch and the two-thread SearchPool). BM25 runs on both backends: the embedded index
// and ClickHouse with 2 shards (started by tartan's cluster scripts, stopped by pid), with equal hits.
// A case is one entry in `cases`; a guard walks the registries (index kinds, stages, backends that open
// retrievers) and fails naming any registered one that no case opens.

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildIndexAt as buildIndex } from "../../src/backends/open.js";
import { fromSquad } from "../../src/knowledge/build.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltPage, KiltRecord } from "../../src/records/types.js";
import { validateFile } from "../../src/records/validate.js";
import { openRetriever } from "../../src/backends/open.js";
import { SearchPool } from "../../src/retrieval/pool.js";
import { memberManifests } from "../../src/retrieval/manifest.js";
import { KINDS } from "../../src/retrieval/kinds/index.js";
import { STAGES, type StageSpec } from "../../src/retrieval/stages/index.js";
import { MarkerStripping } from "../../src/retrieval/markers.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { RerankingRetriever } from "../../src/retrieval/rerank/retriever.js";
import { FeedbackRetriever } from "../../src/retrieval/feedback/retriever.js";
import { makeCrossEncoderFixture } from "./rerank/cross-encoder-fixture.js";
import { BACKENDS, backendFor } from "../../src/backends/registry.js";
import type { Hit, Retriever } from "../../src/retrieval/types.js";
import { unitProvenance } from "../../src/retrieval/units/unit.js";
import type { Unit } from "../../src/retrieval/units/unit.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { passagesFrom } from "../../src/retrieval/passages.js";
import { convertSquad } from "../../src/knowledge/build.js";
import { startTestCluster, type TestCluster } from "../backends/cluster-fixture.js";
import { ClickHouseDatabase } from "../../src/backends/clickhouse/client.js";
import { BM25_FORMAT, createMeta, writeMeta } from "../../src/backends/clickhouse/schema.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-contract-"));
const pagesFile = join(tmp, "pages.jsonl");
const questionsFile = join(tmp, "questions.jsonl");
interface Case {
  name: string;
  /** Index directories (several: hybrid). */
  dirs: string[];
  build: () => Promise<void>;
  /** Score tolerance between single and batched searches (dense: batched encoding differs in the last float bits). */
  tolerance?: number;
  /** A server-backed index: searched by one thread (its batches go to the server). */
  remote?: boolean;
  /** Stages over the opened index (the rerank stage). */
  stages?: StageSpec[];
  /** The fusion stage of several indexes (default rrf). */
  fusion?: StageSpec;
}

const quiet = () => {};
const idx = (name: string) => join(tmp, name);
const small = join(tmp, "pages-2.jsonl");
let cluster: TestCluster | undefined;
const clickhouse: string[] = [];
const rerankStages: StageSpec[] = [];
const cases: Case[] = [
  { name: "tfidf page", dirs: [idx("tfidf-page")], build: async () => void (await buildIndex({ pages: pagesFile, kind: "tfidf", out: idx("tfidf-page") }, quiet)) },
  { name: "tfidf paragraph", dirs: [idx("tfidf-paragraph")], build: async () => void (await buildIndex({ pages: pagesFile, kind: "tfidf", unit: "paragraph", out: idx("tfidf-paragraph") }, quiet)) },
  { name: "tfidf passage", dirs: [idx("tfidf-passage")], build: async () => void (await buildIndex({ pages: pagesFile, kind: "tfidf", unit: "passage", out: idx("tfidf-passage") }, quiet)) },
  { name: "entity", dirs: [idx("entity")], build: async () => void (await buildIndex({ pages: pagesFile, kind: "entity", out: idx("entity") }, quiet)) },
  { name: "hybrid tfidf+entity", dirs: [idx("tfidf-page"), idx("entity")], build: async () => {} },
  { name: "hybrid tfidf paragraph+entity pages", dirs: [idx("tfidf-paragraph"), idx("entity")], build: async () => {} },
  { name: "bm25 paragraph", dirs: [idx("bm25-paragraph")], build: async () => void (await buildIndex({ pages: pagesFile, kind: "bm25", unit: "paragraph", out: idx("bm25-paragraph") }, quiet)) },
  { name: "hybrid bm25+tfidf paragraph", dirs: [idx("bm25-paragraph"), idx("tfidf-paragraph")], build: async () => {} },
  { name: "impact paragraph (8-bit BM25)", dirs: [idx("impact-paragraph")], build: async () => void (await buildIndex({ kind: "impact", vectors: { file: idx("bm25-paragraph"), fromBm25: true }, out: idx("impact-paragraph") }, quiet)) },
  { name: "hybrid bm25+impact paragraph", dirs: [idx("bm25-paragraph"), idx("impact-paragraph")], build: async () => {} },
  {
    // the rerank stage: BM25's best 30 paragraphs reranked by the random cross-encoder of test/fixtures/cross-encoder
    name: "bm25 paragraph reranked by a cross-encoder",
    dirs: [idx("bm25-paragraph")],
    tolerance: 1e-5,
    stages: rerankStages,
    build: async () => {
      const { dir } = makeCrossEncoderFixture();
      rerankStages.push({ name: "rerank", options: { reranker: { name: "cross-encoder", options: { model: join(dir, "model.onnx"), vocab: join(dir, "vocab.txt"), maxLength: 128 } }, depth: 30 } });
    },
  },
  // The feedback stages over the BM25 paragraph index (RM3 at Anserini's defaults; Rocchio with negative feedback)
  { name: "bm25 paragraph with RM3 feedback", dirs: [idx("bm25-paragraph")], stages: [{ name: "rm3" }], build: async () => {} },
  { name: "bm25 paragraph with Rocchio feedback (negative, depth 100)", dirs: [idx("bm25-paragraph")], stages: [{ name: "rocchio", options: { useNegative: true, depth: 100 } }], build: async () => {} },
  // The score fusions (one case each), over the same two indexes and, for one, with page-level entity votes.
  { name: "wsum bm25+tfidf paragraph (weights, z-score)", dirs: [idx("bm25-paragraph"), idx("tfidf-paragraph")], fusion: { name: "wsum", options: { weights: [0.7, 0.3], norm: "z-score" } }, build: async () => {} },
  { name: "combsum bm25+tfidf paragraph (max)", dirs: [idx("bm25-paragraph"), idx("tfidf-paragraph")], fusion: { name: "combsum", options: { norm: "max" } }, build: async () => {} },
  { name: "combmnz tfidf paragraph+entity pages", dirs: [idx("tfidf-paragraph"), idx("entity")], fusion: { name: "combmnz", options: {} }, build: async () => {} },
  { name: "combmax bm25+tfidf paragraph (rank)", dirs: [idx("bm25-paragraph"), idx("tfidf-paragraph")], fusion: { name: "combmax", options: { norm: "rank" } }, build: async () => {} },
  { name: "combanz bm25+tfidf paragraph (sum)", dirs: [idx("bm25-paragraph"), idx("tfidf-paragraph")], fusion: { name: "combanz", options: { norm: "sum" } }, build: async () => {} },
  {
    name: "bm25 paragraph on ClickHouse (2 shards)",
    dirs: clickhouse,
    remote: true,
    build: async () => {
      cluster = await startTestCluster(2);
      clickhouse.push(cluster.url("contract", "bm25_paragraph"));
      await buildIndex({ pages: pagesFile, kind: "bm25", unit: "paragraph", backend: clickhouse[0] }, quiet);
    },
  },
  {
    // Universal Sentence Encoder lite encodes ~35 passages per CPU-second: the first two SQuAD pages only.
    name: "dense paragraph (2 pages)",
    dirs: [idx("dense-paragraph")],
    tolerance: 1e-5,
    build: async () => {
      const pages = (await readJsonlAll<KiltPage>(pagesFile)).slice(0, 2);
      writeFileSync(small, pages.map((p) => JSON.stringify(p)).join("\n") + "\n");
      await buildIndex({ pages: small, kind: "dense", unit: "paragraph", out: idx("dense-paragraph") }, quiet);
    },
  },
  {
    // The compressed index of precomputed vectors (binary codes, int8 rescoring), as researchers bring
    // it: a unit table of the knowledge source's paragraphs, and a vectors file whose row i is unit i
    // (here the exact index's own vectors of the same paragraphs); the encoder named for text queries.
    name: "dense binary codes from vectors (2 pages)",
    dirs: [idx("dense-binary")],
    tolerance: 1e-5,
    build: async () => {
      await ingest(small, { out: join(tmp, "ks-small"), workers: 0 });
      await passagesFrom({ ks: join(tmp, "ks-small") }, { table: join(tmp, "units-small"), words: 100, unit: "paragraph" }, quiet);
      const vectors = { file: join(idx("dense-paragraph"), "vectors.f32"), dim: 512, dtype: "float32" as const };
      await buildIndex({ kind: "dense", units: join(tmp, "units-small"), vectors, out: idx("dense-binary"), params: { quantize: "binary", encoder: { type: "use-lite" }, k1: 2, k2: 2, nprobe: 4, refine: 1000 } }, quiet);
      const [exact, codes] = [await openRetriever([idx("dense-paragraph")]), await openRetriever([idx("dense-binary")])];
      const key = (u: Unit) => `${u.wikipedia_id} ${u.start_paragraph_id} ${u.start_character} ${u.end_character}`;
      expect(Array.from({ length: codes.units.count }, (_, i) => key(codes.units.get(i)))).toEqual(Array.from({ length: exact.units.count }, (_, i) => key(exact.units.get(i))));
      await exact.close();
      await codes.close();
    },
  },
  {
    // hybrid at small scale: BM25 over the same unit table, fused with the compressed dense index
    name: "hybrid bm25+dense binary codes (2 pages)",
    dirs: [idx("bm25-small"), idx("dense-binary")],
    tolerance: 1e-5,
    build: async () => void (await buildIndex({ units: join(tmp, "units-small"), kind: "bm25", out: idx("bm25-small") }, quiet)),
  },
];

let queries: string[] = [];
beforeAll(async () => {
  await fromSquad(V11, pagesFile, quiet);
  await convertSquad(V11, { out: questionsFile }, quiet);
  // 151 questions spread over the articles, plus inputs that stress the tokenizers.
  const records = await readJsonlAll<KiltRecord>(questionsFile);
  queries = records.filter((_, i) => i % 70 === 0).map((r) => r.input!);
  queries.push("", "   ", "?!", "the of and", "[START_ENT] Warsaw [END_ENT] is a city", "Ünïcödé — 東京 🎉", "x".repeat(5000));
  for (const c of cases) await c.build();
}, 600_000);

afterAll(async () => {
  await cluster?.stop();
});

/** What the contract's cases opened: kinds, stages and backends (read from the retrievers, not declared). */
const covered = { kinds: new Set<string>(), stages: new Set<string>(), backends: new Set<string>() };

/** The stages a retriever is built of (markers and the fusions: the registered wrappers), walking into its members. */
function stagesOf(r: Retriever, out: Set<string>): void {
  if (r instanceof MarkerStripping) {
    out.add("markers");
    stagesOf(r.inner, out);
  } else if (r instanceof RerankingRetriever) {
    out.add("rerank");
    stagesOf(r.inner, out);
  } else if (r instanceof FeedbackRetriever) {
    out.add(r.feedback.method);
    stagesOf(r.inner, out);
  } else if (r instanceof HybridRetriever) {
    out.add(r.fusion.method);
    for (const m of r.members) stagesOf(m, out);
  }
}

describe.each(cases)("Retriever contract: $name", (c) => {
  let r: Retriever;
  beforeAll(async () => {
    r = await openRetriever(c.dirs, { stages: c.stages, fusion: c.fusion });
    for (const m of memberManifests(r.manifest)) covered.kinds.add(m.kind);
    stagesOf(r, covered.stages);
    for (const d of c.dirs) covered.backends.add(backendFor(d).name);
  });
  afterAll(async () => {
    await r?.close();
  });

  it("returns at most k hits, best first, ties by lower unit, units in range", async () => {
    let nonEmpty = 0;
    for (const k of [1, 20]) {
      for (const q of queries) {
        const hits = await r.search(q, k);
        expect(hits.length).toBeLessThanOrEqual(k);
        if (hits.length > 0) nonEmpty++;
        for (let i = 0; i < hits.length; i++) {
          const h = hits[i];
          expect(Number.isInteger(h.unit) && h.unit >= 0 && h.unit < r.units.count).toBe(true);
          expect(Number.isFinite(h.score)).toBe(true);
          if (i > 0) {
            const p = hits[i - 1];
            expect(p.score > h.score || (p.score === h.score && p.unit < h.unit)).toBe(true);
          }
        }
        expect(new Set(hits.map((h) => h.unit)).size).toBe(hits.length);
      }
    }
    expect(nonEmpty).toBeGreaterThan(0);
  });

  it("is deterministic, and batches equal single searches (both cores included)", async () => {
    const single: Hit[][] = [];
    for (const q of queries) single.push(await r.search(q, 10));
    const again = [];
    for (const q of queries) again.push(await r.search(q, 10));
    expect(again).toEqual(single);
    const same = (got: Hit[][]) => {
      if (!c.tolerance) return expect(got).toEqual(single);
      expect(got.map((hits) => hits.map((h) => h.unit))).toEqual(single.map((hits) => hits.map((h) => h.unit)));
      got.forEach((hits, i) => hits.forEach((h, j) => expect(Math.abs(h.score - single[i][j].score)).toBeLessThanOrEqual(c.tolerance!)));
    };
    if (r.searchBatch) same(await r.searchBatch(queries, 10));
    const pool = new SearchPool(r, c.dirs, { threads: c.remote ? 1 : 2, chunk: 16, stages: c.stages, fusion: c.fusion });
    try {
      same(await pool.search(queries, 10));
    } finally {
      await pool.close();
    }
  });

  it("gives provenance that tartan validate accepts", async () => {
    const file = join(tmp, `guess-${c.name.replace(/\W+/g, "-")}.jsonl`);
    const lines: string[] = [];
    for (let i = 0; i < queries.length; i++) {
      const hits = await r.search(queries[i], 5);
      lines.push(JSON.stringify({ id: `q${i}`, input: queries[i], output: [{ provenance: hits.map((h) => unitProvenance(r.units.get(h.unit), h.score)) }] }));
    }
    writeFileSync(file, `${lines.join("\n")}\n`);
    const report = await validateFile(file, { kind: "task" });
    // The stress inputs "" and "   " are flagged as empty inputs; the provenance must raise nothing.
    expect(report.problems.filter((p) => p.problem !== "empty input")).toEqual([]);
    expect(report.valid).toBe(true);
    expect(report.records).toBe(queries.length);
  });
});

describe("BM25 on ClickHouse equals the embedded index", () => {
  it("gives the same hits and scores for every query, single and batched, k = 1, 20", async () => {
    const embedded = await openRetriever([idx("bm25-paragraph")]);
    const remote = await openRetriever(clickhouse);
    try {
      for (const k of [1, 20]) {
        const want = await embedded.searchBatch!(queries, k);
        expect(await remote.searchBatch!(queries, k)).toEqual(want);
        for (let i = 0; i < queries.length; i += 10) expect(await remote.search(queries[i], k)).toEqual(want[i]);
      }
      const hits = await remote.search(queries[0], 3);
      expect(hits.map((h) => remote.units.get(h.unit))).toEqual(hits.map((h) => embedded.units.get(h.unit)));
    } finally {
      await embedded.close();
      await remote.close();
    }
  });
});


describe("ClickHouse BM25: an index that cannot be read is refused naming the URL and the table", () => {
  it("nothing under the name, an unfinished build, another shard count, another format version", async () => {
    const url = cluster!.url("contract", "bm25_other");
    const table = "contract.bm25_other_meta_local";
    await expect(openRetriever([url])).rejects.toThrow(`no bm25 named bm25_other here (no table ${table})`);
    const db = await ClickHouseDatabase.connect(url);
    await createMeta(db, "bm25_other");
    await writeMeta(db, "bm25_other", { kind: "bm25", format: BM25_FORMAT, complete: 0, shards: 2 });
    await expect(openRetriever([url])).rejects.toThrow(`(table ${table}): its build did not finish; run \`tartan index build --kind bm25 --backend\` again`);
    await writeMeta(db, "bm25_other", { complete: 1, shards: 3 });
    await expect(openRetriever([url])).rejects.toThrow(`(table ${table}): built on 3 shards, the cluster has 2`);
    await writeMeta(db, "bm25_other", { format: "tartan-bm25-ch-1", shards: 2 });
    await db.close();
    await expect(openRetriever([url])).rejects.toThrow(`(table ${table}): format "tartan-bm25-ch-1"; this tartan reads ${BM25_FORMAT} (rebuild it with this version)`);
  });
});

describe("Retriever contract: the guard", () => {
  // Runs after the cases (vitest runs describe blocks in order): each registered plug-in needs a case.
  it("opens every registered index kind, stage and backend that opens retrievers", () => {
    expect(KINDS.names().filter((k) => !covered.kinds.has(k))).toEqual([]);
    expect(STAGES.names().filter((s) => !covered.stages.has(s))).toEqual([]);
    expect(BACKENDS.all().filter((b) => b.openRetriever !== undefined && !covered.backends.has(b.name)).map((b) => b.name)).toEqual([]);
  });
});
