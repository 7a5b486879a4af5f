// WikiReading shards: the hand-written fixture (16 instances of 6 articles in the released JSON
// schema) read and converted exactly; fallbacks without break_levels or raw_answers; format errors
// with file and line; directories of shards and tar archives (ustar, GNU and pax long names) streamed.

import { afterAll, describe, expect, it } from "vitest";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  answersOf,
  checkWikiReadingInstance,
  documentParagraphs,
  readWikiReading,
  tarLines,
  titleFromDocument,
  wikiReadingToKilt,
  type WikiReadingExample,
} from "../../src/datasets/wikireading.js";

const SHARD = fileURLToPath(new URL("../fixtures/wikireading/shard.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-wikireading-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function all(path: string, opts = {}): Promise<WikiReadingExample[]> {
  const out: WikiReadingExample[] = [];
  for await (const ex of readWikiReading(path, opts)) out.push(ex);
  return out;
}
const lines = readFileSync(SHARD, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("the hand-written shard", () => {
  it("has 16 instances of 6 articles with their titles, properties and answer sets", async () => {
    const ex = await all(SHARD);
    expect(ex.map((e) => [e.id, e.title, e.answers])).toEqual([
      ["7186:instance of", "Marie Curie", ["human"]],
      ["7186:sex or gender", "Marie Curie", ["female"]],
      ["7186:date of birth", "Marie Curie", ["7 November 1867"]],
      ["7186:occupation", "Marie Curie", ["physicist", "chemist"]],
      ["937:instance of", "Albert Einstein", ["human"]],
      ["937:sex or gender", "Albert Einstein", ["male"]],
      ["937:date of birth", "Albert Einstein", ["14 March 1879"]],
      ["937:occupation", "Albert Einstein", ["physicist"]],
      ["7259:instance of", "Ada Lovelace", ["human"]],
      ["7259:date of birth", "Ada Lovelace", ["10 December 1815"]],
      ["7259:occupation", "Ada Lovelace", ["mathematician"]],
      ["7251:instance of", "Alan Turing", ["human"]],
      ["7251:sex or gender", "Alan Turing", ["male"]],
      ["7251:occupation", "Alan Turing", ["mathematician", "computer scientist"]],
      ["90:country", "Paris", ["France"]],
      ["456:country", "Lyon", ["France"]],
    ]);
    expect(ex.map((e) => e.answerInDocument)).toEqual([false, false, true, true, false, false, true, true, false, true, true, false, false, true, true, true]);
    expect(ex.map((e) => e.line)).toEqual([...Array(16).keys()].map((i) => i + 1));
  });

  it("rebuilds the document from break_levels: no space at 0, paragraphs at 4", async () => {
    const [curie] = await all(SHARD, { limit: 1 });
    expect(curie.paragraphs).toEqual([
      "Marie Curie (7 November 1867 – 4 July 1934) was a Polish and naturalised-French physicist and chemist who conducted pioneering research on radioactivity. She was the first woman to win a Nobel Prize.",
      "She was born in Warsaw.",
    ]);
    expect(curie.tokens.length).toBe(43);
  });

  it("converts to a KILT slot-filling record: title [SEP] property, answers, the document as provenance", async () => {
    const ex = await all(SHARD);
    expect(wikiReadingToKilt(ex[3])).toEqual({
      id: "7186:occupation",
      input: "Marie Curie [SEP] occupation",
      output: [
        {
          answer: "physicist",
          provenance: [
            {
              wikipedia_id: "7186",
              title: "Marie Curie",
              text:
                "Marie Curie (7 November 1867 – 4 July 1934) was a Polish and naturalised-French physicist and chemist who conducted pioneering research on radioactivity. She was the first woman to win a Nobel Prize.\n" +
                "She was born in Warsaw.",
            },
          ],
        },
        { answer: "chemist" },
      ],
      meta: { property: "occupation", title: "Marie Curie", answers: ["physicist", "chemist"], key: "7186", answer_in_document: true },
    });
    expect(wikiReadingToKilt(ex[15], { text: false })).toEqual({
      id: "456:country",
      input: "Lyon [SEP] country",
      output: [{ answer: "France", provenance: [{ wikipedia_id: "456", title: "Lyon" }] }],
      meta: { property: "country", title: "Lyon", answers: ["France"], key: "456", answer_in_document: true },
    });
  });
});

describe("fallbacks", () => {
  it("answers from answer_string_sequence cut at answer_breaks when raw_answers is empty", () => {
    const turing = { ...lines[13], raw_answers: [] };
    expect(answersOf(checkWikiReadingInstance(turing, "t"))).toEqual(["mathematician", "computer scientist"]);
    expect(answersOf(checkWikiReadingInstance({ ...lines[3], raw_answers: "physicist" }, "t"))).toEqual(["physicist"]);
  });

  it("paragraphs from paragraph_breaks (words joined by spaces) without break_levels", () => {
    const paris = checkWikiReadingInstance({ ...lines[14], break_levels: undefined }, "t");
    expect(documentParagraphs(paris)).toEqual(["Paris is the capital and most populous city of France .", "It is located on the Seine ."]);
    expect(titleFromDocument(paris)).toBe("Paris");
  });

  it("titles: the words before the first '(', ',', 'is', 'was', …; else the key, else the shard line", async () => {
    const inst = (words: string[]) => checkWikiReadingInstance({ string_sequence: words, question_string_sequence: ["country"] }, "t");
    expect(titleFromDocument(inst(["The", "Hague", "is", "a", "city"]))).toBe("The Hague");
    expect(titleFromDocument(inst(["Berlin", ",", "capital"]))).toBe("Berlin");
    expect(titleFromDocument(inst(["is", "a", "city"]))).toBeUndefined();
    expect(titleFromDocument(inst("a b c d e f g h i j k l m is".split(" ")))).toBeUndefined();
    const f = join(tmp, "nokey.json");
    writeFileSync(f, `${JSON.stringify({ string_sequence: ["Just", "words"], question_string_sequence: ["country"], raw_answers: ["X"] })}\n${JSON.stringify({ ...lines[0], string_sequence: ["x", "y"], break_levels: [4, 1] })}\n`);
    const [a, b] = await all(f);
    expect([a.id, a.title]).toEqual(["nokey.json:1", ""]);
    expect([b.id, b.title]).toEqual(["7186:instance of", "7186"]);
  });

  it("names file and line of a malformed instance", async () => {
    const f = join(tmp, "bad.json");
    writeFileSync(f, `${JSON.stringify(lines[0])}\n${JSON.stringify({ ...lines[1], string_sequence: "not a list" })}\n{oops\n`);
    await expect(all(f)).rejects.toThrow(`${f}:2: string_sequence must be a list of strings`);
    const errors: string[] = [];
    const ok = await all(f, { onError: (e: Error) => errors.push(e.message) });
    expect(ok.length).toBe(1);
    expect(errors).toEqual([`${f}:2: string_sequence must be a list of strings`, expect.stringMatching(new RegExp(`^${f}:3: invalid JSON`))]);
  });
});

describe("the released layout: shard directories and tar archives", () => {
  const dir = join(tmp, "train");
  mkdirSync(dir);
  copyFileSync(SHARD, join(dir, "train-00001-of-00002.json"));
  writeFileSync(join(dir, "train-00000-of-00002.json"), `${JSON.stringify(lines[15])}\n`);
  writeFileSync(join(dir, "README.txt"), "not a shard\n");

  it("reads the shards of a directory in name order", async () => {
    const ex = await all(dir);
    expect(ex.length).toBe(17);
    expect(ex[0].id).toBe("456:country");
    expect(ex[1].file).toBe(join(dir, "train-00001-of-00002.json"));
    expect((await all(dir, { limit: 3 })).map((e) => e.id)).toEqual(["456:country", "7186:instance of", "7186:sex or gender"]);
  });

  for (const format of ["gnu", "pax", "ustar"]) {
    it(`streams the shards inside a ${format} .tar.gz and .tar, whatever the read size`, async () => {
      const long = `${"nested-directory-".repeat(3)}x/${"very-long-shard-name-".repeat(5)}train-00001-of-00002.json`;
      const src = join(tmp, `src-${format}`);
      mkdirSync(join(src, long, ".."), { recursive: true });
      copyFileSync(SHARD, join(src, format === "ustar" ? "train-00001-of-00002.json" : long));
      writeFileSync(join(src, "train-00000-of-00002.json"), `${JSON.stringify(lines[15])}\n`);
      writeFileSync(join(src, "notes.txt"), "skipped\n");
      const tgz = join(tmp, `train-${format}.tar.gz`);
      const tar = join(tmp, `train-${format}.tar`);
      for (const [out, z] of [[tgz, "-czf"], [tar, "-cf"]]) {
        const r = spawnSync("tar", [`--format=${format}`, z, out, "-C", src, "."], { encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
      }
      const ex = await all(tgz);
      expect(ex.length).toBe(17);
      expect(new Set(ex.map((e) => e.id)).size).toBe(16);
      const member = format === "ustar" ? "./train-00001-of-00002.json" : `./${long}`;
      expect(ex.filter((e) => e.file === `${tgz}:${member}`).map((e) => e.line)).toEqual([...Array(16).keys()].map((i) => i + 1));
      const expected = JSON.stringify(ex.map((e) => [e.id, e.line, e.paragraphs]));
      const viaTar = (await all(tar)).map((e) => [e.id, e.line, e.paragraphs]);
      expect(JSON.stringify(viaTar)).toBe(expected);
      const whole = (await all(tgz)).map((e) => e.paragraphs.join("\n"));
      for (const size of [7, 511, 512, 513, 4096]) {
        const got: string[] = [];
        for await (const batch of tarLines(tar, (n) => n.endsWith(".json"), size)) for (const l of batch) got.push(l.text);
        expect(got.length).toBe(17);
        expect(got.map((t) => JSON.stringify(JSON.parse(t).string_sequence))).toEqual(
          (await all(tgz)).map((e) => JSON.stringify(e.tokens)),
        );
      }
      expect(whole.length).toBe(17);
    });
  }
});
