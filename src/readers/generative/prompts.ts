// Prompts for each KILT task: an instruction (system message) and the record's input with the
// retrieved passages numbered `[1] title: text` (user message), asking the model to cite passages by
// number. Closed-book prompts carry no passages and ask for no citations.

import { findDataset } from "../../datasets/catalogue.js";
import type { KiltRecord } from "../../records/types.js";
import type { ReaderPassage } from "../types.js";

/** The answer styles of KILT's tasks. */
export type GenerativeTask = "qa" | "fact-checking" | "slot-filling" | "entity-linking" | "dialogue" | "long-qa";

/** The tasks a generative reader has prompts for. */
export const GENERATIVE_TASKS: readonly GenerativeTask[] = ["qa", "fact-checking", "slot-filling", "entity-linking", "dialogue", "long-qa"];

/** One message of a chat-completions request. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Tasks whose answer is a short string (one line, no trailing period); the others are free text. */
export function isShortAnswerTask(task: GenerativeTask): boolean {
  return task !== "dialogue" && task !== "long-qa";
}

/**
 * The task for a name: a task name itself, or a dataset tartan knows (`fever`, `nq`, `eli5`, `wow`,
 * `trex`, `aidayago2`, …) mapped through its task family. Throws on anything else.
 */
export function taskFor(name: string): GenerativeTask {
  const key = name.trim().toLowerCase();
  if ((GENERATIVE_TASKS as readonly string[]).includes(key)) return key as GenerativeTask;
  const dataset = findDataset(key);
  if (dataset === undefined) throw new Error(`unknown task or dataset ${JSON.stringify(name)}: expected one of ${GENERATIVE_TASKS.join(", ")} or a dataset name`);
  if (dataset.name === "eli5") return "long-qa";
  switch (dataset.family) {
    case "Fact Checking":
      return "fact-checking";
    case "Entity Linking":
      return "entity-linking";
    case "Slot Filling":
      return "slot-filling";
    case "Dialogue":
      return "dialogue";
    default:
      return "qa";
  }
}

/**
 * The task a record's input looks like: `[START_ENT]` markers → entity linking, `subject [SEP] relation`
 * → slot filling, anything else → short-answer QA. Fact checking, dialogue and long answers cannot be
 * told from the input: name them (or their dataset) with the reader's `task` option.
 */
export function inferTask(record: KiltRecord): GenerativeTask {
  const input = record.input ?? "";
  if (input.includes("[START_ENT]")) return "entity-linking";
  if (input.includes(" [SEP] ")) return "slot-filling";
  return "qa";
}

const CITE = "Cite the passages that support your answer by their numbers in square brackets, like [2] or [1][3], right after the answer.";

const INSTRUCTIONS: Record<GenerativeTask, string> = {
  qa: "Answer the question with a short answer: a name, date, number or phrase of a few words, not a sentence.",
  "fact-checking": "Decide whether the claim is true. Reply with exactly one word: SUPPORTS if the claim is true, REFUTES if it is false.",
  "slot-filling": "Give the value of the relation for the subject: a short answer of a few words (a name, date, place or number), not a sentence.",
  "entity-linking":
    "The text marks one mention between [START_ENT] and [END_ENT]. Reply with the title of the Wikipedia article the mention refers to, and nothing else.",
  dialogue: "Continue the conversation: write the assistant's next turn, one or two informative sentences.",
  "long-qa": "Answer the question with a detailed explanation of one or two paragraphs that a curious layperson can follow.",
};

/** The system message of a task, with or without passages. */
export function systemPrompt(task: GenerativeTask, withPassages: boolean): string {
  const base = INSTRUCTIONS[task];
  if (!withPassages) return `${base} Answer from your own knowledge.`;
  return `${base} Use the numbered passages given with the input. ${CITE}`;
}

/** A passage as numbered in the prompt: `[n] title: text` (no title → `[n] text`), on one line. */
export function formatPassage(p: ReaderPassage, n: number): string {
  const text = p.text.replace(/\s+/g, " ").trim();
  const title = typeof p.provenance.title === "string" ? p.provenance.title.trim() : "";
  return title ? `[${n}] ${title}: ${text}` : `[${n}] ${text}`;
}

/** The record's input as the task presents it. */
export function formatInput(task: GenerativeTask, input: string): string {
  switch (task) {
    case "fact-checking":
      return `Claim: ${input}`;
    case "slot-filling": {
      const sep = input.indexOf(" [SEP] ");
      if (sep < 0) return `Question: ${input}`;
      return `Subject: ${input.slice(0, sep).trim()}\nRelation: ${input.slice(sep + 7).trim()}`;
    }
    case "entity-linking":
      return `Text: ${input}`;
    case "dialogue": {
      // KILT's Wizard of Wikipedia inputs hold the turns one per line, the last one the user's.
      const turns = input.split("\n").filter((t) => t.trim() !== "");
      return turns.map((t, i) => `${(turns.length - 1 - i) % 2 === 0 ? "User" : "Assistant"}: ${t.trim()}`).join("\n");
    }
    default:
      return `Question: ${input}`;
  }
}

/** What the answer line is called at the end of the prompt. */
function answerCue(task: GenerativeTask): string {
  switch (task) {
    case "fact-checking":
      return "Verdict:";
    case "slot-filling":
      return "Value:";
    case "entity-linking":
      return "Wikipedia title:";
    case "dialogue":
      return "Assistant:";
    default:
      return "Answer:";
  }
}

/** The chat messages for one record: system instruction, then passages (if any), input and answer cue. */
export function buildMessages(task: GenerativeTask, record: KiltRecord, passages: readonly ReaderPassage[]): ChatMessage[] {
  if (record.input === undefined) throw new Error(`record ${JSON.stringify(record.id)} has no input`);
  const parts: string[] = [];
  if (passages.length > 0) parts.push(`Passages:\n${passages.map((p, i) => formatPassage(p, i + 1)).join("\n")}`);
  parts.push(formatInput(task, record.input));
  parts.push(answerCue(task));
  return [
    { role: "system", content: systemPrompt(task, passages.length > 0) },
    { role: "user", content: parts.join("\n\n") },
  ];
}

/** The same messages as one plain prompt for `/completions` servers. */
export function messagesToPrompt(messages: readonly ChatMessage[]): string {
  return messages.map((m) => m.content).join("\n\n");
}
