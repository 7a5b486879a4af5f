// Damaged stores and invalid UTF-8: a page whose stored data does not decompress is an error naming
// the store file and the page (by id, title or row); `ks ingest` treats invalid UTF-8 as a malformed
// line named by line and byte offset (it used to store the page under an id with U+FFFD and then drop
// the valid page of that id as a duplicate); the JSONL line readers do too.

import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ingest } from "../../src/knowledge/ingest.js";
import { KnowledgeSource } from "../../src/knowledge/store.js";
import { storeFile } from "../../src/knowledge/format.js";
import { scanLines } from "../../src/records/jsonl.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "tartan-damaged-"));
const page = (id: string, title: string) => Buffer.from(`{"wikipedia_id": "${id}", "wikipedia_title": "${title}", "text": ["${title}\\n", "Text of ${title}.\\n"]}\n`, "latin1");

describe("a damaged page in the store", () => {
  it("is an error naming the store and the page", async () => {
    const file = join(dir, "pages.jsonl");
    writeFileSync(file, Buffer.concat([page("1", "One"), page("2", "Two"), page("3", "Three")]));
    const out = join(dir, "ks");
    await ingest(file, { out, workers: 0 });
    const db = new Database(storeFile(out));
    db.prepare("UPDATE pages SET data = ? WHERE wikipedia_id = '2'").run(Buffer.from("not brotli at all"));
    db.close();
    const ks = KnowledgeSource.open(out);
    expect(ks.getPageById("1")!.wikipedia_title).toBe("One");
    expect(() => ks.getPageById("2")).toThrow(new RegExp(`^${storeFile(out)}: the page with wikipedia_id "2" is damaged \\(.+\\); ingest the store again \\(tartan ks ingest --force\\)$`));
    expect(() => ks.getPageByTitle("Two")).toThrow(`${storeFile(out)}: the page titled "Two" is damaged`);
    expect(() => [...ks.pages()]).toThrow(`${storeFile(out)}: the page at row 2 is damaged`);
    ks.close();
  });
});

describe("invalid UTF-8", () => {
  // "a\xff" decodes to "a\ufffd" with replacement: the id of the valid page on line 2.
  const file = join(dir, "utf8.jsonl");
  writeFileSync(file, Buffer.concat([page("a\xff", "Bad"), Buffer.from(`{"wikipedia_id": "a\ufffd", "wikipedia_title": "Good", "text": ["Good\\n", "x\\n"]}\n`, "utf8")]));

  it("ks ingest: a malformed line by line and byte offset; the valid page is stored", () => {
    const out = join(dir, "ks-utf8");
    const r = spawnSync(process.execPath, [CLI, "ks", "ingest", file, "--out", out], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`${file}:1: invalid UTF-8 at byte 19 of the file (byte 19 of the line)`);
    const ks = KnowledgeSource.open(out);
    expect([ks.count(), ks.getPageById("a\ufffd")?.wikipedia_title]).toEqual([1, "Good"]);
    ks.close();
  });

  it("scanLines: the same error", async () => {
    await expect(scanLines(file, () => {})).rejects.toThrow(`${file}:1: invalid UTF-8 at byte 19 of the file (byte 19 of the line)`);
  });
});
