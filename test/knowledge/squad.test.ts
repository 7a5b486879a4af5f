import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cpSlice } from "../../src/knowledge/codepoints.js";
import {
  readSquadFile,
  squadPageId,
  squadQuestionsToKilt,
  squadToPages,
  validateSquad,
  type SquadFile,
} from "../../src/knowledge/squad.js";
import type { KiltRecord } from "../../src/records/types.js";

const DATA = new URL("../../../shared/data/squad/", import.meta.url).pathname;
const V11 = `${DATA}dev-v1.1.reconstructed.json`;
const V20 = `${DATA}dev-v2.0.reconstructed.json`;
const HAYSTACK = `${DATA}haystack-sample/small.json`;

describe("SQuAD v1.1 dev → KILT pages", () => {
  const squad = readSquadFile(V11);
  const pages = squadToPages(squad);

  it("makes 48 pages holding the 2,067 paragraphs after a title line", () => {
    expect(pages.length).toBe(48);
    expect(pages.reduce((n, p) => n + p.text.length - 1, 0)).toBe(2067);
    const first = pages[0];
    expect(first._id).toBe("squad:Super_Bowl_50");
    expect(first.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect(first.wikipedia_title).toBe("Super Bowl 50");
    expect(first.text[0]).toBe("Super Bowl 50\n");
    expect(first.text[1]).toBe(`${squad.data[0].paragraphs[0].context}\n`);
    expect(first.text.length).toBe(squad.data[0].paragraphs.length + 1);
    expect(first.history).toEqual({ url: "https://en.wikipedia.org/wiki/Super_Bowl_50" });
    expect(first.meta).toEqual({ source: "squad", squad_title: "Super_Bowl_50", article_index: 0 });
  });

  it("writes titles and URLs of the odd titles Wikipedia's way", () => {
    const byTitle = new Map(pages.map((p) => [p.wikipedia_title, p]));
    expect(byTitle.get("Fresno, California")?.history?.url).toBe("https://en.wikipedia.org/wiki/Fresno,_California");
    expect(byTitle.get("Sky (United Kingdom)")?.wikipedia_id).toBe("squad:Sky_(United_Kingdom)");
    expect(byTitle.get("Sky (United Kingdom)")?.history?.url).toBe("https://en.wikipedia.org/wiki/Sky_(United_Kingdom)");
    expect(pages[47].wikipedia_title).toBe("Force");
    expect(squadPageId("Force")).toBe("squad:Force");
  });

  it("gives the same pages on every run", () => {
    expect(squadToPages(readSquadFile(V11))).toEqual(pages);
  });
});

describe("SQuAD v1.1 dev questions → KILT records", () => {
  const squad = readSquadFile(V11);
  const pages = squadToPages(squad);
  const { records, stats } = squadQuestionsToKilt(squad, { pages });
  const byId = new Map(records.map((r) => [String(r.id), r]));

  it("converts all 10,570 questions, one output per distinct answer text", () => {
    expect(records.length).toBe(10570);
    expect(stats).toMatchObject({ articles: 48, paragraphs: 2067, questions: 10570, answers: 34726, outputs: 18015, records: 10570, impossible: 0 });
    expect(stats.unmapped).toEqual([]);
  });

  it("has no offset exceptions: every answer span slices its text out of the page", () => {
    expect(stats.offsetExceptions).toEqual([]);
    const pageById = new Map(pages.map((p) => [p.wikipedia_id, p]));
    let spans = 0;
    for (const r of records) {
      for (const o of r.output) {
        const prov = o.provenance![0];
        const page = pageById.get(String(prov.wikipedia_id))!;
        expect(prov.start_paragraph_id).toBe(prov.end_paragraph_id);
        expect(cpSlice(page.text[prov.start_paragraph_id as number], prov.start_character!, prov.end_character!)).toBe(o.answer);
        spans++;
      }
    }
    expect(spans).toBe(18015);
  });

  it("writes the first record exactly", () => {
    const expected: KiltRecord = {
      id: "56be4db0acb8001400a502ec",
      input: "Which NFL team represented the AFC at Super Bowl 50?",
      output: [
        {
          answer: "Denver Broncos",
          provenance: [
            {
              wikipedia_id: "squad:Super_Bowl_50",
              title: "Super Bowl 50",
              section: "Section::::Abstract.",
              start_paragraph_id: 1,
              start_character: 177,
              end_paragraph_id: 1,
              end_character: 191,
              bleu_score: 1.0,
            },
          ],
        },
      ],
      meta: { article_index: 0, article_title: "Super_Bowl_50", paragraph_index: 0 },
    };
    expect(records[0]).toEqual(expected);
  });

  it("keeps distinct answers in first-seen order with their own spans", () => {
    const force = byId.get("57373a9fc3c5551400e51e7d")!;
    expect(force.input).toBe("What is the strongest main interaction?");
    expect(force.meta).toEqual({ article_index: 47, article_title: "Force", paragraph_index: 1 });
    expect(force.output.map((o) => [o.answer, o.provenance![0].start_paragraph_id, o.provenance![0].start_character, o.provenance![0].end_character])).toEqual([
      ["strong", 2, 444, 450],
      ["strong,", 2, 444, 451],
      ["strong, electromagnetic", 2, 444, 467],
    ]);
    const oxygen = byId.get("571bb2269499d21900609cad")!;
    expect(oxygen.output.map((o) => [o.answer, o.provenance![0].wikipedia_id, o.provenance![0].start_character])).toEqual([
      ["monitoring of atmospheric oxygen levels show a global downward trend", "squad:Oxygen", 559],
      ["down", "squad:Oxygen", 613],
      ["downward", "squad:Oxygen", 613],
    ]);
    expect(oxygen.meta).toEqual({ article_index: 12, article_title: "Oxygen", paragraph_index: 0 });
  });
});

describe("SQuAD v2.0 dev questions", () => {
  const v2 = readSquadFile(V20);
  const v11pages = squadToPages(readSquadFile(V11));

  it("leaves the 5,945 unanswerable questions out by default, or keeps them with no output", () => {
    const { records, stats } = squadQuestionsToKilt(v2);
    expect(stats).toMatchObject({ articles: 35, paragraphs: 1204, questions: 11873, impossible: 5945, records: 5928, outputs: 10279 });
    expect(stats.offsetExceptions).toEqual([]);
    expect(records.length).toBe(5928);
    const kept = squadQuestionsToKilt(v2, { impossible: "keep" });
    expect(kept.records.length).toBe(11873);
    const imp = kept.records.find((r) => r.id === "5ad4bbbb5b96ef001a109e88")!;
    expect(imp.output).toEqual([]);
    expect(imp.meta).toMatchObject({ is_impossible: true, article_title: "Warsaw" });
  });

  it("points v2.0 questions into the v1.1 pages by paragraph text, across reordered articles", () => {
    const own = squadQuestionsToKilt(v2);
    const onV11 = squadQuestionsToKilt(v2, { pages: v11pages });
    expect(onV11.stats.unmapped).toEqual([]);
    expect(onV11.records.length).toBe(5928);
    const q = (rs: KiltRecord[]) => rs.find((r) => r.id === "5732b6b5328d981900602021")!;
    // Warsaw: v2.0's first paragraph is v1.1's 49th.
    expect(q(own.records).output[0].provenance![0]).toMatchObject({ wikipedia_id: "squad:Warsaw", start_paragraph_id: 1, start_character: 0, end_character: 6 });
    expect(q(onV11.records).output[0].provenance![0]).toMatchObject({ wikipedia_id: "squad:Warsaw", start_paragraph_id: 49, start_character: 0, end_character: 6 });
    expect(q(onV11.records).meta).toEqual({ article_index: 32, article_title: "Warsaw", paragraph_index: 0 });
    const pageById = new Map(v11pages.map((p) => [p.wikipedia_id, p]));
    for (const r of onV11.records)
      for (const o of r.output) {
        const p = o.provenance![0];
        expect(cpSlice(pageById.get(String(p.wikipedia_id))!.text[p.start_paragraph_id as number], p.start_character!, p.end_character!)).toBe(o.answer);
      }
  });
});

describe("reconstructed offsets against the official ones (haystack sample, official SQuAD 2.0 offsets)", () => {
  it("57 of the 881 answers start elsewhere in the reconstruction, and both spans hold the answer", () => {
    const official = readSquadFile(HAYSTACK);
    const rebuilt = readSquadFile(V20);
    const starts = (f: SquadFile) => {
      const m = new Map<string, { context: string; answers: { text: string; answer_start: number }[] }>();
      for (const a of f.data) for (const p of a.paragraphs) for (const q of p.qas) m.set(String(q.id), { context: p.context, answers: q.answers });
      return m;
    };
    const o = starts(official);
    const r = starts(rebuilt);
    let same = 0;
    let differ = 0;
    for (const [id, oq] of o) {
      const rq = r.get(id)!;
      expect(rq.context).toBe(oq.context);
      oq.answers.forEach((a, i) => {
        const b = rq.answers[i];
        expect(b.text).toBe(a.text);
        expect(cpSlice(oq.context, a.answer_start, a.answer_start + a.text.length)).toBe(a.text);
        expect(cpSlice(rq.context, b.answer_start, b.answer_start + b.text.length)).toBe(b.text);
        if (a.answer_start === b.answer_start) same++;
        else differ++;
      });
    }
    expect(o.size).toBe(626);
    expect([same, differ]).toEqual([824, 57]);
    const { stats } = squadQuestionsToKilt(official);
    expect(stats.offsetExceptions).toEqual([]);
    expect(stats.records).toBe(293);
  });
});

describe("offset exceptions and format errors", () => {
  const tiny = (answers: { text: string; answer_start: number }[]): SquadFile => ({
    version: "test",
    data: [{ title: "Tiny_page", paragraphs: [{ context: "Alpha beta gamma. Beta again, beta.", qas: [{ id: "q1", question: "Which?", answers }] }] }],
  });

  it("relocates an answer to the nearest copy of its text, or drops it, and reports both", () => {
    const { records, stats } = squadQuestionsToKilt(
      tiny([
        { text: "beta", answer_start: 29 }, // wrong by one: the copy at 30 is nearest
        { text: "delta", answer_start: 0 }, // nowhere in the context
        { text: "gamma", answer_start: 11 },
      ]),
    );
    expect(records[0].output.map((o) => [o.answer, o.provenance![0].start_character, o.provenance![0].end_character])).toEqual([
      ["beta", 30, 34],
      ["gamma", 11, 16],
    ]);
    expect(stats.offsetExceptions).toEqual([
      { question_id: "q1", answer: "beta", answer_start: 29, action: "relocated", used_start: 30 },
      { question_id: "q1", answer: "delta", answer_start: 0, action: "dropped" },
    ]);
  });

  it("counts offsets in code points, as SQuAD (Python) does", () => {
    const f: SquadFile = {
      data: [{ title: "Clef", paragraphs: [{ context: "The 𝄞 clef is a G clef.", qas: [{ id: "q", question: "?", answers: [{ text: "G clef", answer_start: 16 }] }] }] }],
    };
    const { records, stats } = squadQuestionsToKilt(f);
    expect(stats.offsetExceptions).toEqual([]);
    expect(records[0].output[0].provenance![0]).toMatchObject({ start_character: 16, end_character: 22 });
  });

  it("names the file and JSON path of a malformed entry", () => {
    expect(() => validateSquad({ data: [{ title: "T", paragraphs: [{ context: "c", qas: [{ id: "x", question: "q", answers: [{ text: "a", answer_start: -1 }] }] }] }] }, "f.json")).toThrow(
      "f.json: data[0].paragraphs[0].qas[0].answers[0].answer_start: expected a non-negative integer, found -1",
    );
    expect(() => validateSquad({ data: [{ title: "T", paragraphs: [{ qas: [] }] }] }, "f.json")).toThrow("f.json: data[0].paragraphs[0].context: expected a string, found undefined");
    expect(() => validateSquad([], "f.json")).toThrow("f.json: $: expected an object, found an array");
    const dir = mkdtempSync(join(tmpdir(), "tartan-squad-"));
    writeFileSync(join(dir, "bad.json"), "{\"data\": [");
    expect(() => readSquadFile(join(dir, "bad.json"))).toThrow(/bad\.json: \$: invalid JSON/);
    expect(() => squadToPages({ data: [{ title: "A", paragraphs: [] }, { title: "A", paragraphs: [] }] })).toThrow("share the title");
  });
});
