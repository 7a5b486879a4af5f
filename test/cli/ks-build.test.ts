import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { ksCommand, registerConvert, registerKsBuild } from "../../src/cli/commands/ks-build.js";
import { convertSquad, fromDump, fromSquad } from "../../src/knowledge/build.js";
import { passagesFromPages } from "../../src/retrieval/passages.js";
import { registerDatasets } from "../../src/cli/commands/datasets.js";
import { readJsonlAll } from "../../src/records/jsonl.js";
import type { KiltPage, KiltRecord } from "../../src/records/types.js";
import type { Passage } from "../../src/knowledge/passages.js";

const V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const V20 = new URL("../../../shared/data/squad/dev-v2.0.reconstructed.json", import.meta.url).pathname;
const DUMP = new URL("../fixtures/dump/small.xml", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-ks-build-"));

describe("ks from-squad → ks passages → datasets convert squad", () => {
  it("writes the SQuAD pages, their passages and the records pointing into them", async () => {
    const logs: string[] = [];
    const log = (s: string) => logs.push(s);
    const pagesFile = join(tmp, "pages.jsonl");
    expect(await fromSquad(V11, pagesFile, log)).toBe(48);
    const pages = await readJsonlAll<KiltPage>(pagesFile);
    expect(pages.map((p) => p.wikipedia_id).slice(0, 2)).toEqual(["squad:Super_Bowl_50", "squad:Warsaw"]);

    const passagesFile = join(tmp, "passages.jsonl.gz");
    expect(await passagesFromPages(pagesFile, { out: passagesFile, words: 100, unit: "chunk" }, log)).toEqual({ pages: 48, passages: 3580 });
    const passages = await readJsonlAll<Passage>(passagesFile);
    expect(passages[0]).toMatchObject({ id: "squad:Super_Bowl_50#0", start_paragraph_id: 1, start_character: 0, end_character: 427 });

    const recordsFile = join(tmp, "records.jsonl");
    expect(await convertSquad(V20, { out: recordsFile, pages: pagesFile }, log)).toBe(5928);
    const records = await readJsonlAll<KiltRecord>(recordsFile);
    const warsaw = records.find((r) => r.id === "5732b6b5328d981900602021")!;
    expect(warsaw.output[0].provenance![0]).toMatchObject({ wikipedia_id: "squad:Warsaw", start_paragraph_id: 49 });

    expect(logs).toEqual([
      `48 pages (2,067 paragraphs) from ${V11} → ${pagesFile}`,
      expect.stringMatching(new RegExp(`^3,580 passages \\(chunk, 100 words\\) from 48 pages → ${passagesFile.replace(/\./g, "\\.")} in \\d+\\.\\d s$`)),
      `5,928 records (10,279 answers) from 11,873 questions of 35 articles → ${recordsFile}; 5,945 unanswerable left out`,
      "offset exceptions: 0 (0 relocated, 0 dropped)",
    ]);
  });

  it("names the file and line of a page it cannot cut", async () => {
    const bad = join(tmp, "bad-pages.jsonl");
    writeFileSync(bad, `${JSON.stringify({ wikipedia_id: "1", wikipedia_title: "A", text: ["A\n", "Fine.\n"] })}\n${JSON.stringify({ wikipedia_id: "2", wikipedia_title: "B", text: "not a list" })}\n`);
    const out = join(tmp, "never.jsonl");
    await expect(passagesFromPages(bad, { out, words: 100, unit: "chunk" }, () => {})).rejects.toThrow(`${bad}:2: page 2: text: expected an array of strings`);
    expect(() => readFileSync(out)).toThrow(); // nothing left behind
  });
});

describe("ks from-dump", () => {
  it("writes pages and redirects", async () => {
    const logs: string[] = [];
    const out = join(tmp, "dump-pages.jsonl");
    const redirects = join(tmp, "redirects.jsonl");
    const stats = await fromDump(DUMP, { out, redirects }, (s) => logs.push(s));
    expect(stats).toMatchObject({ articles: 4, redirects: 2, otherNamespaces: 2 });
    expect((await readJsonlAll<KiltPage>(out)).map((p) => p.wikipedia_title)).toEqual(["Anarchism", "Ada Lovelace", "Clef", "Mercury"]);
    expect((await readJsonlAll(redirects)).map((r) => r.title)).toEqual(["AccessibleComputing", "Ada Byron"]);
    expect(logs).toEqual([
      `4 pages (1 disambiguation) → ${out}; 2 redirects → ${redirects}; 2 pages of other namespaces skipped; 42 anchors`,
    ]);
  });
});

describe("command registration", () => {
  it("adds ks subcommands and attaches convert under an existing datasets command", () => {
    const program = new Command();
    registerDatasets(program);
    const existingKs = program.command("ks");
    expect(ksCommand(program)).toBe(existingKs);
    registerKsBuild(ksCommand(program));
    registerConvert(program);
    expect(existingKs.commands.map((c) => c.name())).toEqual(["from-squad", "from-dump", "passages"]);
    expect(program.commands.filter((c) => c.name() === "datasets").length).toBe(1);
    const datasets = program.commands.find((c) => c.name() === "datasets")!;
    const convert = datasets.commands.filter((c) => c.name() === "convert");
    expect(convert.length).toBe(1);
    expect(convert[0].commands.map((c) => c.name())).toContain("squad");
  });

  it("creates ks and datasets when nothing else did", () => {
    const program = new Command();
    registerKsBuild(ksCommand(program));
    registerConvert(program);
    expect(program.commands.map((c) => c.name())).toEqual(["ks", "datasets"]);
  });

  it("runs `datasets convert squad` through commander", async () => {
    const program = new Command().exitOverride();
    registerDatasets(program);
    registerConvert(program);
    const out = join(tmp, "v11-records.jsonl");
    const write = process.stderr.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    try {
      await program.parseAsync(["node", "tartan", "datasets", "convert", "squad", V11, "--out", out]);
    } finally {
      process.stderr.write = write;
    }
    expect((await readJsonlAll(out)).length).toBe(10570);
  });
});
