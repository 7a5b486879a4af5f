// The dialogue reader on the two Wizard of Wikipedia dev records whose gold page ("Prime number") is
// one of the SQuAD articles, read from that page's real paragraphs.
import { describe, expect, test } from "vitest";
import { evaluate } from "../../../src/eval/index.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { pageParagraphPassages } from "../../../src/readers/extractive/squad-data.js";
import { DialogueReader, dialogueTurns } from "../../../src/readers/tasks/dialogue.js";
import { rankSentences } from "../../../src/readers/tasks/overlap.js";
import { answerRecord } from "../../../src/readers/types.js";
import { KILT_DEV, squad } from "../helpers.js";

const IDS = ["54adec4a-99cd-11ea-aa09-57c1ffc5a65b_3", "54abc794-99cd-11ea-aa09-57c1ffc5a65b_1"];

async function records(): Promise<KiltRecord[]> {
  const all = await readJsonlAll<KiltRecord>(`${KILT_DEV}/wow-dev-kilt.jsonl`);
  expect(all.length).toBe(3054);
  return IDS.map((id) => all.find((r) => r.id === id)!);
}
const primePassages = () => pageParagraphPassages(squad().pages.find((p) => p.wikipedia_title === "Prime number")!);

describe("DialogueReader", () => {
  test("turns of a WoW input", async () => {
    const [r] = await records();
    const turns = dialogueTurns(r.input as string);
    expect(turns.length).toBe(7);
    expect(turns[6]).toBe("no, but most things come in even numbers, like a dozen or 6 pack");
  });

  test("the best supporting sentence of the Prime number page, with provenance and offsets", async () => {
    const [r0, r1] = await records();
    const reader = new DialogueReader();
    const ps = primePassages();
    expect(ps.length).toBe(31);
    const a0 = await reader.read(r0, ps);
    expect(a0.answer).toBe(
      "If we repeat the test n times and pass every time, then the probability that our number is composite is 1/(1-p)n, which decreases exponentially with the number of tests, so we can be as sure as we like (though never perfectly sure) that the number is prime.",
    );
    expect(a0.provenance).toEqual([
      {
        wikipedia_id: "squad:Prime_number",
        title: "Prime number",
        section: "Section::::Abstract.",
        start_paragraph_id: 11,
        start_character: 0,
        end_paragraph_id: 11,
        end_character: 1072,
      },
    ]);
    expect(a0.meta).toEqual({ passage: 10, sentence: 6, start: 729, end: 986 });
    expect([...ps[10].text].slice(729, 986).join("")).toBe(a0.answer);
    const a1 = await reader.read(r1, ps);
    expect(a1.answer).toBe("After the Greeks, little happened with the study of prime numbers until the 17th century.");
    expect(a1.meta).toEqual({ passage: 8, sentence: 0, start: 0, end: 89 });
    // Without the history the last turn alone decides.
    const last = await new DialogueReader({ historyWeight: 0 }).read(r1, ps);
    expect(last.answer).toBe(rankSentences(dialogueTurns(r1.input as string)[1], ps)[0].text);
  });

  test("KILT evaluation of the two replies (low word overlap with the wizard's reply)", async () => {
    const recs = await records();
    const reader = new DialogueReader();
    const guesses = [];
    for (const r of recs) guesses.push(answerRecord(r, await reader.read(r, primePassages())));
    const res = await evaluate(recs, guesses, {});
    const d = res.eval_downstream!;
    // SQuAD page ids (squad:Prime_number) are not KILT's (23666): no KILT credit for the right page.
    expect([d.retrieval.Rprec, d.kilt["KILT-f1"]]).toEqual([0, 0]);
    expect(+d.downstream.f1.toFixed(4)).toBe(0.132);
  });

  test("no passages → empty reply", async () => {
    const [r] = await records();
    expect(await new DialogueReader().read(r, [])).toEqual({ answer: "", provenance: [], score: 0, meta: { sentences: 0 } });
  });
});
