// The extractive reader: scores every candidate span of the passages with the trained ranker and
// answers with the best one. Provenance is the passage the span came from; meta gives the passage
// number, the span's code-point offsets in the passage (and in the page paragraph when the passage is
// one paragraph piece) and the model's probability. No candidate: empty answer, `meta.candidates` 0.

import { readJsonFile } from "../../util/json-file.js";
import { cpLength } from "../../knowledge/codepoints.js";
import type { KiltRecord } from "../../records/types.js";
import { citedProvenance } from "./cite.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";
import { candidateText, generateCandidates, type CandidateOptions } from "./candidates.js";
import { featureMatrix } from "./features.js";
import { SpanModel, type SpanModelJson } from "./model.js";
import { analyzeQuestion } from "./question.js";

/** A candidate span with its score and probability among the question's candidates. */
export interface ScoredSpan {
  text: string;
  passage: number;
  /** Code-point offsets in the passage text. */
  start: number;
  end: number;
  score: number;
  probability: number;
}

/** The trained extractive reader: candidate spans of the passages ranked by the span model; the answer cites its passage. */
export class ExtractiveReader implements Reader {
  readonly name = "extractive";
  constructor(
    readonly model: SpanModel,
    readonly options: CandidateOptions = {},
  ) {}

  /** Loads a reader from a model file written by `tartan reader train`. */
  static load(file: string, options: CandidateOptions = {}): ExtractiveReader {
    const json = readJsonFile(file, "the reader model");
    try {
      return new ExtractiveReader(SpanModel.fromJSON(json as SpanModelJson), options);
    } catch (e) {
      throw new Error(`${file}: ${(e as Error).message}`);
    }
  }

  /** The `n` best spans for a question, best first (ties: earlier candidate first). */
  rank(question: string, passages: readonly ReaderPassage[], n = 1): ScoredSpan[] {
    const q = analyzeQuestion(question);
    const set = generateCandidates(q, passages, this.options);
    if (set.candidates.length === 0) return [];
    const scores = this.model.score(featureMatrix(q, passages, set), set.candidates.length);
    let max = -Infinity;
    for (const s of scores) if (s > max) max = s;
    let z = 0;
    for (const s of scores) z += Math.exp(s - max);
    const order = set.candidates.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
    return order.slice(0, n).map((i) => {
      const c = set.candidates[i];
      const { text, start, end } = candidateText(set, c);
      const passage = set.sentences[c.sentence].passage;
      const ptext = passages[passage].text;
      const cpStart = cpLength(ptext.slice(0, start));
      return { text, passage, start: cpStart, end: cpStart + cpLength(text), score: scores[i], probability: Math.exp(scores[i] - max) / z };
    });
  }

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    return this.readSync(record.input ?? "", passages);
  }

  /** {@link read} for a question string, synchronously. */
  readSync(question: string, passages: readonly ReaderPassage[]): ReaderAnswer {
    const [best] = this.rank(question, passages, 1);
    if (best === undefined) return { answer: "", provenance: [], score: 0, meta: { candidates: 0 } };
    const prov = passages[best.passage].provenance;
    const provenance = citedProvenance(passages[best.passage]);
    const meta: Record<string, unknown> = { passage: best.passage, start: best.start, end: best.end, probability: best.probability };
    if (prov.start_paragraph_id !== undefined && prov.start_paragraph_id === prov.end_paragraph_id && typeof prov.start_character === "number")
      meta.paragraph_span = { paragraph_id: prov.start_paragraph_id, start_character: prov.start_character + best.start, end_character: prov.start_character + best.end };
    return { answer: best.text, provenance: [provenance], score: best.score, meta };
  }
}

/** `--reader extractive`: the trained span ranker, from the model file `--model` names. */
export const extractiveReaderKind: ReaderDescriptor = {
  name: "extractive",
  version: 1,
  summary: "spans ranked by a model from tartan reader train",
  needs: [{ option: "model", flag: "--model", what: "a model file from tartan reader train" }],
  open: (o) => ExtractiveReader.load(o.model!),
};
