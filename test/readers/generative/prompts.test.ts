import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { KiltRecord } from "../../../src/records/types.js";
import { buildMessages, formatInput, formatPassage, inferTask, messagesToPrompt, systemPrompt, taskFor } from "../../../src/readers/generative/prompts.js";
import { squadPassage, squadRecord } from "../../fixtures/readers/squad.js";

const SAMPLES = new URL("../../../../shared/data/kilt-samples/", import.meta.url).pathname;
const firstRecord = (file: string): KiltRecord => JSON.parse(readFileSync(`${SAMPLES}${file}`, "utf8").split("\n")[0]);

describe("tasks", () => {
  it("maps task and dataset names to tasks", () => {
    expect(taskFor("qa")).toBe("qa");
    expect(taskFor("Fact-Checking")).toBe("fact-checking");
    expect(taskFor("fever")).toBe("fact-checking");
    expect(taskFor("aidayago2")).toBe("entity-linking");
    expect(taskFor("wned")).toBe("entity-linking");
    expect(taskFor("trex")).toBe("slot-filling");
    expect(taskFor("zsre")).toBe("slot-filling");
    expect(taskFor("nq")).toBe("qa");
    expect(taskFor("hotpotqa")).toBe("qa");
    expect(taskFor("triviaqa")).toBe("qa");
    expect(taskFor("eli5")).toBe("long-qa");
    expect(taskFor("wow")).toBe("dialogue");
    expect(() => taskFor("summarisation")).toThrow('unknown task or dataset "summarisation"');
  });

  it("infers entity linking, slot filling and QA from real KILT inputs", () => {
    expect(inferTask(firstRecord("wned-dev-kilt.jsonl"))).toBe("entity-linking");
    expect(inferTask(firstRecord("trex-dev-kilt.jsonl"))).toBe("slot-filling");
    expect(inferTask(firstRecord("structured_zeroshot-dev-kilt.jsonl"))).toBe("slot-filling");
    expect(inferTask(firstRecord("nq-dev-kilt.jsonl"))).toBe("qa");
    expect(inferTask(firstRecord("fever-dev-kilt.jsonl"))).toBe("qa"); // a claim cannot be told from a question
  });
});

describe("formatting", () => {
  it("numbers passages as [n] title: text on one line", () => {
    const p = { text: "Warsaw is\nthe capital\tof Poland. ", provenance: { wikipedia_id: "1", title: "Warsaw" } };
    expect(formatPassage(p, 3)).toBe("[3] Warsaw: Warsaw is the capital of Poland.");
    expect(formatPassage({ text: "untitled", provenance: { wikipedia_id: "2" } }, 1)).toBe("[1] untitled");
  });

  it("presents each task's input", () => {
    expect(formatInput("slot-filling", "Cirith Ungol [SEP] genre")).toBe("Subject: Cirith Ungol\nRelation: genre");
    expect(formatInput("fact-checking", "Fox 2000 Pictures released the film Soul Food.")).toBe("Claim: Fox 2000 Pictures released the film Soul Food.");
    expect(formatInput("qa", "what do the 3 dots mean in math")).toBe("Question: what do the 3 dots mean in math");
  });

  it("gives dialogue turns speakers so that the last turn is the user's (real WoW record)", () => {
    const lines = formatInput("dialogue", firstRecord("wow-dev-kilt.jsonl").input!).split("\n");
    expect(lines.length).toBe(7);
    expect(lines[0]).toBe("User: I love the 1980s music one of my favorite artists is michael jackson");
    expect(lines[1]).toBe("Assistant: You mean all of the major events and trends in pop music in the 80s? I love 80s music!");
    expect(lines[6]).toBe("User: i have never heard of tears for fears before. what where there singles.");
  });
});

describe("buildMessages", () => {
  const record = squadRecord("56be4db0acb8001400a502ec");
  const passages = [squadPassage("Super_Bowl_50", 1), squadPassage("Warsaw", 1)];

  it("puts the instruction in the system message and the numbered passages, question and cue in the user message", () => {
    const messages = buildMessages("qa", record, passages);
    expect(messages).toEqual([
      {
        role: "system",
        content:
          "Answer the question with a short answer: a name, date, number or phrase of a few words, not a sentence. Use the numbered passages given with the input. " +
          "Cite the passages that support your answer by their numbers in square brackets, like [2] or [1][3], right after the answer.",
      },
      {
        role: "user",
        content: `Passages:\n[1] Super Bowl 50: ${passages[0].text}\n[2] Warsaw: ${passages[1].text}\n\nQuestion: Which NFL team represented the AFC at Super Bowl 50?\n\nAnswer:`,
      },
    ]);
    expect(passages[0].text.startsWith("Super Bowl 50 was an American football game to determine the champion")).toBe(true);
    expect(passages[1].text.startsWith("One of the most famous people born in Warsaw was Maria Skłodowska-Curie")).toBe(true);
  });

  it("asks for no citations closed-book", () => {
    const messages = buildMessages("fact-checking", { id: "137334", input: "Fox 2000 Pictures released the film Soul Food.", output: [] }, []);
    expect(messages[0].content).toBe(
      "Decide whether the claim is true. Reply with exactly one word: SUPPORTS if the claim is true, REFUTES if it is false. Answer from your own knowledge.",
    );
    expect(messages[1].content).toBe("Claim: Fox 2000 Pictures released the film Soul Food.\n\nVerdict:");
    expect(messagesToPrompt(messages)).toBe(`${messages[0].content}\n\n${messages[1].content}`);
    expect(systemPrompt("entity-linking", true)).toContain("[START_ENT] and [END_ENT]");
  });

  it("refuses a record without input (TriviaQA's released files)", () => {
    expect(() => buildMessages("qa", firstRecord("triviaqa-dev_id-kilt.jsonl"), [])).toThrow('record "sfq_17752" has no input');
  });
});
