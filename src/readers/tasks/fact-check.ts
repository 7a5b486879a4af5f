// The fact-checking reader (FEVER: SUPPORTS / REFUTES) from retrieved evidence. Evidence = the passage
// sentence that best matches the claim. Two deciders over the same claim/evidence features: a rule
// baseline (negation mismatch, exclusivity words, a clash between words of one closed class such as
// nationalities or numbers, antonyms, low overlap) and a trainable logistic regression. KILT's FEVER
// samples are 5 records per split, so a trained model here is a demonstration, not a measurement.

import type { KiltRecord, Provenance } from "../../records/types.js";
import { seededRandom, shuffle } from "../../util/random.js";
import { citedProvenance } from "../extractive/cite.js";
import { analyzeCached, stemSet } from "../extractive/text.js";
import type { Reader, ReaderAnswer, ReaderPassage } from "../types.js";
import { rankSentences } from "./overlap.js";

/** A FEVER label. */
export type Verdict = "SUPPORTS" | "REFUTES";

const NEGATIONS = new Set(["not", "n't", "no", "never", "nor", "neither", "none", "nothing", "nobody", "without", "cannot", "unable", "incapable", "refused", "failed", "denied", "lacks", "lacked"]);
const EXCLUSIVE = new Set(["only", "exclusively", "solely", "entirely", "always", "just", "purely"]);
/** Closed classes: two different members in claim and evidence are a contradiction cue. */
const CLASSES: readonly (readonly string[])[] = [
  ["american", "british", "english", "german", "french", "spanish", "italian", "russian", "chinese", "japanese", "indian", "canadian", "australian", "mexican", "irish", "scottish", "swedish", "dutch", "korean", "israeli", "brazilian", "polish", "greek", "turkish", "portuguese", "arabic", "hindi"],
  ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"],
  ["male", "female"],
  ["actor", "actress", "singer", "writer", "politician", "athlete", "director", "producer", "accountant", "lawyer", "doctor", "teacher", "engineer", "scientist", "comedian", "journalist", "model", "dancer", "rapper", "musician"],
  ["film", "novel", "song", "album", "book", "play", "series", "game"],
];
const ANTONYMS: readonly [string, string][] = [
  ["alive", "dead"],
  ["born", "died"],
  ["win", "lose"],
  ["won", "lost"],
  ["first", "last"],
  ["before", "after"],
  ["increase", "decrease"],
  ["public", "private"],
  ["major", "minor"],
  ["fiction", "nonfiction"],
  ["success", "failure"],
  ["start", "end"],
  ["began", "ended"],
  ["north", "south"],
  ["east", "west"],
  ["larger", "smaller"],
  ["older", "younger"],
];

/** Feature names of the classifier, in vector order. */
export const FACT_FEATURES = [
  "overlap",
  "overlap_all_evidence",
  "bigram_overlap",
  "claim_negation",
  "evidence_negation",
  "negation_mismatch",
  "exclusive",
  "class_clash",
  "antonym",
  "missing_numbers",
  "missing_names",
] as const;

/** The evidence sentence found for a claim and its features. */
export interface FactEvidence {
  /** The best-matching sentence (or "" when there are no passages). */
  sentence: string;
  passage: number;
  start: number;
  end: number;
  features: number[];
  /** Which rule cues fired (names from FACT_FEATURES). */
  cues: string[];
}

function lowerWords(text: string): string[] {
  return analyzeCached(text)
    .tokens.filter((t) => !t.punct)
    .flatMap((t) => t.lower.split("-"));
}

function bigrams(words: readonly string[]): Set<string> {
  const s = new Set<string>();
  for (let i = 1; i < words.length; i++) s.add(`${words[i - 1]} ${words[i]}`);
  return s;
}

/** Claim/evidence features (see FACT_FEATURES) for a claim and its passages. */
export function factEvidence(claim: string, passages: readonly ReaderPassage[]): FactEvidence {
  const [best] = rankSentences(claim, passages);
  const sentence = best?.text ?? "";
  const claimStems = stemSet(claim);
  const evStems = stemSet(sentence);
  const allStems = new Set<string>();
  for (const p of passages) for (const s of stemSet(p.text)) allStems.add(s);
  const share = (set: Set<string>) => {
    if (claimStems.size === 0) return 0;
    let n = 0;
    for (const s of claimStems) if (set.has(s)) n++;
    return n / claimStems.size;
  };
  const cw = lowerWords(claim);
  const ew = lowerWords(sentence);
  const ewSet = new Set(ew);
  const cb = bigrams(cw);
  const eb = bigrams(ew);
  let bi = 0;
  for (const b of cb) if (eb.has(b)) bi++;
  const claimNeg = cw.some((w) => NEGATIONS.has(w)) ? 1 : 0;
  const evNeg = ew.some((w) => NEGATIONS.has(w)) ? 1 : 0;
  const exclusive = cw.some((w) => EXCLUSIVE.has(w)) ? 1 : 0;
  let clash = 0;
  for (const cls of CLASSES) {
    const inClaim = cw.filter((w) => cls.includes(w) && !ewSet.has(w));
    const inEv = ew.filter((w) => cls.includes(w) && !cw.includes(w));
    if (inClaim.length > 0 && inEv.length > 0) clash = 1;
  }
  let antonym = 0;
  for (const [a, b] of ANTONYMS) if ((cw.includes(a) && ewSet.has(b) && !ewSet.has(a)) || (cw.includes(b) && ewSet.has(a) && !ewSet.has(b))) antonym = 1;
  const claimTokens = analyzeCached(claim).tokens;
  const numbers = claimTokens.filter((t) => t.digit).map((t) => t.lower);
  const missingNumbers = numbers.filter((n) => !ewSet.has(n)).length;
  const names = claimTokens.filter((t, i) => i > 0 && t.cap && !t.stop && !t.punct);
  const missingNames = names.length === 0 ? 0 : names.filter((t) => !allStems.has(t.stem)).length / names.length;
  const features = [
    share(evStems),
    share(allStems),
    cb.size > 0 ? bi / cb.size : 0,
    claimNeg,
    evNeg,
    claimNeg !== evNeg ? 1 : 0,
    exclusive,
    clash,
    antonym,
    Math.min(1, missingNumbers),
    missingNames,
  ];
  const cues: string[] = [];
  if (features[5] === 1) cues.push("negation_mismatch");
  if (exclusive) cues.push("exclusive");
  if (clash) cues.push("class_clash");
  if (antonym) cues.push("antonym");
  if (missingNumbers > 0 && best !== undefined) cues.push("missing_numbers");
  return { sentence, passage: best?.passage ?? -1, start: best?.start ?? 0, end: best?.end ?? 0, features, cues };
}

/** The rule baseline: REFUTES on any contradiction cue or when the evidence covers under `minOverlap` of the claim. */
export function ruleVerdict(e: FactEvidence, minOverlap = 0.5): Verdict {
  if (e.cues.length > 0) return "REFUTES";
  return e.features[0] >= minOverlap ? "SUPPORTS" : "REFUTES";
}

/** A saved fact-checking classifier. */
export interface FactModelJson {
  kind: "tartan-fact-checker";
  version: 1;
  features: string[];
  weights: number[];
  bias: number;
}

/** A logistic regression over FACT_FEATURES: P(SUPPORTS) = sigmoid(w · x + b). */
export class FactModel {
  constructor(
    readonly weights: number[],
    readonly bias: number,
  ) {}

  /** The probability that the claim is supported, given the evidence's features. */
  probability(features: readonly number[]): number {
    let z = this.bias;
    for (let j = 0; j < this.weights.length; j++) z += this.weights[j] * features[j];
    return 1 / (1 + Math.exp(-z));
  }

  /** The model as JSON. */
  toJSON(): FactModelJson {
    return { kind: "tartan-fact-checker", version: 1, features: [...FACT_FEATURES], weights: [...this.weights], bias: this.bias };
  }

  /** The model saved by {@link FactModel.toJSON}; refuses another kind or feature list. */
  static fromJSON(j: FactModelJson): FactModel {
    if (j.kind !== "tartan-fact-checker" || j.features.join() !== FACT_FEATURES.join()) throw new Error("not a tartan fact-checker model for these features");
    return new FactModel(j.weights, j.bias);
  }
}

/** Trains the classifier by seeded stochastic gradient descent with L2 (deterministic). */
export function trainFactModel(
  examples: readonly { features: readonly number[]; label: Verdict }[],
  options: { epochs?: number; learningRate?: number; l2?: number; seed?: number } = {},
): FactModel {
  const d = FACT_FEATURES.length;
  const w = new Array<number>(d).fill(0);
  let b = 0;
  const lr = options.learningRate ?? 0.1;
  const l2 = options.l2 ?? 1e-3;
  const rand = seededRandom(options.seed ?? 1);
  const order = examples.map((_, i) => i);
  for (let e = 0; e < (options.epochs ?? 200); e++) {
    shuffle(order, rand);
    for (const i of order) {
      const { features, label } = examples[i];
      let z = b;
      for (let j = 0; j < d; j++) z += w[j] * features[j];
      const g = 1 / (1 + Math.exp(-z)) - (label === "SUPPORTS" ? 1 : 0);
      for (let j = 0; j < d; j++) w[j] -= lr * (g * features[j] + l2 * w[j]);
      b -= lr * g;
    }
  }
  return new FactModel(w, b);
}

/** The fact-checking reader (FEVER): SUPPORTS or REFUTES from the best evidence sentence, by the trained classifier or the rules. */
export class FactCheckReader implements Reader {
  readonly name: string;
  /** With a model: the classifier decides; without: the rule baseline. */
  constructor(readonly model?: FactModel) {
    this.name = model ? "fact-check-lr" : "fact-check-rules";
  }

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    const e = factEvidence(record.input ?? "", passages);
    const p = this.model?.probability(e.features);
    const answer: Verdict = p === undefined ? ruleVerdict(e) : p >= 0.5 ? "SUPPORTS" : "REFUTES";
    const provenance: Provenance[] = [];
    if (e.passage >= 0) provenance.push(citedProvenance(passages[e.passage]));
    const meta: Record<string, unknown> = { evidence: e.sentence, start: e.start, end: e.end, cues: e.cues };
    if (p !== undefined) meta.probability = p;
    return { answer, provenance, score: p ?? (answer === "SUPPORTS" ? e.features[0] : 1 - e.features[0]), meta };
  }
}
