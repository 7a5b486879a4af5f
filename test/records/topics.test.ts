// Topic files (src/records/topics.ts): Pyserini's TSV, TREC topic files and JSONL with a chosen field,
// each read as (id, text, line); every bad line refused naming the file, the line and the field.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readTopics, type TopicsOptions } from "../../src/records/topics.js";

const tmp = mkdtempSync(join(tmpdir(), "tartan-topics-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

let n = 0;
function file(text: string): string {
  const f = join(tmp, `topics-${n++}.txt`);
  writeFileSync(f, text);
  return f;
}
async function all(f: string, o: TopicsOptions) {
  const out = [];
  for await (const t of readTopics(f, o)) out.push(t);
  return out;
}

const TREC = `<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international
criminal activity.

<narr> Narrative:
A relevant document must identify the organization.
</top>

<top>
<num> Number: 302 </num>
<title> Topic: Poliomyelitis and Post-Polio </title>
<desc> Description: Is the disease of Poliomyelitis (polio) under control? </desc>
<narr> Narrative: Relevant documents report on the state of polio. </narr>
</top>
`;

describe("topic formats", () => {
  it("TSV: qid<TAB>text per line, blank lines skipped", async () => {
    const f = file("1048585\twhat is paula deen's brother\n\n2\tAndrogen receptor define\r\n");
    expect(await all(f, { format: "tsv" })).toEqual([
      { id: "1048585", text: "what is paula deen's brother", line: 1 },
      { id: "2", text: "Androgen receptor define", line: 3 },
    ]);
  });

  it("TREC: the title by default, desc or narr when asked, labels and closing tags optional", async () => {
    const f = file(TREC);
    expect(await all(f, { format: "trec" })).toEqual([
      { id: "301", text: "International Organized Crime", line: 1 },
      { id: "302", text: "Poliomyelitis and Post-Polio", line: 13 },
    ]);
    expect((await all(f, { format: "trec", field: "desc" })).map((t) => t.text)).toEqual([
      "Identify organizations that participate in international criminal activity.",
      "Is the disease of Poliomyelitis (polio) under control?",
    ]);
    expect((await all(f, { format: "trec", field: "narrative" })).map((t) => t.text)).toEqual(["A relevant document must identify the organization.", "Relevant documents report on the state of polio."]);
  });

  it("JSONL: id, qid or _id, and the chosen text field", async () => {
    const f = file('{"_id": "q1", "text": "what is BM25", "metadata": {}}\n{"id": 7, "question": "who?", "text": "ignored"}\n');
    expect(await all(f, { format: "jsonl" })).toEqual([
      { id: "q1", text: "what is BM25", line: 1 },
      { id: "7", text: "ignored", line: 2 },
    ]);
    const g = file('{"qid": "a", "question": "who wrote it?"}\n');
    expect(await all(g, { format: "jsonl", field: "question" })).toEqual([{ id: "a", text: "who wrote it?", line: 1 }]);
  });

  it("refuses bad lines naming the file, the line and the field", async () => {
    const cases: [string, TopicsOptions, string][] = [
      ["1\tok\nno tab here\n", { format: "tsv" }, ":2: no tab: a TSV topic is qid<TAB>text"],
      ["1\ta\tb\n", { format: "tsv" }, ":1: 3 fields: a TSV topic is qid<TAB>text"],
      ["\tquery\n", { format: "tsv" }, ":1: field qid (1) is empty"],
      ["5\t \n", { format: "tsv" }, ":1: field text (2) of topic 5 is empty"],
      ["1\ta\n1\tb\n", { format: "tsv" }, ':2: topic id "1" given again (first at line 1)'],
      ['{"text": "x"}\n', { format: "jsonl" }, ":1: topic without id (field id, qid or _id)"],
      ['{"id": "x"}\n{"id": "y", "text": 3}\n', { format: "jsonl" }, ':1: topic x has no field "text" (--topics-field)'],
      ['{"id": "y", "text": 3}\n', { format: "jsonl" }, ':1: field "text" of topic y is not a string'],
      ['{"id": "y", "text": "ok"}\nnot json\n', { format: "jsonl" }, ":2:"],
      ["<top>\n<title> no number\n</top>\n", { format: "trec" }, ":1: topic without <num>"],
      ["<top>\n<num> Number: 9\n<desc> only a description\n</top>\n", { format: "trec" }, ":1: topic 9 has no <title> text (--topics-field)"],
      ["<top>\n<num> 1\n<title> a\n<top>\n", { format: "trec" }, ":4: <top> inside the topic of line 1 (no </top> before it)"],
      ["<top>\n<num> 1\n<title> a\n", { format: "trec" }, ":1: topic without </top> at the end of the file"],
      ["stray words\n<top>\n", { format: "trec" }, ':1: text outside <top>…</top>: "stray words"'],
    ];
    for (const [text, o, message] of cases) {
      const f = file(text);
      await expect(all(f, o)).rejects.toThrow(`${f}${message}`);
    }
    await expect(all(file("1\ta\n"), { format: "tsv", field: "x" })).rejects.toThrow("--topics-field goes with trec or jsonl topics");
    await expect(all(file(TREC), { format: "trec", field: "body" })).rejects.toThrow('--topics-field: a TREC topic\'s fields are title, desc, narr; not "body"');
  });
});
