// `tartan search --index A B "query"`: B is a second index (fused as retrieve fuses), not a query word.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildIndex } from "../../src/retrieval/build.js";
import { fromSquad } from "../../src/knowledge/build.js";
import { indexesAndQuery, searchLines } from "../../src/cli/commands/retrieve.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const V11 = fileURLToPath(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "tartan-search-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const A = join(tmp, "tfidf");
const B = join(tmp, "bm25");

beforeAll(async () => {
  const pages = join(tmp, "pages.jsonl");
  await fromSquad(V11, pages, () => {});
  await buildIndex({ pages, kind: "tfidf", unit: "paragraph", out: A }, () => {});
  await buildIndex({ pages, kind: "bm25", unit: "paragraph", out: B }, () => {});
}, 300_000);

describe("tartan search with several indexes", () => {
  it("takes index directories after --index as more indexes and fuses them", async () => {
    expect(indexesAndQuery([A], [B, "Who", "won", "Super", "Bowl", "50?"])).toEqual({ indexes: [A, B], query: "Who won Super Bowl 50?" });
    expect(indexesAndQuery([A], [B])).toEqual({ indexes: [A], query: B }); // the last word is always the query
    const r = spawnSync("node", [CLI, "search", "--index", A, B, "-k", "3", "Who won Super Bowl 50?"], { encoding: "utf8" });
    expect(r.status).toBe(0);
    const fused = await searchLines([A, B], "Who won Super Bowl 50?", 3, false);
    expect(r.stdout).toBe(`${fused.join("\n")}\n`);
    expect(fused[0]).toMatch(/^ {2}1\. \d\.\d{4} {2}Super Bowl 50 {2}\[/u);
    expect(fused).toHaveLength(6);
  });
});
