// The mapping job: page lookups, what is written for a mapped provenance, dev/test dropping with
// reasons, train keeping, and the SQuAD v1.1 dev answers mapped back through records with their
// paragraph as context (every answer on its gold paragraph and characters).

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readSquadFile, squadQuestionsToKilt, squadToPages } from "../../src/knowledge/squad.js";
import { emptyReport, mapFile, MemoryPages, ProvenanceMapper, sectionOf, splitFromName } from "../../src/mapping/map.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltPage, KiltRecord, Provenance } from "../../src/records/types.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const squad = readSquadFile(V11);
const pages = squadToPages(squad);
const tmp = mkdtempSync(join(tmpdir(), "tartan-map-"));

const wiki: KiltPage = {
  wikipedia_id: "2448355",
  wikipedia_title: "Photograph (Ringo Starr song)",
  text: [
    "Photograph (Ringo Starr song)\n",
    '"Photograph" is a song by English musician Ringo Starr.\n',
    "Section::::Background and composition.\n",
    "Starr and George Harrison began writing the song in 1971.\n",
  ],
};

describe("page lookups", () => {
  const mem = new MemoryPages([wiki, ...pages]);
  it("finds pages by id, exact or display title, and Wikipedia URL (KILT's rules)", () => {
    expect(mem.size).toBe(49);
    expect(mem.getPageById(" 2448355 ")?.wikipedia_title).toBe("Photograph (Ringo Starr song)");
    expect(mem.getPageByTitle("Super Bowl 50")?.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect(mem.getPageByTitle("super_Bowl_50")?.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect(mem.getPageFromUrl("https://en.wikipedia.org/wiki/Photograph_(Ringo_Starr_song)")?.wikipedia_id).toBe("2448355");
    expect(mem.getPageFromUrl("https://en.wikipedia.org/w/index.php?title=Super_Bowl_50&oldid=1")?.wikipedia_id).toBe("squad:Super_Bowl_50");
    expect(mem.getPageById("nope")).toBeUndefined();
  });

  it("names the section of a paragraph, the lead when no header precedes it", () => {
    expect(sectionOf(wiki, 1)).toBe("Section::::Abstract.");
    expect(sectionOf(wiki, 3)).toBe("Section::::Background and composition.\n");
  });

  it("reads the split from file names", () => {
    expect(splitFromName("data/nq-dev-kilt.jsonl")).toBe("dev");
    expect(splitFromName("/x/fever-train-kilt.jsonl.gz")).toBe("train");
    expect(splitFromName("triviaqa-test_without_answers-kilt.jsonl")).toBe("test");
    expect(splitFromName("records.jsonl")).toBeNull();
  });
});

describe("mapping records", () => {
  const mapper = new ProvenanceMapper(new MemoryPages([wiki, ...pages]));
  const map = async (record: KiltRecord, split: "train" | "dev" = "dev") => {
    const report = emptyReport("in", "out", split, 0.5);
    const out = await mapper.mapRecord(record, split, 1, report, 10);
    return { out, report };
  };

  it("writes the page id and title, section, span, BLEU and match method, and keeps extra fields", async () => {
    const { out } = await map({
      id: "q1",
      output: [
        { answer: "George Harrison", provenance: [{ wikipedia_id: "2448355", meta: { annotation_id: 7 } }] },
        { answer: "Richard Starkey" },
      ],
    });
    expect(out).toEqual({
      id: "q1",
      output: [
        {
          answer: "George Harrison",
          provenance: [
            {
              wikipedia_id: "2448355",
              title: "Photograph (Ringo Starr song)",
              section: "Section::::Background and composition.\n",
              start_paragraph_id: 3,
              start_character: 10,
              end_paragraph_id: 3,
              end_character: 25,
              bleu_score: 1,
              meta: { annotation_id: 7, match: "substring" },
            },
          ],
        },
        { answer: "Richard Starkey" },
      ],
    });
  });

  it("maps an evidence text given in the provenance instead of the answer", async () => {
    const { out } = await map({
      id: "q2",
      output: [{ answer: "1971", provenance: [{ title: "Photograph (Ringo Starr song)", text: "Starr and George Harrison began writing the song in 1971." } as Provenance] }],
    });
    expect(out!.output[0].provenance![0]).toMatchObject({ start_paragraph_id: 3, start_character: 0, end_character: 57, bleu_score: 1 });
  });

  it("drops dev outputs below the threshold or without a page, with reasons; train keeps the low-BLEU span", async () => {
    const low = "Starr and Harrison started to write it during 1971";
    const record: KiltRecord = {
      id: "q3",
      output: [
        { answer: "x", provenance: [{ wikipedia_id: "2448355", text: low }] },
        { answer: "y", provenance: [{ title: "No such page" } as Provenance] },
        { provenance: [{ wikipedia_id: "2448355" }] },
      ],
    };
    const dev = await map(record, "dev");
    expect(dev.out).toBeNull();
    expect(dev.report.records.dropped).toBe(1);
    expect(dev.report.outputs).toEqual({ read: 3, written: 0, dropped: 3, withoutProvenance: 0 });
    expect(dev.report.provenance.failed).toMatchObject({ "below-threshold": 1, "page-not-found": 1, "nothing-to-map": 1 });
    // No trigram of the text occurs on the page, so every span scores a float_info.min power (< 1e-150).
    expect(dev.report.dropped.map((d) => [d.reason, d.output, d.page])).toEqual([
      ["below-threshold", 0, "2448355"],
      ["page-not-found", 1, "title:No such page"],
      ["nothing-to-map", 2, undefined],
    ]);
    expect(dev.report.dropped[0].bleu).toBe(6.7393716283177006e-155);

    const train = await map(record, "train");
    expect(train.out!.output.map((o) => o.provenance?.[0]?.bleu_score)).toEqual([dev.report.dropped[0].bleu, undefined]);
    expect(train.out!.output[1]).toEqual({ answer: "y" }); // its only provenance named a missing page
    // the third output had nothing to place and nothing else: dropped even in train
    expect(train.report.outputs).toEqual({ read: 3, written: 2, dropped: 1, withoutProvenance: 0 });
  });

  it("keeps provenance that already has a span when there is no text to place", async () => {
    const given = { wikipedia_id: "2448355", start_paragraph_id: 1, start_character: 0, end_paragraph_id: 1, end_character: 5 };
    const { out, report } = await map({ id: "q4", output: [{ provenance: [given] }] });
    expect(out!.output[0].provenance).toEqual([given]);
    expect(report.provenance.keptAsGiven).toBe(1);
  });
});

describe("mapFile", () => {
  it("skips malformed lines, counting them, and writes the rest", async () => {
    const input = join(tmp, "broken-dev.jsonl");
    writeFileSync(input, ['{"id": "a", "output": [{"answer": "Denver Broncos", "provenance": [{"title": "Super Bowl 50"}]}]}', '{"id": "b", "output": [', "[1, 2]"].join("\n"));
    const out = join(tmp, "broken-mapped.jsonl");
    const report = await mapFile(input, out, new MemoryPages(pages), { split: "dev" });
    expect(report.records).toEqual({ read: 1, written: 1, dropped: 0 });
    expect(report.badLineCount).toBe(2);
    expect(report.badLines[1]).toBe(`${input}:3: expected a JSON object, found an array`);
    expect((await readJsonlAll<KiltRecord>(out))[0].output[0].provenance![0]).toMatchObject({ start_paragraph_id: 1, start_character: 177, end_character: 191 });
  });
});

describe("SQuAD v1.1 dev answers mapped back from records", () => {
  const { records } = squadQuestionsToKilt(squad, { pages });
  const pagesFile = join(tmp, "pages.jsonl");
  writeFileSync(pagesFile, pages.map((p) => JSON.stringify(p)).join("\n"));

  it("with each answer's paragraph as context and its answer_start: every answer on its gold paragraph and characters", async () => {
    const input = join(tmp, "context-dev.jsonl");
    writeFileSync(
      input,
      records
        .map((r) => {
          const ctx = squad.data[r.meta!.article_index as number].paragraphs[r.meta!.paragraph_index as number].context;
          return JSON.stringify({
            id: r.id,
            output: r.output.map((o) => ({
              answer: o.answer,
              provenance: [{ title: o.provenance![0].title, context: ctx, answer_start: o.provenance![0].start_character }],
            })),
          });
        })
        .join("\n"),
    );
    const out = join(tmp, "context-mapped.jsonl");
    const report = await mapFile(input, out, await MemoryPages.load(pagesFile), { split: "dev" });
    expect(report.records).toEqual({ read: 10570, written: 10570, dropped: 0 });
    expect(report.provenance.mapped).toBe(18015);
    expect(report.provenance.byMethod).toEqual({ substring: 18015, token: 0, "substring-in-word": 0, bleu: 0 });
    const mapped = await readJsonlAll<KiltRecord>(out);
    let same = 0;
    mapped.forEach((r, i) =>
      r.output.forEach((o, j) => {
        const a = o.provenance![0];
        const b = records[i].output[j].provenance![0];
        if (a.wikipedia_id === b.wikipedia_id && a.start_paragraph_id === b.start_paragraph_id && a.start_character === b.start_character && a.end_character === b.end_character)
          same++;
      }),
    );
    expect(same).toBe(18015);
    expect(readFileSync(out, "utf8").split("\n")[0]).toBe(
      '{"id":"56be4db0acb8001400a502ec","output":[{"answer":"Denver Broncos","provenance":[{"wikipedia_id":"squad:Super_Bowl_50","title":"Super Bowl 50","section":"Section::::Abstract.","start_paragraph_id":1,"start_character":177,"end_paragraph_id":1,"end_character":191,"bleu_score":1,"meta":{"match":"substring"}}]}]}',
    );
  });

  it("with the paragraph as context but no answer_start: the gold paragraph for all but the three '.' answers, the gold characters for 17,188", async () => {
    const mapper = new ProvenanceMapper(await MemoryPages.load(pagesFile));
    let paragraph = 0;
    let exact = 0;
    for (const r of records)
      for (const o of r.output) {
        const ctx = squad.data[r.meta!.article_index as number].paragraphs[r.meta!.paragraph_index as number].context;
        const gold = o.provenance![0];
        const { page } = await mapper.findPage({ wikipedia_id: gold.wikipedia_id });
        const m = mapper.locate(o.answer!, page!, ctx);
        if ("paragraph" in m && m.paragraph === gold.start_paragraph_id) {
          paragraph++;
          if (m.start === gold.start_character && m.end === gold.end_character) exact++;
        }
      }
    expect(paragraph).toBe(18012);
    expect(exact).toBe(17188);
  });
});
