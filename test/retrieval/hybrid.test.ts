import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fromSquad } from "../../src/knowledge/build.js";
import { buildEntityIndex } from "../../src/retrieval/entity/build.js";
import { HybridRetriever } from "../../src/retrieval/hybrid.js";
import { openIndex, openIndexes } from "../../src/retrieval/open.js";
import { stripEntityMarkers } from "../../src/retrieval/markers.js";
import { pagesFromFile, unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { buildTfidfIndex } from "../../src/retrieval/tfidf/build.js";
import type { KiltPage } from "../../src/records/types.js";
import type { Hit, Retriever } from "../../src/retrieval/types.js";
import { UnitStore } from "../../src/retrieval/units/store.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-hybrid-"));
const pagesFile = join(tmp, "pages.jsonl");

/** A retriever answering fixed rankings over a real unit store. */
function fixed(units: UnitStore, ranking: number[]): Retriever & { asked: number[] } {
  const asked: number[] = [];
  return {
    kind: "bm25",
    units,
    manifest: { kind: "bm25", unit: "passage", units: units.count, params: {}, source: "", created: "", tartanVersion: "", formatVersion: 0 },
    asked,
    async search(_q: string, k: number): Promise<Hit[]> {
      asked.push(k);
      return ranking.slice(0, k).map((unit, i) => ({ unit, score: 10 - i }));
    },
    async close() {},
  };
}

beforeAll(async () => {
  await fromSquad(V11, pagesFile, () => {});
  await buildTfidfIndex(unitsFromPagesFile(pagesFile, { unit: "page" }), join(tmp, "tfidf-page"), { unit: "page", source: pagesFile });
  await buildTfidfIndex(unitsFromPagesFile(pagesFile, { unit: "paragraph" }), join(tmp, "tfidf-paragraph"), { unit: "paragraph", source: pagesFile });
  await buildTfidfIndex(unitsFromPagesFile(pagesFile, { unit: "passage" }), join(tmp, "tfidf-passage"), { unit: "passage", source: pagesFile });
  await buildEntityIndex(pagesFromFile(pagesFile), join(tmp, "entity"), { source: pagesFile });
  // An entity index over two other pages: same unit level as "entity", other pages.
  const other: KiltPage[] = [
    { wikipedia_id: "1", wikipedia_title: "A", text: ["A\n", "Alpha.\n"] },
    { wikipedia_id: "2", wikipedia_title: "B", text: ["B\n", "Beta.\n"] },
  ];
  await buildEntityIndex(other, join(tmp, "entity-2"), { source: "test" });
});

describe("reciprocal-rank fusion", () => {
  it("adds 1/(k0 + rank) over members, ties to the lower unit", async () => {
    const units = UnitStore.open(join(tmp, "tfidf-page"));
    const a = fixed(units, [0, 1, 2]);
    const b = fixed(units, [2, 0, 5]);
    const h = new HybridRetriever([a, b]);
    const hits = await h.search("q", 3);
    expect(hits.map((x) => x.unit)).toEqual([0, 2, 1]);
    expect(hits[0].score).toBeCloseTo(1 / 61 + 1 / 62, 15);
    expect(hits[1].score).toBeCloseTo(1 / 63 + 1 / 61, 15);
    expect(hits[2].score).toBeCloseTo(1 / 62, 15);
    expect(a.asked).toEqual([100]); // default depth max(k, 100)
    // Symmetric rankings tie exactly; the lower unit goes first.
    const tie = new HybridRetriever([fixed(units, [7, 3]), fixed(units, [3, 7])], { k0: 0, depth: 2 });
    expect(await tie.search("q", 5)).toEqual([{ unit: 3, score: 1.5 }, { unit: 7, score: 1.5 }]);
    expect(await tie.searchBatch(["q", "r"], 1)).toEqual([[{ unit: 3, score: 1.5 }], [{ unit: 3, score: 1.5 }]]);
    units.close();
  });

  it("refuses members over different units or pages", async () => {
    await expect(openIndexes([join(tmp, "tfidf-paragraph"), join(tmp, "tfidf-passage")])).rejects.toThrow(
      `hybrid: ${join(tmp, "tfidf-paragraph")} has 2067 units, ${join(tmp, "tfidf-passage")} 3580: fusion needs the same units in the same order (build both from the same source with the same --unit)`,
    );
    await expect(openIndexes([join(tmp, "tfidf-paragraph"), join(tmp, "entity-2")])).rejects.toThrow(
      `hybrid: the units of ${join(tmp, "tfidf-paragraph")} and the pages of ${join(tmp, "entity-2")} do not come from the same pages: build them from the same source`,
    );
  });

  it("lets page-level members vote for the pages of finer units", async () => {
    const h = await openIndexes([join(tmp, "tfidf-paragraph"), join(tmp, "entity")]);
    const ranked = async (q: string, k: number) =>
      (await h.search(q, k)).map((x) => {
        const u = h.units.get(x.unit);
        return [u.wikipedia_title, u.start_paragraph_id, Number(x.score.toFixed(8))];
      });
    // The Huguenot paragraph TF-IDF ranks 1st gets 1/61, plus 1/62 for the Huguenot page (entity rank 2).
    expect((await ranked("Where did the Huguenots settle after the Normans?", 6))[0]).toEqual(["Huguenot", 5, Number((1 / 61 + 1 / 62).toFixed(8))]);
    expect((await ranked("[START_ENT] Warsaw [END_ENT] is the largest city of which country?", 2)).map((r) => r[0])).toEqual(["Warsaw", "Warsaw"]);
    await h.close();
  });

  it("fuses TF-IDF and entity pages of the SQuAD knowledge source", async () => {
    const h = await openIndexes([join(tmp, "tfidf-page"), join(tmp, "entity")]);
    expect(h.kind).toBe("hybrid");
    const ranked = async (q: string, k: number) => (await h.search(q, k)).map((x) => [h.units.get(x.unit).wikipedia_title, Number(x.score.toFixed(8))]);
    // Entity ranks Normans, Huguenot; TF-IDF ranks Huguenot, Normans: a tie, lower unit first.
    expect(await ranked("Where did the Huguenots settle after the Normans?", 3)).toEqual([
      ["Normans", 0.03252247],
      ["Huguenot", 0.03252247],
      ["Super Bowl 50", 0.01587302],
    ]);
    expect(await ranked("[START_ENT] Warsaw [END_ENT] is the largest city of which country?", 2)).toEqual([
      ["Warsaw", 0.03278689],
      ["Rhine", 0.01612903],
    ]);
    await h.close();
  });
});

describe("entity markers", () => {
  it("are removed for text retrievers only", async () => {
    expect(stripEntityMarkers(" [START_ENT] Warsaw [END_ENT] is big [END_ENT] ")).toBe("Warsaw  is big");
    expect(stripEntityMarkers("\x1c[START_ENT] a [END_ENT]\u3000")).toBe("a"); // Python str.strip() whitespace
    const tfidf = await openIndex(join(tmp, "tfidf-page"));
    expect(await tfidf.search("[START_ENT] Start Warsaw [END_ENT]", 5)).toEqual(await tfidf.search("Start Warsaw", 5));
    await tfidf.close();
  });
});
