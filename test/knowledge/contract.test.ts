// One contract for every KnowledgeSourceReader: the embedded store and ClickHouse with 2 shards (started
// by tartan's cluster scripts, stopped by pid), both holding the SQuAD knowledge source: lookups by
// id, title (exact, then ignoring case) and URL, the count, pages in input order, provenance spans and
// passages of the pages they return, and the errors (missing source, another format, a shard down).
// Each backend that holds knowledge sources (the BACKENDS registry) joins with one line in `CASES`; a
// guard fails naming a registered backend without one, or a case naming no backend.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openKnowledgeSource } from "../../src/backends/open.js";
import { BACKENDS } from "../../src/backends/registry.js";
import { ingestClickHouse } from "../../src/backends/clickhouse/knowledge.js";
import { ClickHouseDatabase } from "../../src/backends/clickhouse/client.js";
import { writeMeta } from "../../src/backends/clickhouse/schema.js";
import { fromSquad } from "../../src/knowledge/build.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { cutPassages } from "../../src/knowledge/passages.js";
import type { KnowledgeSourceReader } from "../../src/knowledge/source.js";
import { provenanceText } from "../../src/knowledge/span.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltPage } from "../../src/records/types.js";
import { startTestCluster, type TestCluster } from "../backends/cluster-fixture.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ks-contract-"));
const pagesFile = join(tmp, "pages.jsonl");
let cluster: TestCluster;
let pages: KiltPage[] = [];

/** One line per backend: how its knowledge source of the SQuAD pages is made; returns its location. */
const CASES: Record<string, () => Promise<string>> = {
  embedded: async () => (await ingest(pagesFile, { out: join(tmp, "ks"), workers: 0 })).out,
  clickhouse: async () => ((cluster = await startTestCluster(2)), await ingestClickHouse(pagesFile, cluster.url("ks_contract"), { commitBytes: 256 << 10 })).url,
};
/** The backends of the seam: those the registry says hold knowledge sources. */
const SEAM = BACKENDS.all().filter((b) => b.openKnowledgeSource !== undefined).map((b) => b.name);

const locations: Record<string, string> = {};
beforeAll(async () => {
  await fromSquad(V11, pagesFile, () => {});
  pages = await readJsonlAll<KiltPage>(pagesFile);
  for (const name of SEAM.filter((n) => n in CASES)) locations[name] = await CASES[name]();
}, 300_000);

describe("KnowledgeSource contract: the guard", () => {
  it("has a case for every backend that holds knowledge sources, and no case for another", () => {
    expect(SEAM.filter((n) => !(n in CASES))).toEqual([]);
    expect(Object.keys(CASES).filter((n) => !SEAM.includes(n))).toEqual([]);
  });
});

afterAll(async () => {
  await cluster?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe.each(SEAM.filter((n) => n in CASES))("KnowledgeSource contract: %s", (backend) => {
  let ks: KnowledgeSourceReader;
  beforeAll(async () => {
    ks = await openKnowledgeSource(locations[backend]);
  });
  afterAll(async () => {
    await ks?.close();
  });

  it("counts the 48 SQuAD articles and returns them in input order", async () => {
    expect(await ks.count()).toBe(48);
    const seen: KiltPage[] = [];
    for await (const p of ks.pages(7)) seen.push(p);
    expect(seen).toEqual(pages);
  });

  it("finds pages by id, exact title, title in another case and URL; null when absent", async () => {
    expect((await ks.getPageById("squad:Super_Bowl_50"))?.wikipedia_title).toBe("Super Bowl 50");
    expect(await ks.getPageById("squad:super_bowl_50")).toBeNull();
    expect(await ks.getPageById(56)).toBeNull();
    expect((await ks.getPageByTitle("Normans"))?.wikipedia_id).toBe("squad:Normans");
    expect((await ks.getPageByTitle("NORMANS"))?.wikipedia_id).toBe("squad:Normans");
    expect((await ks.getPageByTitle("super bowl 50"))?.text.length).toBe(55);
    expect(await ks.getPageByTitle("Norman")).toBeNull();
    expect((await ks.getPageFromUrl("https://en.wikipedia.org/wiki/Super_Bowl_50"))?.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect((await ks.getPageFromUrl("https://en.wikipedia.org/w/index.php?title=nikola_tesla"))?.wikipedia_title).toBe("Nikola Tesla");
    expect(await ks.getPageFromUrl("https://en.wikipedia.org/wiki/Nowhere_at_all")).toBeNull();
    for (const p of pages) expect(await ks.getPageById(p.wikipedia_id)).toEqual(p);
  });

  it("gives the provenance spans and passages of the source pages", async () => {
    const page = (await ks.getPageByTitle("Super Bowl 50"))!;
    expect(provenanceText(page, { start_paragraph_id: 1, start_character: 0, end_paragraph_id: 1, end_character: 13 })).toBe("Super Bowl 50");
    expect(provenanceText(page, { start_paragraph_id: 1, start_character: 177, end_character: 191 })).toBe("Denver Broncos");
    const passages = cutPassages(page, { unit: "chunk", words: 100 });
    expect(passages).toEqual(cutPassages(pages.find((p) => p.wikipedia_id === page.wikipedia_id)!, { unit: "chunk", words: 100 }));
    expect(passages.length).toBe(82);
  });
});

describe("ClickHouse knowledge source: errors name the URL and the table, never hang", () => {
  it("refuses a name that holds nothing", async () => {
    await expect(openKnowledgeSource(cluster.url("ks_contract", "nothing"))).rejects.toThrow(/no ks named nothing here \(no table ks_contract\.nothing_meta_local\)/);
  });

  it("refuses a table written by another format version", async () => {
    const url = cluster.url("ks_contract", "other");
    await ingestClickHouse(pagesFile, url);
    const db = await ClickHouseDatabase.connect(url);
    await writeMeta(db, "other", { format: "tartan-ks-ch-99" });
    await db.close();
    await expect(openKnowledgeSource(url)).rejects.toThrow(/\(table ks_contract\.other_meta_local\): format "tartan-ks-ch-99"; this tartan reads tartan-ks-ch-1/);
  });

  it("refuses a file of task records as the embedded ingest does: the same message, no page stored", async () => {
    const HOTPOT = new URL("../../../shared/data/kilt-dev/hotpotqa-dev-kilt.jsonl", import.meta.url).pathname;
    const NQ = new URL("../../../shared/data/kilt-samples/nq-dev-kilt.jsonl", import.meta.url).pathname;
    await expect(ingestClickHouse(HOTPOT, cluster.url("ks_contract", "tasks"))).rejects.toThrow(
      `${HOTPOT}: no knowledge-source page in the first 1000 non-blank lines (first problem: `,
    );
    await expect(ingestClickHouse(NQ, cluster.url("ks_contract", "nq"))).rejects.toThrow(`${NQ}: no knowledge-source page in the first 5 non-blank lines`);
    await expect(openKnowledgeSource(cluster.url("ks_contract", "nq"))).rejects.toThrow(/its ingest is not complete/);
  });

  it("reports a server that is not there", async () => {
    const url = "clickhouse://127.0.0.1:9/ks_contract?timeout=5";
    await expect(openKnowledgeSource(url)).rejects.toThrow(/clickhouse:\/\/127\.0\.0\.1:9\/ks_contract.*connection refused/);
  });
});
