import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fromDump, fromSquad } from "../../../src/knowledge/build.js";
import { buildEntityIndex, titleVariants } from "../../../src/retrieval/entity/build.js";
import { findMentions, markedMention, mentionKey, mentionTokens } from "../../../src/retrieval/entity/mentions.js";
import { openEntity, type EntityRetriever } from "../../../src/retrieval/entity/search.js";
import { pagesFromFile } from "../../../src/retrieval/sources.js";
import type { KiltPage } from "../../../src/records/types.js";

const V11 = new URL("../../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const DUMP = new URL("../../fixtures/dump/small.xml", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-entity-"));

describe("mention keys", () => {
  it("lowercase, drop diacritics, fold a final plural s", () => {
    expect(mentionTokens("Café Müller")).toEqual(["cafe", "muller"]);
    expect(mentionKey("Huguenots")).toBe("huguenot");
    expect(mentionKey("Huguenot")).toBe("huguenot");
    expect(mentionKey("Glass")).toBe("glass");
    expect(mentionKey("Bus")).toBe("bus");
    expect(mentionKey("Fresno, California")).toBe("fresno , california");
    expect(mentionKey("The")).toBeNull();
    expect(mentionKey("...")).toBeNull();
  });
  it("title variants drop a (qualifier) and a , suffix", () => {
    expect(titleVariants("Sky (United Kingdom)")).toEqual(["Sky (United Kingdom)", "Sky"]);
    expect(titleVariants("Fresno, California")).toEqual(["Fresno, California", "Fresno"]);
    expect(titleVariants("Warsaw")).toEqual(["Warsaw"]);
  });
  it("finds the longest known mention first, left to right", () => {
    const known = new Set(["new york", "new york city", "york", "the beatle"]);
    const tokens = mentionTokens("The Beatles played New York City and York");
    expect(findMentions(tokens, (k) => known.has(k), 8).map((m) => [m.key, m.start, m.end, m.weight])).toEqual([
      ["the beatle", 0, 2, 1],
      ["new york city", 3, 6, 3],
      ["york", 7, 8, 1],
    ]);
  });
  it("skips the longer spans at a token no known key of several tokens starts with, and only those", () => {
    const known = new Set(["new york", "new york city", "york", "the beatle"]);
    const tokens = mentionTokens("The Beatles played New York City and York");
    const firstWords = new Set([...known].filter((k) => k.includes(" ")).map((k) => k.slice(0, k.indexOf(" "))));
    expect(firstWords).toEqual(new Set(["new", "the"]));
    const asked: string[] = [];
    const keys = (may: (t: string) => boolean) => findMentions(tokens, (k) => (asked.push(k), known.has(k)), 8, may).map((m) => m.key);
    expect(keys((t) => firstWords.has(t))).toEqual(["the beatle", "new york city", "york"]);
    // Spans are asked for only at "the" and "new" (longest first), single tokens elsewhere.
    expect(asked.filter((k) => k.includes(" ")).map((k) => k.split(" ")[0])).toEqual([...Array(7).fill("the"), ...Array(3).fill("new")]);
    asked.length = 0;
    // A filter that rules every token out leaves the single-token mentions.
    expect(keys(() => false)).toEqual(["york", "york"]);
    expect(asked.every((k) => !k.includes(" "))).toBe(true);
  });
  it("reads the marked mention", () => {
    expect(markedMention("who is [START_ENT] Tesla [END_ENT] ?")).toBe(" Tesla ");
    expect(markedMention("no marks")).toBeNull();
    expect(markedMention("[START_ENT] unterminated")).toBeNull();
  });
});

describe("alias table from anchors", () => {
  it("gives p(page | mention) from link counts plus title pseudo-links", async () => {
    const pages: KiltPage[] = [
      { wikipedia_id: "10", wikipedia_title: "Paris", text: ["Paris\n", "Capital of France.\n"] },
      { wikipedia_id: "11", wikipedia_title: "Paris, Texas", text: ["Paris, Texas\n", "A town.\n"] },
      {
        wikipedia_id: "12",
        wikipedia_title: "Travel",
        text: ["Travel\n", "Paris and Paris and Paris and the Lone Star town Paris.\n"],
        anchors: [
          { text: "Paris", href: "Paris", paragraph_id: 1, start: 0, end: 5 },
          { text: "Paris", href: "Paris", paragraph_id: 1, start: 10, end: 15, wikipedia_id: "10" },
          { text: "Paris", href: "Paris%2C%20Texas", paragraph_id: 1, start: 20, end: 25 },
          { text: "Paris", href: "Nowhere", paragraph_id: 1, start: 49, end: 54 },
        ],
      },
    ];
    const dir = join(tmp, "tiny");
    expect(await buildEntityIndex(pages, dir, { source: "test" })).toEqual({ units: 3, aliases: 3, anchors: 4, unresolvedAnchors: 1, runs: 0, resumedPages: 0 }) // paris, paris , texa(s), travel;
    const r = await openEntity(dir);
    // "paris": 2 anchors + 1 title (+1 "Paris" variant of "Paris, Texas") → Paris 3/5, Paris, Texas 2/5.
    expect(await r.search("[START_ENT] Paris [END_ENT] is lovely", 5)).toEqual([{ unit: 0, score: 0.6 }, { unit: 1, score: 0.4 }]);
    // One mention, p = 1, weight 2 content words ("paris", "texas"; the comma is punctuation).
    expect(await r.search("I drove to Paris, Texas", 5)).toEqual([{ unit: 1, score: 2 }]);
    // A marked mention that is no alias falls back to the aliases inside it.
    expect(await r.search("[START_ENT] old Paris town [END_ENT]", 5)).toEqual([{ unit: 0, score: 0.6 }, { unit: 1, score: 0.4 }]);
    expect(await r.search("nothing known", 5)).toEqual([]);
    await r.close();
  });
});

describe("alias table from a MediaWiki export", () => {
  it("counts the anchors and leaves out those to pages outside the source", async () => {
    const pages = join(tmp, "dump-pages.jsonl");
    await fromDump(DUMP, { out: pages }, () => {});
    // 4 articles whose 42 links all point outside these 4 pages: only titles become aliases.
    expect(await buildEntityIndex(pagesFromFile(pages), join(tmp, "dump"), { source: pages })).toEqual({ units: 4, aliases: 4, anchors: 42, unresolvedAnchors: 42, runs: 0, resumedPages: 0 });
    const r = await openEntity(join(tmp, "dump"));
    expect((await r.search("Ada Lovelace worked with Charles Babbage", 5)).map((h) => [r.units.get(h.unit).wikipedia_title, h.score])).toEqual([["Ada Lovelace", 2]]);
    expect((await r.search("[START_ENT] Mercury [END_ENT] is hot", 5)).map((h) => r.units.get(h.unit).wikipedia_title)).toEqual(["Mercury"]);
    await r.close();
  });
});

describe("entity retrieval on the SQuAD knowledge source", () => {
  let r: EntityRetriever;
  beforeAll(async () => {
    const pages = join(tmp, "pages.jsonl");
    await fromSquad(V11, pages, () => {});
    expect(await buildEntityIndex(pagesFromFile(pages), join(tmp, "squad"), { source: pages })).toEqual({ units: 48, aliases: 52, anchors: 0, unresolvedAnchors: 0, runs: 0, resumedPages: 0 });
    r = await openEntity(join(tmp, "squad"));
  });
  const ranked = async (q: string) => (await r.search(q, 10)).map((h) => [r.units.get(h.unit).wikipedia_title, h.score]);

  it("ranks pages for fixed inputs", async () => {
    expect(await ranked("Which NFL team represented the AFC at Super Bowl 50?")).toEqual([["Super Bowl 50", 3]]);
    expect(await ranked("[START_ENT] Warsaw [END_ENT] is the largest city of which country?")).toEqual([["Warsaw", 1]]);
    expect(await ranked("Where did the Huguenots settle after the Normans?")).toEqual([["Normans", 1], ["Huguenot", 1]]);
    expect(await ranked("Who owns Sky in Victoria?")).toEqual([["Sky (United Kingdom)", 1], ["Victoria (Australia)", 1]]);
    expect(await ranked("Who did Tesla work for in Paris?")).toEqual([]);
  });
});
