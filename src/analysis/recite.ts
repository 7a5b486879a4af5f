// The reciting probe of Wang et al. (2021), "Can generative pre-trained language models serve as
// knowledge bases for closed-book QA?": SQuAD passages with the answer spans of their questions masked,
// the fine-tuning files around it (LM passages, reciting input/target, QA and QA-bridge pairs, optional
// <passage>/<question> markers), and the paper's strict scoring of a model's recitations: a masked span
// counts only if it and the words after it, up to the next mask or 10 tokens, are reproduced.

import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { SquadFile } from "../knowledge/squad.js";
import { readSquadFile, squadPageId } from "../knowledge/squad.js";
import { readJsonlAll, writeJsonl } from "../records/jsonl.js";
import { assertOutputsNotInputs, writeFileSafe } from "../util/safe-output.js";
import { cpLength, cpSlice } from "../knowledge/codepoints.js";
import { isPythonSpace } from "../records/python-str.js";

/** The token that replaces an answer span in a masked passage. */
export const MASK = "<mask>";

/** A SQuAD paragraph with its answerable questions. */
export interface RecitePassage {
  /** `squad:<title>#<KILT paragraph id>`: the page id of tartan's SQuAD pages and paragraph index + 1. */
  id: string;
  article: number;
  paragraph: number;
  text: string;
  questions: { id: string; question: string; answers: { text: string; start: number }[] }[];
}

/** The answerable questions' passages of a SQuAD file in file order (at most `limit`). Passages without one are skipped. */
export function recitePassages(squad: SquadFile, limit = Infinity): RecitePassage[] {
  const out: RecitePassage[] = [];
  squad.data.forEach((article, a) =>
    article.paragraphs.forEach((p, pi) => {
      if (out.length >= limit) return;
      const questions = p.qas
        .filter((q) => q.is_impossible !== true && q.answers.length > 0)
        .map((q) => ({ id: String(q.id), question: q.question, answers: q.answers.map((x) => ({ text: x.text, start: x.answer_start })) }));
      if (questions.length === 0) return;
      out.push({ id: `${squadPageId(article.title)}#${pi + 1}`, article: a, paragraph: pi, text: p.context, questions });
    }),
  );
  return out;
}

/**
 * The spans to mask (code points): every answer span whose text is at its offset, overlapping or
 * touching spans merged, in order. Answers whose offset does not hold their text are left out.
 */
export function answerSpans(passage: RecitePassage): [number, number][] {
  const spans: [number, number][] = [];
  for (const q of passage.questions)
    for (const a of q.answers) {
      const end = a.start + cpLength(a.text);
      if (a.text.trim().length > 0 && cpSlice(passage.text, a.start, end) === a.text) spans.push([a.start, end]);
    }
  spans.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const merged: [number, number][] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s[0] <= last[1]) last[1] = Math.max(last[1], s[1]);
    else merged.push([s[0], s[1]]);
  }
  return merged;
}

/** One line of a source/target file: newlines and tabs become spaces. */
export function oneLine(s: string): string {
  return s.replace(/[\r\n\t]+/g, " ");
}

/** The passage with each span replaced by one `<mask>`. */
export function maskPassage(text: string, spans: readonly [number, number][]): string {
  let out = "";
  let at = 0;
  for (const [s, e] of spans) {
    out += cpSlice(text, at, s) + MASK;
    at = e;
  }
  return out + cpSlice(text, at, cpLength(text));
}

/** Input/target decorations of the paper's section 5.3 ("added prefix/suffix"). */
export interface Markers {
  /** Marks a passage given as the source. */
  passageIn: (p: string) => string;
  /** Marks a passage expected as the target. */
  passageOut: (p: string) => string;
  /** Marks a question given as the source. */
  questionIn: (q: string) => string;
  /** Marks an answer expected as the target. */
  answerOut: (a: string) => string;
  /** Marks a passage followed by the answer, expected as the target. */
  bridgeOut: (p: string, a: string) => string;
}

/** The prefix and suffix markers of the reciting probe's sources and targets (`on`), or identity functions. */
export function markers(on: boolean): Markers {
  return on
    ? {
        passageIn: (p) => `<passage> ${p} </passage>`,
        passageOut: (p) => `${p} </passage>`,
        questionIn: (q) => `<question> ${q} </question>`,
        answerOut: (a) => `${a} </answer>`,
        bridgeOut: (p, a) => `${p} </passage> <answer> ${a} </answer>`,
      }
    : {
        passageIn: (p) => p,
        passageOut: (p) => p,
        questionIn: (q) => q,
        answerOut: (a) => a,
        bridgeOut: (p, a) => `${p} <answer> ${a}`,
      };
}

/** One reciting item: the passage, its masked spans, and the model's input and expected output. */
export interface ProbeItem {
  id: string;
  passage: string;
  masks: [number, number][];
  source: string;
  target: string;
}

/** One passage as a reciting-probe item: the passage with its answer spans masked as the source, the whole passage as the target. */
export function probeItem(p: RecitePassage, mk: Markers): ProbeItem {
  const masks = answerSpans(p);
  return { id: p.id, passage: p.text, masks, source: oneLine(mk.passageIn(maskPassage(p.text, masks))), target: oneLine(mk.passageOut(p.text)) };
}

/** The answer of a QA-bridge output `passage <answer> answer [</answer>]`: the text after the last `<answer>`. */
export function extractBridgeAnswer(output: string): string {
  const i = output.lastIndexOf("<answer>");
  const tail = i < 0 ? output : output.slice(i + "<answer>".length);
  return tail.replace(/<\/answer>/g, "").trim();
}

/** Options of building the reciting-probe data sets. */
export interface ReciteBuildOptions {
  /** Add the <passage>/<question> prefix and suffix markers. */
  markers?: boolean;
  /** Passages for QA train/valid/test, in file order: counts ("16,2,2") or fractions ("0.8,0.1,0.1"). */
  qaSplit?: [number, number, number];
}

/** How many passages, masks and questions the reciting-probe data sets hold, per QA split. */
export interface ReciteBuildStats {
  passages: number;
  masks: number;
  questions: number;
  qa: { train: { passages: number; questions: number }; valid: { passages: number; questions: number }; test: { passages: number; questions: number } };
}

/** Passage counts per QA split: integer counts as given, or fractions with valid/test rounded and train the rest. */
export function qaSplitCounts(n: number, split: readonly [number, number, number]): [number, number, number] {
  if (split.every((x) => Number.isInteger(x) && x >= 0) && split.some((x) => x > 1)) {
    if (split[0] + split[1] + split[2] > n) throw new Error(`QA split ${split.join(",")} needs ${split[0] + split[1] + split[2]} passages; there are ${n}`);
    return [split[0], split[1], split[2]];
  }
  const total = split[0] + split[1] + split[2];
  if (!(total > 0)) throw new Error(`QA split ${split.join(",")}: expected counts or fractions`);
  const valid = Math.round((n * split[1]) / total);
  const test = Math.round((n * split[2]) / total);
  return [n - valid - test, valid, test];
}

/**
 * Writes the fine-tuning files for `passages` into `dir` (layout: docs/analysis.md):
 * `lm/train.{source,target}` (passages; the trainer masks 30% with text infilling), `lm/{valid,test}.{source,target}`
 * and `recite.jsonl` (the reciting probe), `qa/` and `qa-bridge/` `{train,valid,test}.{source,target}` and `qa/*.jsonl`.
 */
export function writeReciteFiles(dir: string, passages: readonly RecitePassage[], options: ReciteBuildOptions = {}): ReciteBuildStats {
  const mk = markers(options.markers === true);
  const lines = (xs: readonly string[]) => (xs.length === 0 ? "" : `${xs.join("\n")}\n`);
  mkdirSync(join(dir, "lm"), { recursive: true });
  mkdirSync(join(dir, "qa"), { recursive: true });
  mkdirSync(join(dir, "qa-bridge"), { recursive: true });
  const items = passages.map((p) => probeItem(p, mk));
  writeFileSafe(join(dir, "lm", "train.source"), lines(passages.map((p) => oneLine(mk.passageIn(p.text)))));
  writeFileSafe(join(dir, "lm", "train.target"), lines(passages.map((p) => oneLine(mk.passageOut(p.text)))));
  for (const s of ["valid", "test"]) {
    writeFileSafe(join(dir, "lm", `${s}.source`), lines(items.map((i) => i.source)));
    writeFileSafe(join(dir, "lm", `${s}.target`), lines(items.map((i) => i.target)));
  }
  writeFileSafe(join(dir, "recite.jsonl"), lines(items.map((i) => JSON.stringify(i))));

  const [nTrain, nValid, nTest] = qaSplitCounts(passages.length, options.qaSplit ?? [0.8, 0.1, 0.1]);
  const parts = { train: passages.slice(0, nTrain), valid: passages.slice(nTrain, nTrain + nValid), test: passages.slice(nTrain + nValid, nTrain + nValid + nTest) };
  const qa = { train: { passages: 0, questions: 0 }, valid: { passages: 0, questions: 0 }, test: { passages: 0, questions: 0 } };
  for (const [name, ps] of Object.entries(parts) as [keyof typeof parts, RecitePassage[]][]) {
    const src: string[] = [];
    const tgt: string[] = [];
    const bridge: string[] = [];
    const meta: string[] = [];
    for (const p of ps)
      for (const q of p.questions) {
        const answers = [...new Set(q.answers.map((a) => a.text))];
        src.push(oneLine(mk.questionIn(q.question)));
        // Train targets hold the first answer; valid/test targets list every answer, tab-separated (the paper's code scores against any).
        tgt.push(name === "train" ? oneLine(mk.answerOut(answers[0])) : answers.map((a) => oneLine(mk.answerOut(a))).join("\t"));
        bridge.push(oneLine(mk.bridgeOut(p.text, answers[0])));
        meta.push(JSON.stringify({ id: q.id, question: q.question, answers, passage: p.id }));
      }
    writeFileSafe(join(dir, "qa", `${name}.source`), lines(src));
    writeFileSafe(join(dir, "qa", `${name}.target`), lines(tgt));
    writeFileSafe(join(dir, "qa", `${name}.jsonl`), lines(meta));
    writeFileSafe(join(dir, "qa-bridge", `${name}.source`), lines(src));
    writeFileSafe(join(dir, "qa-bridge", `${name}.target`), lines(bridge));
    qa[name] = { passages: ps.length, questions: src.length };
  }
  return { passages: passages.length, masks: items.reduce((s, i) => s + i.masks.length, 0), questions: passages.reduce((s, p) => s + p.questions.length, 0), qa };
}

// ---- Scoring ------------------------------------------------------------------------------------

/** Whitespace tokens (Python's whitespace set). */
function wsTokens(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (const ch of s) {
    if (isPythonSpace(ch.codePointAt(0)!)) {
      if (cur) out.push(cur);
      cur = "";
    } else cur += ch;
  }
  if (cur) out.push(cur);
  return out;
}

/** What span i must be reproduced with, and whether it starts or ends inside a word of the passage. */
export interface CheckedText {
  text: string;
  /** The span starts inside a word (the character before it is not a space). */
  openStart: boolean;
  /** The checked text stops inside a word (at the next mask, in mid-word). */
  openEnd: boolean;
}

/**
 * The text span i must be reproduced with: the span and what follows it up to the next mask or the end
 * of the `window`-th whitespace token after it (a token the span ends inside counts as the first).
 */
export function checkedText(passage: string, masks: readonly [number, number][], i: number, window = 10): string {
  return checkedSpan(passage, masks, i, window).text;
}

/** The span i must be reproduced with (see {@link checkedText}), with its offsets. */
export function checkedSpan(passage: string, masks: readonly [number, number][], i: number, window = 10): CheckedText {
  const [s, e] = masks[i];
  const cps = Array.from(passage);
  const limit = i + 1 < masks.length ? masks[i + 1][0] : cps.length;
  const space = (k: number) => isPythonSpace(cps[k].codePointAt(0)!);
  let at = e;
  let tokens = 0;
  while (at < limit && tokens < window) {
    while (at < limit && space(at)) at++;
    if (at >= limit) break;
    while (at < limit && !space(at)) at++;
    tokens++;
  }
  return { text: cps.slice(s, at).join(""), openStart: s > 0 && !space(s - 1), openEnd: at < cps.length && at > s && !space(at) && !space(at - 1) };
}

/**
 * True when the tokens of `expected` occur contiguously in `output`'s tokens. Where the expected text
 * starts inside a word (`openStart`), the first token may be the end of an output token; where it stops
 * inside one (`openEnd`), the last may be its beginning. Other tokens must be equal.
 */
export function containsTokens(output: readonly string[], expected: readonly string[], openStart = false, openEnd = false): boolean {
  const n = expected.length;
  if (n === 0) return true;
  const fits = (out: string, exp: string, left: boolean, right: boolean) =>
    left && right ? out.includes(exp) : left ? out.endsWith(exp) : right ? out.startsWith(exp) : out === exp;
  for (let j = 0; j + n <= output.length; j++) {
    if (!fits(output[j], expected[0], openStart, n === 1 && openEnd)) continue;
    if (n > 1 && !fits(output[j + n - 1], expected[n - 1], false, openEnd)) continue;
    let ok = true;
    for (let k = 1; k < n - 1 && ok; k++) ok = output[j + k] === expected[k];
    if (ok) return true;
  }
  return false;
}

/** Removes the passage markers from a model output. */
export function stripMarkers(s: string): string {
  return s.replace(/<\/?passage>/g, " ");
}

/** Which masked spans of one item a recitation gets right under the strict rule. */
export function scoreRecitation(item: Pick<ProbeItem, "passage" | "masks">, output: string, window = 10): boolean[] {
  const out = wsTokens(stripMarkers(output));
  return item.masks.map((_, i) => {
    const c = checkedSpan(item.passage, item.masks, i, window);
    return containsTokens(out, wsTokens(c.text), c.openStart, c.openEnd);
  });
}

/** How well recitations reproduce the masked spans. */
export interface ReciteScore {
  passages: number;
  /** Passages without a recitation (left out). */
  missing: number;
  spans: number;
  correct: number;
  /** correct / spans over all scored passages. */
  accuracy: number;
  /** Mean of the per-passage accuracies (what the paper's released code prints). */
  passageMean: number;
}

/** Scores recitations (aligned with `items`, or null where missing). */
export function scoreRecitations(items: readonly ProbeItem[], outputs: readonly (string | null)[], window = 10): { score: ReciteScore; perItem: (boolean[] | null)[] } {
  let spans = 0;
  let correct = 0;
  let sumAcc = 0;
  let scored = 0;
  let missing = 0;
  const perItem = items.map((it, i) => {
    const o = outputs[i];
    if (o === null || o === undefined) {
      missing++;
      return null;
    }
    const r = scoreRecitation(it, o, window);
    if (r.length === 0) return r;
    const c = r.filter(Boolean).length;
    spans += r.length;
    correct += c;
    sumAcc += c / r.length;
    scored++;
    return r;
  });
  return {
    score: { passages: items.length, missing, spans, correct, accuracy: spans === 0 ? 0 : correct / spans, passageMean: scored === 0 ? 0 : sumAcc / scored },
    perItem,
  };
}

/** `tartan analyze recite build`: the first `passages` passages of a SQuAD file, their files written into `dir`. */
export function buildReciteFiles(squadFile: string, dir: string, options: ReciteBuildOptions & { passages?: number } = {}): ReciteBuildStats {
  return writeReciteFiles(dir, recitePassages(readSquadFile(squadFile), options.passages ?? Infinity), options);
}

/**
 * Recitations aligned with the probe: plain lines in probe order (one per passage, or an error naming
 * the file and both counts), or JSONL `{id, prediction|recitation|output}` matched by id (null where an
 * id has none).
 */
export async function loadRecitations(file: string, items: readonly ProbeItem[]): Promise<(string | null)[]> {
  if (/\.jsonl(\.gz)?$/i.test(file)) {
    const byId = new Map<string, string>();
    for (const r of await readJsonlAll<Record<string, unknown>>(file)) {
      const text = [r.prediction, r.recitation, r.output].find((x): x is string => typeof x === "string");
      if (text !== undefined && r.id !== undefined) byId.set(String(r.id), text);
    }
    return items.map((it) => byId.get(it.id) ?? null);
  }
  const lines = readFileSync(file, "utf8").split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (lines.length !== items.length) throw new Error(`${file}: ${lines.length} lines for ${items.length} probe passages (one recitation per line, in probe order)`);
  return lines;
}

/** What {@link scoreRecitationFiles} reads and writes (the options of `tartan analyze recite score`). */
export interface ReciteScoreFileOptions {
  /** The probe written by `recite build` (recite.jsonl). */
  probe: string;
  /** Recitations (see {@link loadRecitations}). */
  predictions: string;
  /** Tokens after a span that must also be right (default 10). */
  window?: number;
  /** Write per-passage span results (JSONL). */
  details?: string;
}

/** `tartan analyze recite score`: the reciting accuracy of a file of recitations against the probe. */
export async function scoreRecitationFiles(o: ReciteScoreFileOptions): Promise<ReciteScore> {
  assertOutputsNotInputs([o.details], [o.probe, o.predictions]);
  const items = await readJsonlAll<ProbeItem>(o.probe);
  const outputs = await loadRecitations(o.predictions, items);
  const { score, perItem } = scoreRecitations(items, outputs, o.window ?? 10);
  if (o.details) await writeJsonl(o.details, items.map((it, i) => ({ id: it.id, correct: perItem[i] })));
  return score;
}
