// One line per registered reader: its name → how its contract case (./contract.ts) is set up, from the
// data and models the existing reader tests use (the small seeded span ranker, a tiny ONNX QA model, a
// local OpenAI-compatible server, the KILT WNED and WoW records, real SQuAD paragraphs).

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltRecord } from "../../src/records/types.js";
import { ArticlePassages, pageParagraphPassages, rankPassages } from "../../src/readers/extractive/squad-data.js";
import { slotQuestion } from "../../src/readers/tasks/slot-filling.js";
import type { ReaderPassage } from "../../src/readers/types.js";
import { chatReply, json, startServer } from "../fixtures/readers/openai-server.js";
import { squadPassage, squadRecord } from "../fixtures/readers/squad.js";
import { writeModelDir } from "../fixtures/readers/tiny-onnx.js";
import { BERT_TOKENIZER_CONFIG, bertTokenizerJson, buildVocab } from "../fixtures/readers/wordpiece.js";
import type { ReaderCase } from "./contract.js";
import { every, KILT_DEV, SAMPLES, smallModel, split, squad } from "./helpers.js";

const tmp = () => mkdtempSync(join(tmpdir(), "tartan-reader-case-"));
const AFC = "56be4db0acb8001400a502ec"; // Which NFL team represented the AFC at Super Bowl 50? (gold: Denver Broncos)
const WON = "56be4db0acb8001400a502ef"; // Which NFL team won Super Bowl 50?
const superBowl = () => [squadPassage("Warsaw", 1, 12.5), squadPassage("Super_Bowl_50", 1, 11.0), squadPassage("Normans", 1, 9.75)];

/** The small test model (test/readers/helpers.ts) as a model file, as `tartan reader train` writes one. */
function modelFile(): string {
  const file = join(tmp(), "reader.json");
  writeFileSync(file, JSON.stringify(smallModel().model.toJSON()));
  return file;
}

/** Held-out SQuAD questions with their article's 5 best paragraphs (answers: test/readers/extractive/reader.test.ts). */
function extractive(): ReaderCase {
  const ap = new ArticlePassages(squad().pages, 5);
  const [r0, r1, r2] = every(split().test, 25, 3);
  return { options: { model: modelFile() }, items: [{ record: r0, passages: ap.for(r0), answer: "ABC" }, { record: r1, passages: ap.for(r1) }, { record: r2, passages: ap.for(r2), answer: "Beirut" }], emptyAnswer: "" };
}

/** `subject [SEP] relation` inputs read from the subject's SQuAD article (answers: test/readers/tasks/slot-filling.test.ts). */
function slotFilling(): ReaderCase {
  const item = (s: string, rel: string, answer: string) => {
    const input = `${s} [SEP] ${rel}`;
    return { record: { id: s, input, output: [] }, passages: rankPassages(slotQuestion(input), pageParagraphPassages(squad().pages.find((p) => p.wikipedia_title === s)!), 5), answer };
  };
  return { options: { model: modelFile() }, items: [item("University of Chicago", "founded by", "William Rainey Harper"), item("Yuan dynasty", "founded by", "Zhu Yuanzhang")], emptyAnswer: "" };
}

/** A model behind a local OpenAI-compatible server that cites passage 2 (answers: test/readers/generative/reader.test.ts). */
async function generative(): Promise<ReaderCase> {
  const server = await startServer((req, res) => json(res, chatReply((req.body.messages[1].content as string).startsWith("Passages:") ? 'Answer: "Denver Broncos" [2]' : "Denver Broncos")));
  return { options: { model: "tiny-qa", baseUrl: server.baseUrl }, items: [{ record: squadRecord(AFC), passages: superBowl(), answer: "Denver Broncos" }, { record: squadRecord(WON), passages: superBowl(), answer: "Denver Broncos" }], close: () => server.close() };
}

/** A Gather-only ONNX QA model whose logits favour Denver … Broncos (test/readers/onnx/reader.test.ts). */
function onnx(): ReaderCase {
  const ps = superBowl();
  const vocab = buildVocab(ps.map((p) => p.text), { omitWords: ["broncos"], extra: ["bron", "##cos"] });
  const weights = (w: Record<string, number>) => vocab.map((t) => w[t] ?? 0);
  const dir = tmp();
  writeModelDir(dir, bertTokenizerJson(vocab), BERT_TOKENIZER_CONFIG, weights({ denver: 5, frederic: 4 }), weights({ "##cos": 5, chopin: 4 }));
  return { options: { model: dir }, items: [{ record: squadRecord(AFC), passages: ps, answer: "Denver Broncos" }, { record: squadRecord(WON), passages: [ps[0]], answer: "Frédéric Chopin" }], emptyAnswer: "" };
}

/** Two Wizard of Wikipedia dev records read from the Prime number page (answers: test/readers/tasks/dialogue.test.ts). */
async function dialogue(): Promise<ReaderCase> {
  const all = await readJsonlAll<KiltRecord>(`${KILT_DEV}/wow-dev-kilt.jsonl`);
  const ps = pageParagraphPassages(squad().pages.find((p) => p.wikipedia_title === "Prime number")!);
  const rec = (id: string) => all.find((r) => r.id === id)!;
  return {
    options: {},
    items: [
      { record: rec("54adec4a-99cd-11ea-aa09-57c1ffc5a65b_3"), passages: ps },
      { record: rec("54abc794-99cd-11ea-aa09-57c1ffc5a65b_1"), passages: ps, answer: "After the Greeks, little happened with the study of prime numbers until the 17th century." },
    ],
    emptyAnswer: "",
  };
}

/** The KILT WNED-WIKI dev samples with candidate pages (answers: test/readers/tasks/entity-linking.test.ts). */
async function entityLinking(): Promise<ReaderCase> {
  const recs = await readJsonlAll<KiltRecord>(`${SAMPLES}/wned-dev-kilt.jsonl`);
  const page = (title: string, score: number): ReaderPassage => ({ text: "", provenance: { wikipedia_id: title.replaceAll(" ", "_"), title }, score });
  return {
    options: {},
    items: [
      { record: recs[0], passages: [page("Sculcoates", 5.1), page("Sculcoates (UK Parliament constituency)", 2.2)], answer: "Sculcoates" },
      { record: recs[1], passages: [page("English language", 3.0), page("English people", 3.4), page("England", 1.0)], answer: "English people" },
    ],
  };
}

/** Each registered reader's case, by name. */
export const READER_CASES: Record<string, () => Promise<ReaderCase>> = {
  extractive: async () => extractive(),
  generative: async () => generative(),
  onnx: async () => onnx(),
  dialogue: async () => dialogue(),
  "entity-linking": async () => entityLinking(),
  "slot-filling": async () => slotFilling(),
};
