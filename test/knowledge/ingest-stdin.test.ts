import { afterAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSquadFile, squadToPages } from "../../src/knowledge/squad.js";
import { KnowledgeSource, readStoreInfo } from "../../src/knowledge/store.js";
import { writeJsonl } from "../../src/records/jsonl.js";

const SQUAD_V11 = new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url).pathname;
const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "tartan-ingest-stdin-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("ks ingest - (standard input)", () => {
  it("stores the piped pages, records the bytes read, and refuses to resume or add to the store", async () => {
    const pages = join(dir, "pages.jsonl");
    await writeJsonl(pages, squadToPages(readSquadFile(SQUAD_V11)));
    const input = readFileSync(pages);
    const out = join(dir, "ks");
    const r = spawnSync(process.execPath, [CLI, "ks", "ingest", "-", "--out", out], { input });
    expect(r.status).toBe(0);
    expect(r.stdout.toString()).toMatch(/^48 pages from - in /);
    const info = readStoreInfo(out);
    expect([info.input_path, info.input_size, info.pages, info.complete]).toEqual(["-", input.length, 48, 1]);
    const ks = KnowledgeSource.open(out);
    expect(ks.getPageByTitle("Super Bowl 50")?.text.length).toBe(55);
    ks.close();
    const again = spawnSync(process.execPath, [CLI, "ks", "ingest", "-", "--out", out], { input });
    expect(again.status).not.toBe(0);
    expect(again.stderr.toString()).toContain(`${out} already holds an ingest of -; an ingest from standard input cannot resume or add to it: pass --force to start over`);
  });
});
