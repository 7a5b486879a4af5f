// Seeded generator of random and adversarial KILT gold/guess pairs for differential testing of the
// evaluator against the official one (bench/eval-diff/run.mjs). Every case is a function of its seed:
// `generateCase(seed)` → { seed, ks, rankKeys, gold, guess } where gold and guess are JSONL text
// written token by token, so number spellings (5.0, 1e16, 20-digit integers), \u escapes, duplicate
// keys and odd whitespace reach both evaluators exactly as generated.
// Shapes: single answers and answer sets, multi-evidence provenance sets, sections and paragraph spans,
// empty and whitespace answers, Unicode (combining marks, RTL, CJK, emoji, zero-width, Python-only
// whitespace), numbers as ids and answers, long answers in one or many sentences, duplicate
// provenance, every rank-key combination, odd ks, and malformed shapes the official code refuses or coerces.

import { internal } from "../lib.mjs";

const { seededRandom } = await internal("util/random.js");

/** mulberry32 from src/util/random.ts (built into dist/), so cases are identical on every machine. */
const prng = seededRandom;

/** A JSON number or literal written exactly as given. */
class Raw {
  constructor(text) {
    this.text = text;
  }
}
const raw = (t) => new Raw(t);

/** An object whose members are written in order, duplicates allowed (JSON keeps the last one). */
class Members {
  constructor(pairs) {
    this.pairs = pairs;
  }
}

const ASCII_WORDS = [
  "the", "The", "a", "A", "an", "An", "THE", "cat", "Paris", "paris", "U.S.", "3.5", "sat", "on", "mat", "New", "York",
  "beatles", "Beatles", "42", "0", "-1", "x", "it's", "rock'n'roll", "co-op", "e-mail", "(film)", "1,000", "Jr.", "an-", "_the_",
  "theatre", "another", "ana", "of", "and", "river", "king", "war", "1990", "ii", "II", "Mr", "Dr.", "#1", "$5", "100%", "a.b.c",
  "alpha", "beta", "gamma", "delta", "None", "True", "null", "false", "\\", "\"quoted\"", "it", "is", "was", "in", "to",
];
const UNICODE_WORDS = [
  "café", "cafe\u0301", "the\u0301", "éthe", "thé", "naïve", "Ölçü", "İstanbul", "straße", "STRASSE", "ΑΣ", "Σίσυφος", "ǅemal",
  "ⅫI", "x²", "٣٤", "שלום", "مرحبا", "עברית", "東京", "中国人", "日本語の本", "한국어", "😀", "👩‍👩‍👧", "🇫🇷", "a\u200bb",
  "\u200b", "\u200d", "\ufeff", "zero\u200cwidth", "«the»", "—", "…", "ﬁne", "Ǆ", "ß", "ﬀ", "\u0130", "K\u212a", "µ", "the\u00a0end",
  "x\u2003y", "fin\u3000", "\ud83d\ude00x", "a\u0300", "ℌ", "①", "𝟙", "٠", "ⅷ", "an\u0645",
];
const SPACES = [" ", " ", " ", " ", "  ", "\t", "\n", "\u00a0", "\u2003", "\x1c", "\x85", "\u3000", "\ufeff", "\u200b", "\x0b"];
const PUNCT = [".", ",", "!", "?", "...", "-", "'", '"', ";", ":", "(", ")", " . ", ". ", "。", "،", "«", "»", "¿"];

function makeRng(seed) {
  const r = prng(seed);
  const api = {
    r,
    int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)),
    pick: (xs) => xs[Math.floor(r() * xs.length)],
    chance: (p) => r() < p,
  };
  return api;
}

function word(g, unicodeRate) {
  return g.chance(unicodeRate) ? g.pick(UNICODE_WORDS) : g.pick(ASCII_WORDS);
}

/** A text of n words with occasional odd spaces, punctuation and periods (sentence breaks). */
function text(g, n, { unicodeRate = 0.15, periodRate = 0.08, oddSpaceRate = 0.08 } = {}) {
  let s = "";
  for (let i = 0; i < n; i++) {
    if (i > 0) s += g.chance(oddSpaceRate) ? g.pick(SPACES) : " ";
    let w = word(g, unicodeRate);
    if (periodRate === 0) w = w.replace(/\./g, "");
    s += w;
    if (g.chance(periodRate)) s += ".";
    else if (g.chance(0.05)) s += g.pick(PUNCT);
  }
  return s;
}

/** A short answer-like string, sometimes empty, whitespace-only or dots only. */
function answerText(g, profile, emptyScale = 1) {
  const x = g.r();
  if (x < 0.04 * emptyScale) return "";
  if (x < 0.07 * emptyScale) return g.pick(["   ", "\t", "\u00a0", "\u3000 ", "\x1c", "\u200b", "\ufeff"]);
  if (x < 0.09) return g.pick([".", "...", " . ", "a", "the", "an .", "!"]);
  if (x < 0.09 + profile.longRate) {
    // a long answer: one sentence or many
    const n = g.int(200, profile.longMax);
    return text(g, n, { periodRate: g.chance(0.5) ? 0 : 0.05, unicodeRate: 0.05, oddSpaceRate: 0 });
  }
  if (x < 0.5) return text(g, g.int(1, 3));
  return text(g, g.int(1, 14), { periodRate: 0.06 });
}

/** A variation of a gold answer, as a reader might produce it. */
function mutate(g, s) {
  switch (g.int(0, 11)) {
    case 0:
      return s;
    case 1:
      return s.toUpperCase();
    case 2:
      return s.toLowerCase();
    case 3:
      return `${g.pick(["the ", "The ", "a ", "An ", ""])}${s}${g.pick([".", "!", "", " ", "?"])}`;
    case 4:
      return `${g.pick(SPACES)}${s}${g.pick(SPACES)}`;
    case 5: {
      const w = s.split(" ");
      return w.slice(0, Math.max(1, w.length - 1)).join(" ");
    }
    case 6: {
      const w = s.split(" ");
      return w.reverse().join(" ");
    }
    case 7:
      return `${s} ${text(g, g.int(1, 4))}`;
    case 8:
      return s.replace(/ /g, g.pick(["  ", "\t", ". ", " , "]));
    case 9:
      return s.normalize(g.pick(["NFC", "NFD", "NFKC"]));
    default:
      return text(g, g.int(1, 5));
  }
}

// ---- ids --------------------------------------------------------------------------------------

const BIG = ["12345678901234567890", "12345678901234567891", "-9223372036854775809", "9007199254740993", "9007199254740992", "100000000000000000000"];

/** A page id: strings, ints, floats, padded strings, leading zeros, big integers, booleans, null. */
function pageId(g, n, oddRate) {
  if (!g.chance(oddRate)) return g.chance(0.5) ? String(n) : raw(String(n));
  switch (g.int(0, 12)) {
    case 0:
      return ` ${n} `;
    case 1:
      return raw(`${n}.0`);
    case 2:
      return `0${n}`;
    case 3:
      return raw(g.pick(BIG));
    case 4:
      return g.pick(BIG);
    case 5:
      return raw(g.pick(["true", "false", "null"]));
    case 6:
      return raw(g.pick([`${n}e0`, `${n}E2`, "1e16", "1e22", "1.5", "-0", "-0.0", "0.1", "1e-7", "123456789012345678.0", "1E400"]));
    case 7:
      return `${n}\u00a0`;
    case 8:
      return `\t${n}\n`;
    case 9:
      return g.pick(["Trueno", "None", "1.0", "1e16", `${n}.0`]);
    case 10:
      return raw(String(-n));
    default:
      return String(n);
  }
}

function recordId(g, i, oddRate) {
  if (!g.chance(oddRate)) return g.chance(0.3) ? raw(String(1000 + i)) : `q${i}`;
  switch (g.int(0, 9)) {
    case 0:
      return raw(String(1000 + i));
    case 1:
      return ` q${i} `;
    case 2:
      return raw(`${1000 + i}.0`);
    case 3:
      return raw(`${BIG[0].slice(0, 17)}${String(100 + i)}`);
    case 4:
      return `${BIG[0].slice(0, 17)}${String(100 + i)}`;
    case 5:
      return `q${i}\u3000`;
    case 6:
      return `\u00a0q${i}`;
    case 7:
      return raw(String(-(1000 + i)));
    default:
      return `id-${i}-${g.pick(UNICODE_WORDS)}`;
  }
}

// ---- provenance --------------------------------------------------------------------------------

const RANK_KEY_SETS = [
  ["wikipedia_id"],
  ["wikipedia_id"],
  ["wikipedia_id"],
  ["wikipedia_id", "start_paragraph_id"],
  ["wikipedia_id", "start_paragraph_id", "end_paragraph_id"],
  ["wikipedia_id", "section"],
  ["section"],
  ["title"],
  ["wikipedia_id", "start_paragraph_id", "start_character", "end_character"],
  ["start_paragraph_id", "wikipedia_id"],
  ["wikipedia_id", "wikipedia_id"],
  ["wikipedia_title"],
  ["wikipedia_id", "bleu_score"],
];

const KS_SETS = [[1, 5, 10, 20], [1], [2], [1, 2, 3], [3, 1, 2], [5, 1], [1, 5, 10, 20, 50, 100], [7], [1, 100], [2, 4, 8], [20, 10]];

/** One provenance entry drawn from page `n`. */
function provenance(g, n, pages, o) {
  const p = pages[n];
  const members = [];
  const add = (k, v) => members.push([k, v]);
  const keyOrder = g.chance(0.2) ? "shuffled" : "normal";
  if (!g.chance(o.missingKeyRate)) add("wikipedia_id", pageId(g, n, o.oddIdRate));
  if (!g.chance(o.missingKeyRate)) add("title", g.chance(0.05) ? g.pick(["", " ", "\u00a0"]) : p.title);
  if (!g.chance(o.missingKeyRate * 2)) add("section", g.chance(0.5) ? p.sections[g.int(0, p.sections.length - 1)] : `Section::::${p.title}`);
  const para = g.int(1, 6);
  if (!g.chance(o.missingKeyRate)) add("start_paragraph_id", g.chance(0.85) ? raw(String(para)) : g.pick([String(para), ` ${para} `, raw(`${para}.0`), `0${para}`]));
  if (!g.chance(o.missingKeyRate * 2)) add("end_paragraph_id", raw(String(para + g.int(0, 1))));
  if (g.chance(0.5)) {
    const s = g.int(0, 300);
    add("start_character", raw(String(s)));
    add("end_character", raw(String(s + g.int(0, 80))));
  }
  if (g.chance(0.3)) add("bleu_score", raw(g.pick(["1.0", "0.5", "1", "0.123456789", "1e-5"])));
  if (g.chance(0.1)) add("wikipedia_title", p.title);
  if (o.withText && !g.chance(0.1)) add("text", p.texts[g.int(0, p.texts.length - 1)]);
  if (g.chance(0.01)) add("wikipedia_id", pageId(g, (n + 1) % pages.length, o.oddIdRate)); // duplicate key: the last wins
  if (keyOrder === "shuffled") members.sort(() => g.r() - 0.5);
  return new Members(members);
}

// ---- records ------------------------------------------------------------------------------------

function makePages(g, count, answers) {
  const pages = [];
  for (let i = 0; i < count; i++) {
    const title = g.chance(0.15) ? g.pick(UNICODE_WORDS) + " " + g.pick(ASCII_WORDS) : text(g, g.int(1, 3), { unicodeRate: 0.1, periodRate: 0 });
    const texts = [];
    for (let t = 0; t < 3; t++) {
      let s = text(g, g.int(0, 25), { unicodeRate: 0.1 });
      if (g.chance(0.4)) s += ` ${title} `;
      if (g.chance(0.4) && answers.length) s += ` ${mutate(g, g.pick(answers))} `;
      if (g.chance(0.2)) s = `${text(g, 3)} ${s}`;
      texts.push(s);
    }
    pages.push({ title, texts, sections: [`Section::::${text(g, 1, { periodRate: 0 })}`, "Section::::Abstract", ""] });
  }
  return pages;
}

function profileFor(g) {
  const hostile = g.chance(0.1);
  // Most cases are well formed (so their sections get compared), a few are messy (refusals, crashes).
  const messy = hostile || g.chance(0.2);
  return {
    mess: messy ? 1 : 0.05,
    records: g.int(1, 12),
    pages: g.int(2, 30),
    longRate: g.chance(0.05) ? 0.3 : 0.01,
    longMax: g.chance(0.1) ? 1200 : 400,
    oddIdRate: g.chance(0.3) ? 0.25 : 0.02,
    missingKeyRate: g.chance(0.2) ? 0.1 : 0.005,
    withText: g.chance(0.7),
    hostile,
    noInputRate: messy && g.chance(0.3) ? 0.3 : 0,
    shapeErrorRate: hostile ? 0.15 : 0,
  };
}

/** A gold output: an answer, provenance, or both. */
function goldOutput(g, pages, o, ans) {
  const m = [];
  const kind = g.r();
  if (kind < 0.85 + 0.15 * (1 - o.mess)) {
    let a = ans;
    if (o.shapeErrorRate && g.chance(o.shapeErrorRate)) a = g.pick([raw("42"), raw("5.0"), raw("0"), raw("null"), raw("true"), raw("[1, 2]"), raw('{"a": "b"}'), raw("1e16")]);
    m.push(["answer", a]);
  }
  if (kind > 0.15 || g.chance(0.5)) {
    const size = g.chance(0.1) ? 0 : g.int(1, g.chance(0.3) ? 4 : 2);
    const prov = [];
    for (let i = 0; i < size; i++) {
      const n = g.int(0, pages.length - 1);
      o.cited.push(n);
      prov.push(provenance(g, n, pages, o));
    }
    if (g.chance(0.08) && prov.length) prov.push(prov[0]); // duplicate provenance
    let pv = prov;
    if (o.shapeErrorRate && g.chance(o.shapeErrorRate)) pv = g.pick([raw("{}"), raw('{"wikipedia_id": "1"}'), raw('"1"'), raw("null"), [...prov, raw('"x"')], [...prov, raw("3")]]);
    m.push(["provenance", pv]);
  }
  if (g.chance(0.05)) m.push(["meta", new Members([["score", raw("1")]])]);
  return new Members(m);
}

function goldRecord(g, i, pages, o) {
  o.cited = [];
  const nAnswers = g.chance(0.6) ? 1 : g.int(2, 5);
  const answers = [];
  for (let a = 0; a < nAnswers; a++) answers.push(answerText(g, o, o.mess));
  const outputs = [];
  const nOut = g.chance(0.5) ? 1 : g.int(2, 5);
  for (let k = 0; k < nOut; k++) outputs.push(goldOutput(g, pages, o, answers[k % answers.length]));
  const m = [["id", recordId(g, i, o.oddIdRate)]];
  if (!g.chance(o.noInputRate)) {
    let input = text(g, g.int(0, 20), { unicodeRate: 0.1 });
    if (g.chance(0.4)) input += ` ${pages[g.int(0, pages.length - 1)].title}`;
    m.push(["input", g.chance(0.02 * o.mess) ? raw(g.pick(["42", "null", "true"])) : input]);
  }
  let out = outputs;
  if (o.shapeErrorRate && g.chance(o.shapeErrorRate / 3)) out = g.pick([[], raw("{}"), raw('"x"'), [raw("1")]]);
  m.push(["output", out]);
  if (g.chance(0.1)) m.push(["meta", new Members([["template_questions", ["a", "b"]]])]);
  return { members: m, answers, outputs, pagesCited: o.cited };
}

/** A guess for a gold record. */
function guessRecord(g, gold, pages, o, k) {
  const goldAnswers = gold.answers.filter((a) => a.trim().length > 0);
  let answer;
  const x = g.r();
  if (x < 0.35 && goldAnswers.length) answer = g.pick(goldAnswers);
  else if (x < 0.75 && goldAnswers.length) answer = mutate(g, g.pick(goldAnswers));
  else answer = answerText(g, o);
  if (g.chance(0.04 * o.mess)) answer = g.pick([raw("null"), raw("42"), raw("5.0"), raw("true"), raw("0"), raw("-0.0"), raw("1e16"), raw("10000000000000000"), raw("12345678901234567890")]);
  if (o.shapeErrorRate && g.chance(o.shapeErrorRate)) answer = g.pick([raw("[1, 2]"), raw('{"a": 1}'), raw("[]"), raw('["the"]')]);
  const nProv = g.chance(0.05) ? 0 : g.int(1, Math.max(1, Math.min(30, k + g.int(-2, 5))));
  const prov = [];
  for (let i = 0; i < nProv; i++) {
    // Often pages the gold cites (right and wrong paragraphs), else random pages.
    const cited = gold.pagesCited;
    prov.push(provenance(g, cited.length && g.chance(0.5) ? g.pick(cited) : g.int(0, pages.length - 1), pages, o));
  }
  if (g.chance(0.1) && prov.length) prov.splice(g.int(0, prov.length - 1), 0, prov[0]);
  const out = [];
  const shape = g.r();
  if (shape > 0.1 * o.mess) {
    const m = [];
    if (!g.chance(0.03 * o.mess)) m.push(["answer", answer]);
    if (!g.chance(0.03 * o.mess)) {
      let pv = prov;
      if (o.shapeErrorRate && g.chance(o.shapeErrorRate)) pv = g.pick([raw("{}"), raw('{"wikipedia_id": "1"}'), raw("null"), raw('"1"'), [...prov, raw('"title"')], [...prov, raw("7")]]);
      m.push(["provenance", pv]);
    }
    out.push(new Members(m));
  } else if (shape < 0.05 * o.mess) {
    // answer and provenance in separate outputs (downstream refuses; retrieval takes the provenance one)
    out.push(new Members([["answer", answer]]));
    out.push(new Members([["provenance", prov]]));
  } else if (shape < 0.07 * o.mess) {
    out.push(new Members([["answer", answer], ["provenance", prov]]));
    out.push(new Members([["answer", answer]]));
  } else if (shape < 0.09 * o.mess) {
    // no outputs at all
  } else {
    out.push(new Members([["answer", answer], ["provenance", prov]]));
    out.push(new Members([["answer", answer], ["provenance", prov]]));
  }
  return out;
}

// ---- serialisation ------------------------------------------------------------------------------

function str(g, s, escapeRate) {
  if (!(escapeRate > 0 && g.chance(escapeRate))) return JSON.stringify(s);
  // \u escapes for every non-ASCII UTF-16 unit (surrogate pairs as two escapes), sometimes for ASCII
  // letters and "/", and upper-case hex digits: the same string, spelled differently.
  const letters = g.chance(0.3);
  const slash = g.chance(0.2);
  const upper = g.chance(0.3);
  const esc = (c) => {
    const h = c.charCodeAt(0).toString(16).padStart(4, "0");
    return `\\u${upper ? h.toUpperCase() : h}`;
  };
  let j = '"';
  for (const unit of s.split("")) {
    const c = unit.charCodeAt(0);
    if (c > 0x7f || (letters && unit >= "a" && unit <= "e")) j += esc(unit);
    else if (slash && unit === "/") j += "\\/";
    else j += JSON.stringify(unit).slice(1, -1);
  }
  return `${j}"`;
}

function ser(g, v, o) {
  const sp = o.spacing;
  if (v instanceof Raw) return v.text;
  if (typeof v === "string") return str(g, v, o.escapeRate);
  if (v instanceof Members) return `{${v.pairs.map(([k, x]) => `${str(g, k, o.escapeRate / 4)}:${sp}${ser(g, x, o)}`).join(`,${sp}`)}}`;
  if (Array.isArray(v)) return `[${v.map((x) => ser(g, x, o)).join(`,${sp}`)}]`;
  throw new Error(`cannot serialise ${typeof v}`);
}

/** Generates one case; the same seed always gives the same case. */
/**
 * Seeds from here on are long-ROUGE cases: a gold answer sentence of 300–700 words against a guess
 * sentence of 7,000–9,000 words (the gold with a few edits after a long run of words that never occur
 * in the gold, and a word or two after it), so tartan's LCS table exceeds its 4M-cell block and is traced in segments, while the
 * backtrack stays short enough for pltrdy's recursion (the official code gives a value).
 */
export const LONG_ROUGE_FIRST_SEED = 1_000_000_000;

const LONG_WORDS = [...ASCII_WORDS, ...UNICODE_WORDS].filter((w) => !w.includes(".") && !/\s/u.test(w) && !/[\u200b\u200d\ufeff\u200c]/u.test(w));

function longRougeCase(seed) {
  const g = makeRng(seed);
  const words = (n) => Array.from({ length: n }, () => g.pick(LONG_WORDS));
  const gold = [];
  const guess = [];
  const records = g.int(1, 2);
  for (let r = 0; r < records; r++) {
    const ref = words(g.int(300, 700));
    const edited = [];
    for (const [i, w] of ref.entries()) {
      const x = i < 3 ? 1 : g.r(); // the first words kept, so the backtrack ends inside the copy
      if (x < 0.01) continue; // deleted
      if (x < 0.02) edited.push(g.pick(LONG_WORDS)); // replaced
      else edited.push(w);
      if (g.chance(0.01)) edited.push(g.pick(LONG_WORDS)); // inserted
    }
    // Unrelated words never equal a gold word (a "~" suffix), so the LCS stays in the edited copy.
    const junk = (n) => words(n).map((w) => `${w}~`);
    const hyp = [...junk(g.int(7000, 9000)), ...edited, ...junk(g.int(1, 2))];
    const answers = [ref.join(" ")];
    if (g.chance(0.3)) answers.push(words(g.int(1, 20)).join(" "));
    const id = `long-${seed}-${r}`;
    gold.push(JSON.stringify({ id, input: "q", output: answers.map((a) => ({ answer: a, provenance: [{ wikipedia_id: String(r) }] })) }));
    guess.push(JSON.stringify({ id, output: [{ answer: hyp.join(" "), provenance: [{ wikipedia_id: String(r) }] }] }));
  }
  return { seed, ks: [1, 5], rankKeys: ["wikipedia_id"], gold: `${gold.join("\n")}\n`, guess: `${guess.join("\n")}\n` };
}

export function generateCase(seed) {
  if (seed >= LONG_ROUGE_FIRST_SEED) return longRougeCase(seed);
  const g = makeRng(seed);
  const o = profileFor(g);
  const ks = g.pick(KS_SETS);
  const rankKeys = g.pick(RANK_KEY_SETS);
  const answerPool = [];
  for (let i = 0; i < 8; i++) answerPool.push(text(g, g.int(1, 3)));
  const pages = makePages(g, o.pages, answerPool);
  const golds = [];
  for (let i = 0; i < o.records; i++) golds.push(goldRecord(g, i, pages, o));
  // Make ids unique as Python sees them (str(id).strip()): drop records that would collide.
  const serOpts = { spacing: g.pick([" ", "", " "]), escapeRate: g.chance(0.2) ? 0.3 : 0 };
  const goldLines = golds.map((r) => ser(g, new Members(r.members), serOpts));
  const guessLines = [];
  for (const r of golds) {
    if (g.chance(0.02 * o.mess)) continue; // a missing prediction
    const idMember = r.members[0];
    let id = idMember[1];
    if (g.chance(0.15)) id = id instanceof Raw ? (g.chance(0.5) ? `${id.text}` : ` ${id.text} `) : /^-?\d+$/.test(id.trim()) && g.chance(0.5) ? raw(id.trim()) : `${id}${g.chance(0.5) ? " " : ""}`;
    const m = [["id", id]];
    if (g.chance(0.1)) m.push(["input", "ignored"]);
    m.push(["output", guessRecord(g, r, pages, o, Math.max(...ks))]);
    guessLines.push(ser(g, new Members(m), serOpts));
  }
  if (g.chance(0.05)) guessLines.push(ser(g, new Members([["id", "extra-id"], ["output", [new Members([["answer", "x"], ["provenance", []]])]]]), serOpts));
  if (g.chance(0.5)) guessLines.sort(() => g.r() - 0.5);
  return { seed, ks, rankKeys, gold: `${goldLines.join("\n")}\n`, guess: `${guessLines.join("\n")}\n` };
}
