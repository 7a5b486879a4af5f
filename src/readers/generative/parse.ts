// Reading a model's reply: the passage numbers it cites (`[2]`, `[1, 3]`, `[1][3]`, `[2-4]`,
// `[Passage 2]`), and the answer left once citations, reasoning blocks, "Answer:" prefixes, quotes
// and markdown are stripped. Fact-checking replies become KILT's labels SUPPORTS / REFUTES, and
// entity-linking replies plain Wikipedia titles.

import { type GenerativeTask, isShortAnswerTask } from "./prompts.js";

const NUM = String.raw`#?\d+(?:\s*[-–]\s*#?\d+)?`;
const CITATION = new RegExp(
  String.raw`\[\s*(?:(?:passages?|sources?|docs?|documents?|refs?)\s*)?(${NUM}(?:\s*(?:,|;|and|&)\s*(?:(?:passages?|sources?|docs?|documents?|refs?)\s*)?${NUM})*)\s*\]`,
  "gi",
);

export interface Citations {
  /** 1-based passage numbers in the order first cited, each once, all within 1..passageCount. */
  cited: number[];
  /** Numbers cited that name no passage (0, or past the last), each once. */
  invalid: number[];
}

/** The passage numbers a reply cites. Ranges like `[2-4]` count as 2, 3, 4 (at most 50 numbers each). */
export function parseCitations(text: string, passageCount: number): Citations {
  const cited: number[] = [];
  const invalid: number[] = [];
  const add = (n: number) => {
    const list = n >= 1 && n <= passageCount ? cited : invalid;
    if (!list.includes(n)) list.push(n);
  };
  for (const m of text.matchAll(CITATION)) {
    for (const part of m[1].split(/\s*(?:,|;|and|&)\s*/i)) {
      const nums = part.match(/\d+/g)?.map(Number) ?? [];
      if (nums.length === 2 && nums[1] >= nums[0] && nums[1] - nums[0] < 50) {
        for (let n = nums[0]; n <= nums[1]; n++) add(n);
      } else {
        for (const n of nums) add(n);
      }
    }
  }
  return { cited, invalid };
}

/** The reply without citation markers. */
export function stripCitations(text: string): string {
  return text.replace(CITATION, "");
}

/** The reply without `<think>…</think>` reasoning (as reasoning models served by vLLM or Ollama emit). */
export function stripReasoning(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/gi, "").replace(/^[\s\S]*<\/think>/i, "");
}

const PREFIX = /^(?:final answer|short answer|answer|verdict|label|value|wikipedia title|title|assistant|response|a)\s*[:：]\s*/i;
const SOURCES_LINE = /^\s*(?:sources?|citations?|references?|passages?|cited)\s*[:：]?\s*[.,;]*\s*$/i;
const QUOTES: [string, string][] = [
  ['"', '"'],
  ["'", "'"],
  ["“", "”"],
  ["‘", "’"],
  ["`", "`"],
  ["«", "»"],
  ["**", "**"],
  ["*", "*"],
  ["__", "__"],
];

function unwrap(s: string): string {
  for (let changed = true; changed; ) {
    changed = false;
    s = s.trim();
    const before = s;
    s = s.replace(PREFIX, "");
    for (const [open, close] of QUOTES) {
      if (s.length >= open.length + close.length + 1 && s.startsWith(open) && s.endsWith(close)) {
        s = s.slice(open.length, s.length - close.length);
      }
    }
    if (s !== before) changed = true;
  }
  return s;
}

/** Tidies text whose citation markers were removed: no space before punctuation, single spaces. */
function tidy(s: string): string {
  return s
    .replace(/[ \t]+([.,;:!?)])/g, "$1")
    .replace(/\(\s*\)/g, "")
    .replace(/[ \t]{2,}/g, " ")
    .replace(/[ \t]+\n/g, "\n")
    .trim();
}

/**
 * The fact-checking label of a reply: SUPPORTS or REFUTES from the first word that says so
 * (`supports`/`supported`/`true`/`yes` or `refutes`/`refuted`/`false`/`no`), flipped after "not"
 * ("not supported" → REFUTES); undefined when none does.
 */
export function factLabel(text: string): "SUPPORTS" | "REFUTES" | undefined {
  const m = /\b(support(?:s|ed)?|true|correct|yes|refut(?:es|ed)?|false|incorrect|no)\b/i.exec(text);
  if (m === null) return undefined;
  const positive = /^(support|true|correct|yes)/i.test(m[1]);
  const negated = /\b(?:not|never)\s+$|n't\s+$/i.test(text.slice(0, m.index));
  return positive !== negated ? "SUPPORTS" : "REFUTES";
}

/**
 * A Wikipedia title as KILT writes it, from what a model may reply: `[[Title]]`, `Title_with_underscores`,
 * or an article URL (`https://en.wikipedia.org/wiki/Title_%28x%29`).
 */
export function wikiTitle(reply: string): string {
  let t = reply.trim();
  const url = /\bwikipedia\.org\/wiki\/([^\s?#\])>]+)/i.exec(t);
  if (url !== null) {
    try {
      t = decodeURIComponent(url[1]);
    } catch {
      t = url[1];
    }
  }
  const link = /^\[\[([^\]|]+)(?:\|[^\]]*)?\]\]$/.exec(t);
  if (link !== null) t = link[1];
  return t.replace(/_/g, " ").replace(/\s+/g, " ").trim();
}

export interface CleanAnswer {
  answer: string;
  /** Fact checking only: false when the reply named no label and the cleaned text is returned as is. */
  labelled?: boolean;
}

/**
 * The answer in a reply. Short-answer tasks keep the first non-empty line (after dropping a
 * "Sources:" line), without prefix, quotes, markdown emphasis, or a final period when it is the only
 * period (so "Denver Broncos." loses it and "Washington, D.C." keeps it). Long answers keep all lines.
 */
export function cleanAnswer(reply: string, task: GenerativeTask): CleanAnswer {
  const text = stripCitations(stripReasoning(reply));
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !SOURCES_LINE.test(l));
  if (!isShortAnswerTask(task)) return { answer: tidy(unwrap(lines.join("\n"))) };
  let answer = tidy(unwrap(lines[0] ?? ""));
  answer = unwrap(answer);
  if (answer.endsWith(".") && answer.indexOf(".") === answer.length - 1) answer = unwrap(answer.slice(0, -1));
  if (task === "entity-linking") answer = wikiTitle(answer);
  if (task === "fact-checking") {
    const label = factLabel(answer);
    return label === undefined ? { answer, labelled: false } : { answer: label, labelled: true };
  }
  return { answer };
}
