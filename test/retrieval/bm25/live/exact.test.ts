// A live BM25 index after seeded random sequences of adds, replaces and deletes (commits with new
// segments, deletion marks and automatic merges) ranks and scores, to the bit, as a fresh build of its
// live pages in their order does — at k = 10 and k = 1000, after every commit, and after a forced merge
// to one segment; search-time k1 and b too. On SQuAD dev's 48 pages (passage units).

import { describe, expect, it } from "vitest";
import type { KiltPage } from "../../../../src/records/types.js";
import { openIndex } from "../../../../src/retrieval/open.js";
import { readManifest } from "../../../../src/retrieval/manifest.js";
import { verifyIndexDir } from "../../../../src/retrieval/verify.js";
import { mergeLiveIndex, updateLiveIndex } from "../../../../src/retrieval/bm25/live/writer.js";
import { seededRandom } from "../../../../src/util/random.js";
import { edited, freshBuild, idsFile, pagesFile, ranked, squad, tmp } from "./fixtures.js";

const { pages, queries } = squad(40);

/** The live model: pages in index order (a replaced page moves to the end, with added ones). */
async function expectSameAsFresh(root: string, dir: string, model: readonly KiltPage[], ks = [10, 1000]): Promise<void> {
  const fresh = await freshBuild(root, model);
  const a = await openIndex(dir);
  const b = await openIndex(fresh);
  try {
    for (const k of ks) expect(await ranked(a, queries, k)).toEqual(await ranked(b, queries, k));
    // Search-time k1 and b over the live statistics.
    const opts = { bm25: { k1: 1.2, b: 0.75 } };
    for (const q of queries.slice(0, 10)) {
      const ha = (await a.search(q, 10, opts)).map((h) => [a.units.get(h.unit).start_character, a.units.get(h.unit).wikipedia_id, h.score]);
      const hb = (await b.search(q, 10, opts)).map((h) => [b.units.get(h.unit).start_character, b.units.get(h.unit).wikipedia_id, h.score]);
      expect(ha).toEqual(hb);
    }
  } finally {
    await a.close();
    await b.close();
  }
}

describe("live BM25 index: exact statistics", () => {
  for (const [seed, steps] of [
    [7, 5],
    [1234, 3],
  ] as const) {
    it(`seed ${seed}, ${steps} updates: after every commit and after a merge, rankings and scores equal a fresh build of the live pages`, async () => {
      const root = tmp();
      const rand = seededRandom(seed);
      const pick = (n: number) => Math.floor(rand() * n);
      let model = pages.slice(0, 24);
      let outside = pages.slice(24);
      const dir = await freshBuild(root, model);
      let generations = 0;
      let merges = 0;
      let deleted = 0;
      for (let step = 0; step < steps; step++) {
        const add: KiltPage[] = [];
        const replace: KiltPage[] = [];
        const del: string[] = [];
        const touched = new Set<string>();
        for (let n = 1 + pick(3); n > 0 && outside.length > 0; n--) {
          const p = outside.splice(pick(outside.length), 1)[0];
          add.push(p);
          touched.add(p.wikipedia_id);
        }
        for (let n = pick(3); n > 0; n--) {
          const p = model[pick(model.length)];
          if (touched.has(p.wikipedia_id)) continue;
          touched.add(p.wikipedia_id);
          replace.push(edited(p, step));
        }
        for (let n = pick(3); n > 0; n--) {
          const p = model[pick(model.length)];
          if (touched.has(p.wikipedia_id)) continue;
          touched.add(p.wikipedia_id);
          del.push(p.wikipedia_id);
        }
        const ops = { add: pagesFile(root, `add-${step}.jsonl`, add), replace: replace.length ? pagesFile(root, `replace-${step}.jsonl`, replace) : undefined, delete: del.length ? idsFile(root, `delete-${step}.txt`, del) : undefined };
        const r = await updateLiveIndex(dir, ops, { mergePolicy: { factor: 3, floorUnits: 200 }, log: () => {} });
        generations++;
        merges += r.merged;
        deleted += r.unitsDeleted;
        expect(r.generation).toBe(generations);
        const gone = new Set([...replace.map((p) => p.wikipedia_id), ...del]);
        outside = [...outside, ...model.filter((p) => del.includes(p.wikipedia_id))];
        model = [...model.filter((p) => !gone.has(p.wikipedia_id)), ...add, ...replace];
        expect(readManifest(dir).params.live).toMatchObject({ generation: generations, units: r.units });
        await expectSameAsFresh(root, dir, model, step % 2 === 0 ? [10, 1000] : [10]);
      }
      // The sequence did delete units, and (the longer one) merged segments automatically before the forced merge.
      expect(deleted).toBeGreaterThan(0);
      if (steps >= 5) expect(merges).toBeGreaterThan(0);
      expect((await verifyIndexDir(dir)).problems).toEqual([]);
      const m = await mergeLiveIndex(dir, { log: () => {} });
      expect(m.segments).toBe(1);
      expect((await verifyIndexDir(dir)).problems).toEqual([]);
      await expectSameAsFresh(root, dir, model);
    }, 400_000);
  }
});
