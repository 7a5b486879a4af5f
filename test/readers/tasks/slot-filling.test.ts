// Slot filling: template questions for the relations of the KILT T-REx and zsRE samples, and the
// extractive reader (the small test model) answering them from real SQuAD article paragraphs.
import { describe, expect, test } from "vitest";
import { readJsonlAll } from "../../../src/records/jsonl.js";
import type { KiltRecord } from "../../../src/records/types.js";
import { ExtractiveReader } from "../../../src/readers/extractive/reader.js";
import { pageParagraphPassages, rankPassages } from "../../../src/readers/extractive/squad-data.js";
import { parseSlotInput, RELATION_TEMPLATES, SlotFillingReader, slotQuestion } from "../../../src/readers/tasks/slot-filling.js";
import { SAMPLES, smallModel, squad } from "../helpers.js";

describe("template questions", () => {
  test("every relation in the T-REx and zsRE samples has a template", async () => {
    const files = ["trex-train", "trex-dev", "trex-test_without_answers", "structured_zeroshot-train", "structured_zeroshot-dev", "structured_zeroshot-test_without_answers"];
    const relations = new Set<string>();
    for (const f of files) for (const r of await readJsonlAll<KiltRecord>(`${SAMPLES}/${f}-kilt.jsonl`)) relations.add(parseSlotInput(r.input as string).relation);
    expect(relations.size).toBe(20);
    expect([...relations].filter((rel) => RELATION_TEMPLATES[rel] === undefined)).toEqual([]);
  });

  test("questions for the zsRE dev samples", async () => {
    const recs = await readJsonlAll<KiltRecord>(`${SAMPLES}/structured_zeroshot-dev-kilt.jsonl`);
    expect(recs.map((r) => slotQuestion(r.input as string))).toEqual([
      "When was USA-88 launched?",
      "What was the military rank of Juan José Quesada?",
      "Who was the spouse of Shi Jingtang?",
      "What does Verde River flow into?",
      "Who was the spouse of Eleanor of Anjou?",
    ]);
    expect(parseSlotInput("Cirith Ungol [SEP] genre")).toEqual({ subject: "Cirith Ungol", relation: "genre" });
    expect(slotQuestion("Cirith Ungol [SEP] record producer")).toBe("What is the record producer of Cirith Ungol?");
    expect(slotQuestion("Cirith Ungol")).toBe("What is Cirith Ungol?");
  });
});

describe("SlotFillingReader", () => {
  test("answers from the subject's SQuAD article (held-out articles, small model)", async () => {
    const reader = new SlotFillingReader(new ExtractiveReader(smallModel().model));
    const cases: [string, string][] = [
      ["University of Chicago", "founded by"],
      ["Rhine", "mouth of the watercourse"],
      ["Yuan dynasty", "founded by"],
      ["Jacksonville, Florida", "located in the administrative territorial entity"],
    ];
    const out = [];
    for (const [s, rel] of cases) {
      const page = squad().pages.find((p) => p.wikipedia_title === s)!;
      const input = `${s} [SEP] ${rel}`;
      const a = await reader.read({ id: s, input, output: [] }, rankPassages(slotQuestion(input), pageParagraphPassages(page), 5));
      out.push([a.meta!.question, a.answer, a.provenance[0].start_paragraph_id]);
    }
    expect(out).toEqual([
      ["Who founded University of Chicago?", "William Rainey Harper", 3],
      ["What does Rhine flow into?", "Romansh", 1],
      ["Who founded Yuan dynasty?", "Zhu Yuanzhang", 22],
      ["In which region is Jacksonville, Florida located?", "United States", 17],
    ]);
  });
});
