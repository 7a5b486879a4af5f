// Dense retrieval with USE lite on real data: the first 16 paragraphs of the first three SQuAD v1.1 dev
// articles (48 paragraph units, title + text), searched with SQuAD questions. The expected top 3 were
// recorded from this index; the full-corpus figures are in docs/benchmarks.md (bench/dense.mjs squad).

import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSquadFile, squadToPages, type SquadFile } from "../../../src/knowledge/squad.js";
import { buildDenseIndex, openDense, type DenseRetriever } from "../../../src/retrieval/dense/index.js";
import { unitsOfPage } from "../../../src/retrieval/sources.js";
import { unitProvenance, type Unit } from "../../../src/retrieval/units/unit.js";

const SQUAD = join(import.meta.dirname, "../../../../shared/data/squad/dev-v1.1.reconstructed.json");

// [article, paragraph of the question, question, top 3 as [unit, page, KILT paragraph id]]
const EXPECTED: [number, number, string, [number, string, number][]][] = [
  [0, 0, "Which NFL team represented the AFC at Super Bowl 50?", [[8, "squad:Super_Bowl_50", 9], [1, "squad:Super_Bowl_50", 2], [6, "squad:Super_Bowl_50", 7]]],
  [0, 9, "Whic Carolina Panthers running back was waived?", [[14, "squad:Super_Bowl_50", 15], [9, "squad:Super_Bowl_50", 10], [11, "squad:Super_Bowl_50", 12]]],
  [1, 3, "What was Warsaw the most diverse of in Poland?", [[19, "squad:Warsaw", 4], [22, "squad:Warsaw", 7], [20, "squad:Warsaw", 5]]],
  [1, 12, "Where can a tribute to the fall of Warsaw be found?", [[28, "squad:Warsaw", 13], [22, "squad:Warsaw", 7], [23, "squad:Warsaw", 8]]],
  [2, 5, "What was the Norman religion?", [[33, "squad:Normans", 2], [42, "squad:Normans", 11], [38, "squad:Normans", 7]]],
  [2, 14, "What were the origins of the Raouliii family?", [[46, "squad:Normans", 15], [44, "squad:Normans", 13], [40, "squad:Normans", 9]]],
];

let squad: SquadFile;
let units: Unit[];
let retriever: DenseRetriever;

beforeAll(async () => {
  const full = readSquadFile(SQUAD);
  squad = { data: full.data.slice(0, 3).map((a) => ({ ...a, paragraphs: a.paragraphs.slice(0, 16) })) };
  units = squadToPages(squad).flatMap((page) => unitsOfPage(page, { unit: "paragraph" }));
  const dir = mkdtempSync(join(tmpdir(), "tartan-dense-squad-"));
  await buildDenseIndex(units, dir, { encoder: { type: "use-lite" }, unit: "paragraph", source: SQUAD });
  retriever = await openDense(dir);
}, 300_000);

afterAll(async () => {
  await retriever?.close();
});

describe("USE lite dense retrieval on SQuAD paragraphs", () => {
  it("has the data file", () => {
    expect(existsSync(SQUAD)).toBe(true);
    expect(units.length).toBe(48);
    expect(retriever.manifest.params).toMatchObject({ dim: 512, encoder: { type: "use-lite" } });
  });

  it("ranks the recorded top 3 for fixed questions", async () => {
    for (const [a, p, question, top3] of EXPECTED) {
      expect(squad.data[a].paragraphs[p].qas[0].question).toBe(question);
      const hits = await retriever.search(question, 3);
      expect(hits.map((h) => [h.unit, retriever.units.get(h.unit).wikipedia_id, retriever.units.get(h.unit).start_paragraph_id])).toEqual(top3);
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1].score).toBeGreaterThan(hits[i].score);
    }
  });

  it("answers a batch as it answers one question at a time", async () => {
    const questions = EXPECTED.map((e) => e[2]);
    const batch = await retriever.searchBatch(questions, 5);
    for (let i = 0; i < questions.length; i++) {
      const one = await retriever.search(questions[i], 5);
      expect(batch[i].map((h) => h.unit)).toEqual(one.map((h) => h.unit));
      batch[i].forEach((h, j) => expect(Math.abs(h.score - one[j].score)).toBeLessThan(1e-5));
    }
  });

  it("gives KILT provenance pointing at the gold paragraph when it ranks first", async () => {
    const [hit] = await retriever.search(squad.data[1].paragraphs[3].qas[0].question, 1);
    const prov = unitProvenance(retriever.units.get(hit.unit), hit.score, false);
    expect(prov).toMatchObject({ wikipedia_id: "squad:Warsaw", title: "Warsaw", start_paragraph_id: 4, end_paragraph_id: 4, start_character: 0 });
    expect(prov.end_character).toBe([...squad.data[1].paragraphs[3].context].length);
  });
});
