// Features of a candidate span (a numeric vector, names in FEATURE_NAMES): passage rank and retrieval
// score, the sentence's overlap with the question (stems, bigrams, IDF-weighted, its rank), distance
// from the span to question words, span length and shape, part-of-speech and entity tags of the span
// and its neighbours, and the expected answer type crossed with the span's type.

import type { ReaderPassage } from "../types.js";
import type { Candidate, CandidateSet } from "./candidates.js";
import { QUESTION_TYPES, type QuestionInfo } from "./question.js";
import type { Token } from "./text.js";

/** Coarse span types crossed with the question type. */
export const SPAN_TYPES = ["date", "number", "money_percent", "proper", "noun", "other"] as const;
const EDGE_POS = ["NOUN", "PROPN", "NUM", "ADJ", "VERB", "ADV", "OTHER"] as const;
const LEFT_CTX = ["start", "DET", "ADP", "PUNCT", "VERB", "AUX", "OTHER"] as const;
const RIGHT_CTX = ["end", "PUNCT", "ADP", "VERB", "AUX", "CCONJ", "OTHER"] as const;
const ENT_TYPES = ["DATE", "CARDINAL", "ORDINAL", "MONEY", "PERCENT", "TIME", "DURATION"] as const;
/** Hash buckets for (question type, neighbouring function word) pairs, e.g. (when, "in"), (who, "by"). */
const LEXICAL_BUCKETS = 64;
const LOCATIVE = new Set(["in", "at", "from", "near", "to", "into", "across", "within"]);

function buildNames(): string[] {
  const n = [
    "passage_recip_rank",
    "passage_is_top",
    "passage_score_rel",
    "sent_overlap_frac",
    "sent_idf_overlap",
    "sent_bigram_hits",
    "sent_recip_rank",
    "sent_is_best",
    "sent_position",
    "dist_nearest",
    "dist_avg",
    "dist_none",
    "left_is_qword",
    "right_is_qword",
    "span_position",
    "span_qword_frac",
    "span_cap_frac",
    "span_all_cap",
    "span_has_digit",
    "span_has_comma",
    "span_is_year",
    "ent_exact",
    "ent_partial",
    "prev_locative",
    "window3_overlap",
    "window6_overlap",
    "window6_idf_overlap",
  ];
  for (let l = 1; l <= 8; l++) n.push(`len_${l}`);
  for (const e of ENT_TYPES) n.push(`ent_${e}`);
  for (const p of EDGE_POS) n.push(`first_${p}`);
  for (const p of EDGE_POS) n.push(`last_${p}`);
  for (const p of LEFT_CTX) n.push(`left_${p}`);
  for (const p of RIGHT_CTX) n.push(`right_${p}`);
  for (const q of QUESTION_TYPES) for (const s of SPAN_TYPES) n.push(`q_${q}_x_${s}`);
  for (const q of QUESTION_TYPES) n.push(`q_${q}_x_locative`);
  for (const q of QUESTION_TYPES) for (const b of ["1", "2", "3", "4+"]) n.push(`q_${q}_x_len${b}`);
  for (const q of QUESTION_TYPES) for (const p of EDGE_POS) n.push(`q_${q}_x_last_${p}`);
  for (const q of QUESTION_TYPES) for (const e of ENT_TYPES) n.push(`q_${q}_x_ent_${e}`);
  for (let b = 0; b < LEXICAL_BUCKETS; b++) n.push(`lex_left_${b}`);
  for (let b = 0; b < LEXICAL_BUCKETS; b++) n.push(`lex_right_${b}`);
  return n;
}

/** The feature names, in vector order. */
export const FEATURE_NAMES: readonly string[] = buildNames();
/** The number of features of a candidate span. */
export const FEATURE_COUNT = FEATURE_NAMES.length;
const INDEX = new Map(FEATURE_NAMES.map((n, i) => [n, i]));
function idx(name: string): number {
  const i = INDEX.get(name);
  if (i === undefined) throw new Error(`unknown feature ${name}`);
  return i;
}

/** FNV-1a hash of a string into [0, buckets). */
function bucket(s: string, buckets: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % buckets;
}

const LEX_LEFT = idx("lex_left_0");
const LEX_RIGHT = idx("lex_right_0");
const YEAR = /^(1[0-9]{3}|20[0-9]{2})s?$/;

function edgePos(t: Token): (typeof EDGE_POS)[number] {
  return (EDGE_POS as readonly string[]).includes(t.pos) ? (t.pos as (typeof EDGE_POS)[number]) : "OTHER";
}

/** The coarse type of a span's tokens. */
export function spanType(toks: readonly Token[], first: number, last: number): (typeof SPAN_TYPES)[number] {
  let words = 0;
  let caps = 0;
  let dates = 0;
  let nums = 0;
  let money = 0;
  for (let i = first; i <= last; i++) {
    const t = toks[i];
    if (t.punct) continue;
    words++;
    if (t.cap || t.pos === "PROPN") caps++;
    if (t.ent === "DATE" || t.ent === "TIME" || t.ent === "DURATION" || YEAR.test(t.text)) dates++;
    if (t.ent === "MONEY" || t.ent === "PERCENT") money++;
    if (t.pos === "NUM" || t.ent === "CARDINAL" || t.ent === "ORDINAL" || t.digit) nums++;
  }
  if (words === 0) return "other";
  if (dates > 0) return "date";
  if (money > 0) return "money_percent";
  if (nums > 0) return "number";
  if (caps === words) return "proper";
  const lastPos = toks[last].pos;
  if (lastPos === "NOUN" || lastPos === "PROPN") return "noun";
  return "other";
}

/** Per-question values shared by all candidates. */
interface Shared {
  maxScore: number;
}

function shared(passages: readonly ReaderPassage[]): Shared {
  let maxScore = 0;
  for (const p of passages) if (typeof p.score === "number" && p.score > maxScore) maxScore = p.score;
  return { maxScore };
}

/** Writes the features of one candidate into `out` (length FEATURE_COUNT, zero-filled by the caller). */
export function candidateFeatures(
  q: QuestionInfo,
  passages: readonly ReaderPassage[],
  set: CandidateSet,
  c: Candidate,
  out: Float64Array,
  sh: Shared = shared(passages),
): void {
  const s = set.sentences[c.sentence];
  const toks = s.analysis.tokens;
  const qStems = Math.max(1, q.stems.size);
  const p = passages[s.passage];
  out[idx("passage_recip_rank")] = 1 / (1 + s.passage);
  out[idx("passage_is_top")] = s.passage === 0 ? 1 : 0;
  out[idx("passage_score_rel")] = sh.maxScore > 0 && typeof p.score === "number" ? p.score / sh.maxScore : 0;
  out[idx("sent_overlap_frac")] = s.matched.size / qStems;
  out[idx("sent_idf_overlap")] = s.idfOverlap;
  out[idx("sent_bigram_hits")] = Math.log1p(s.bigramHits);
  out[idx("sent_recip_rank")] = 1 / (1 + s.rank);
  out[idx("sent_is_best")] = s.rank === 0 ? 1 : 0;
  // Sentence index within its passage (first sentences of a paragraph are more often answers).
  let sentIndex = 0;
  for (let k = c.sentence - 1; k >= 0 && set.sentences[k].passage === s.passage; k--) sentIndex++;
  out[idx("sent_position")] = 1 / (1 + sentIndex);

  // Distances (in tokens) from the span to question words of the sentence outside the span.
  let nearest = Infinity;
  const perStem = new Map<string, number>();
  for (const pos of s.matchPositions) {
    if (pos >= c.first && pos <= c.last) continue;
    const d = pos < c.first ? c.first - pos : pos - c.last;
    if (d < nearest) nearest = d;
    const stem = toks[pos].stem;
    const prev = perStem.get(stem);
    if (prev === undefined || d < prev) perStem.set(stem, d);
  }
  if (perStem.size === 0) {
    out[idx("dist_none")] = 1;
  } else {
    let sum = 0;
    for (const d of perStem.values()) sum += d;
    out[idx("dist_nearest")] = 1 / nearest;
    out[idx("dist_avg")] = Math.log1p(sum / perStem.size);
  }
  const isQ = (t: Token | undefined) => t !== undefined && !t.punct && !t.stop && q.stems.has(t.stem);
  const left = c.first > s.first ? toks[c.first - 1] : undefined;
  const right = c.last < s.last ? toks[c.last + 1] : undefined;
  // Question words near the span (within 3 and 6 tokens either side, same sentence).
  let w3 = 0;
  let w6 = 0;
  let w6idf = 0;
  const seen3 = new Set<string>();
  const seen6 = new Set<string>();
  for (const pos of s.matchPositions) {
    if (pos >= c.first && pos <= c.last) continue;
    const d = pos < c.first ? c.first - pos : pos - c.last;
    const stem = toks[pos].stem;
    if (d <= 3 && !seen3.has(stem)) {
      seen3.add(stem);
      w3++;
    }
    if (d <= 6 && !seen6.has(stem)) {
      seen6.add(stem);
      w6++;
      w6idf += set.idf.get(stem) ?? 0;
    }
  }
  out[idx("window3_overlap")] = w3 / qStems;
  out[idx("window6_overlap")] = w6 / qStems;
  out[idx("window6_idf_overlap")] = set.idfTotal > 0 ? w6idf / set.idfTotal : 0;
  out[idx("left_is_qword")] = isQ(left) ? 1 : 0;
  out[idx("right_is_qword")] = isQ(right) ? 1 : 0;
  out[idx("span_position")] = (c.first - s.first) / Math.max(1, s.last - s.first);

  let words = 0;
  let inQ = 0;
  let caps = 0;
  let digit = 0;
  let comma = 0;
  for (let i = c.first; i <= c.last; i++) {
    const t = toks[i];
    if (t.text === ",") comma = 1;
    if (t.punct) continue;
    words++;
    if (q.words.has(t.lower) || (!t.stop && q.stems.has(t.stem))) inQ++;
    if (t.cap) caps++;
    if (t.digit) digit = 1;
  }
  const len = c.last - c.first + 1;
  out[idx("span_qword_frac")] = words > 0 ? inQ / words : 0;
  out[idx("span_cap_frac")] = words > 0 ? caps / words : 0;
  out[idx("span_all_cap")] = words > 0 && caps === words ? 1 : 0;
  out[idx("span_has_digit")] = digit;
  out[idx("span_has_comma")] = comma;
  out[idx("span_is_year")] = len === 1 && YEAR.test(toks[c.first].text) ? 1 : 0;

  // Entity alignment: exactly one whole entity, or cutting through one.
  const e0 = toks[c.first].entId;
  const e1 = toks[c.last].entId;
  const ents = s.analysis.entities;
  if (e0 >= 0 && e0 === e1 && ents[e0].first === c.first && ents[e0].last === c.last) out[idx("ent_exact")] = 1;
  const cutsLeft = e0 >= 0 && ents[e0].first < c.first;
  const cutsRight = e1 >= 0 && ents[e1].last > c.last;
  if (cutsLeft || cutsRight) out[idx("ent_partial")] = 1;
  for (let i = c.first; i <= c.last; i++) {
    const e = toks[i].ent;
    if (e !== "" && (ENT_TYPES as readonly string[]).includes(e)) {
      out[idx(`ent_${e}`)] = 1;
      out[idx(`q_${q.type}_x_ent_${e}`)] = 1;
    }
  }
  const locative = left !== undefined && LOCATIVE.has(left.lower) ? 1 : 0;
  out[idx("prev_locative")] = locative;

  out[idx(`len_${Math.min(8, len)}`)] = 1;
  out[idx(`first_${edgePos(toks[c.first])}`)] = 1;
  out[idx(`last_${edgePos(toks[c.last])}`)] = 1;
  out[idx(`q_${q.type}_x_last_${edgePos(toks[c.last])}`)] = 1;
  const l = left === undefined ? "start" : (LEFT_CTX as readonly string[]).includes(left.pos) ? left.pos : "OTHER";
  out[idx(`left_${l}`)] = 1;
  const r = right === undefined ? "end" : (RIGHT_CTX as readonly string[]).includes(right.pos) ? right.pos : "OTHER";
  out[idx(`right_${r}`)] = 1;
  out[idx(`q_${q.type}_x_${spanType(toks, c.first, c.last)}`)] = 1;
  out[idx(`q_${q.type}_x_locative`)] = locative;
  if (left !== undefined && (left.stop || left.punct)) out[LEX_LEFT + bucket(`${q.type}|${left.lower}`, LEXICAL_BUCKETS)] = 1;
  if (right !== undefined && (right.stop || right.punct)) out[LEX_RIGHT + bucket(`${q.type}|${right.lower}`, LEXICAL_BUCKETS)] = 1;
  out[idx(`q_${q.type}_x_len${words >= 4 ? "4+" : String(Math.max(1, words))}`)] = 1;
}

/** The feature matrix of a candidate set: row i = candidate i, `FEATURE_COUNT` columns, row-major. */
export function featureMatrix(q: QuestionInfo, passages: readonly ReaderPassage[], set: CandidateSet): Float64Array {
  const m = new Float64Array(set.candidates.length * FEATURE_COUNT);
  const sh = shared(passages);
  set.candidates.forEach((c, i) => candidateFeatures(q, passages, set, c, m.subarray(i * FEATURE_COUNT, (i + 1) * FEATURE_COUNT), sh));
  return m;
}
