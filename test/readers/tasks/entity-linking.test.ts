// Entity linking on the KILT WNED-WIKI dev samples: top entity-retriever page title, or the mention.
import { describe, expect, test } from "vitest";
import { evaluate } from "../../../src/eval/index.js";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { EntityLinkingReader, markedMention } from "../../../src/readers/tasks/entity-linking.js";
import { answerRecord, type ReaderPassage } from "../../../src/readers/types.js";
import { SAMPLES } from "../helpers.js";

const page = (title: string, score: number): ReaderPassage => ({ text: "", provenance: { wikipedia_id: title.replaceAll(" ", "_"), title }, score });

describe("EntityLinkingReader", () => {
  test("marked mentions of the 5 WNED samples", async () => {
    const recs = await readJsonlAll<KiltRecord>(`${SAMPLES}/wned-dev-kilt.jsonl`);
    expect(recs.map((r) => markedMention(r.input as string))).toEqual(["Sculcoates", "English", "Rugby League World Cup", "Great Britain", "Hull"]);
    expect(markedMention("no markers")).toBe("");
  });

  test("answers with the highest-scored page title (ties: first); KILT accuracy on the samples", async () => {
    const recs = await readJsonlAll<KiltRecord>(`${SAMPLES}/wned-dev-kilt.jsonl`);
    // Candidate pages as an entity retriever would return them (alias-table style), not in score order.
    const hits: ReaderPassage[][] = [
      [page("Sculcoates", 5.1), page("Sculcoates (UK Parliament constituency)", 2.2)],
      [page("English language", 3.0), page("English people", 3.4), page("England", 1.0)],
      [page("Rugby League World Cup", 7.5), page("1954 Rugby League World Cup", 7.5)],
      [page("Great Britain", 4.0), page("Great Britain national rugby league team", 3.9)],
      [page("Kingston upon Hull", 2.5), page("Hull F.C.", 2.4), page("Hull Kingston Rovers", 2.0)],
    ];
    const reader = new EntityLinkingReader();
    const guesses = [];
    for (let i = 0; i < recs.length; i++) guesses.push(answerRecord(recs[i], await reader.read(recs[i], hits[i])));
    expect(guesses.map((g) => g.output[0].answer)).toEqual(["Sculcoates", "English people", "Rugby League World Cup", "Great Britain", "Kingston upon Hull"]);
    expect(guesses[1].output[0].provenance).toEqual([{ wikipedia_id: "English_people", title: "English people" }]);
    const res = await evaluate(recs, guesses, { mode: "downstream" });
    expect(res.eval_downstream!.downstream.accuracy).toBe(0.6);
  });

  test("no candidates: the mention itself (2 of the 5 samples are titled exactly like their mention)", async () => {
    const recs = await readJsonlAll<KiltRecord>(`${SAMPLES}/wned-dev-kilt.jsonl`);
    const reader = new EntityLinkingReader();
    const guesses = [];
    for (const r of recs) guesses.push(answerRecord(r, await reader.read(r, [page("", 9)])));
    expect(guesses[0].output[0]).toEqual({ answer: "Sculcoates", provenance: [], meta: { fallback: "mention" } });
    const res = await evaluate(recs, guesses, { mode: "downstream" });
    expect(res.eval_downstream!.downstream.accuracy).toBe(0.4);
  });
});
