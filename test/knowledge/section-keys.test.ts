// Section-level provenance matches (issue 36): the section values tartan's converters write for SQuAD's gold
// records and the ones its retrievers write for the same paragraphs agree ("Section::::Abstract.", KILT gold's
// value), so scoring with --rank-keys wikipedia_id,section gives points instead of a silent zero.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../src/knowledge/squad.js";
import { unitsOfPage } from "../../src/retrieval/sources.js";

const V11 = join(import.meta.dirname, "../../../shared/data/squad/dev-v1.1.reconstructed.json");

describe("section keys", () => {
  it("gold provenance and retrieved paragraphs of SQuAD carry the same section", () => {
    const squad = readSquadFile(V11);
    squad.data = squad.data.slice(0, 2);
    const pages = squadToPages(squad);
    const { records } = squadQuestionsToKilt(squad, { pages });
    const gold = new Set(records.flatMap((r) => (r.output ?? []).flatMap((o) => (o.provenance ?? []).map((p) => `${p.wikipedia_id}|${p.section}|${p.start_paragraph_id}`))));
    const units = pages.flatMap((p) => unitsOfPage(p, { unit: "paragraph" }));
    const retrieved = new Set(units.map((u) => `${u.wikipedia_id}|${u.section}|${u.start_paragraph_id}`));
    expect(gold.size).toBeGreaterThan(50);
    expect([...gold].filter((g) => !retrieved.has(g))).toEqual([]);
    expect(units[0].section).toBe("Section::::Abstract.");
  });
});
