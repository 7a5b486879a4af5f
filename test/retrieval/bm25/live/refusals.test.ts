// Updates a live BM25 index refuses, naming the file, line and field, and leaving the index as it was:
// adding a page it holds, replacing or deleting one it does not, one page changed twice in an update, a
// malformed page line, a missing wikipedia_id, no change at all, another passage size, a kind that is
// not BM25. A plain built index takes updates as it is (it is a live index of one segment).

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildIndex } from "../../../../src/retrieval/build.js";
import { updateLiveIndex, type LiveUpdateFiles } from "../../../../src/retrieval/bm25/live/writer.js";
import { verifyIndexDir } from "../../../../src/retrieval/verify.js";
import { idsFile, pagesFile, freshBuild, squad, tmp } from "./fixtures.js";

const { pages } = squad(0);
const quiet = { log: () => {} };
const root = tmp();
let dir = "";
let manifest = "";

beforeAll(async () => {
  dir = await freshBuild(root, pages.slice(0, 6));
  await updateLiveIndex(dir, { add: pagesFile(root, "add0.jsonl", pages.slice(6, 8)) }, quiet);
  manifest = readFileSync(join(dir, "manifest.json"), "utf8");
});

async function refused(files: LiveUpdateFiles, o: { words?: number } = {}): Promise<string> {
  const e = await updateLiveIndex(dir, files, { ...quiet, ...o }).then(
    () => null,
    (x: Error) => x,
  );
  expect(e).not.toBeNull();
  expect(readFileSync(join(dir, "manifest.json"), "utf8")).toBe(manifest);
  return e!.message;
}

describe("live BM25 index: refusals", () => {
  it("adding a page the index holds names the file and line", async () => {
    const f = pagesFile(root, "a.jsonl", [pages[10], pages[3]]);
    expect(await refused({ add: f })).toBe(`${f}:2: page ${pages[3].wikipedia_id} is already in the index (use --replace to replace it)`);
  });

  it("replacing and deleting pages it does not hold name the file and line, every one", async () => {
    const r = pagesFile(root, "r.jsonl", [pages[20]]);
    const d = join(root, "d.txt");
    writeFileSync(d, `${pages[1].wikipedia_id}\n\n  nope  \nsquad:Missing\n`);
    expect(await refused({ replace: r, delete: d })).toBe(
      [`${r}:1: page ${pages[20].wikipedia_id} is not in the index (use --add to add it)`, `${d}:3: page nope is not in the index`, `${d}:4: page squad:Missing is not in the index`].join("\n"),
    );
  });

  it("one page changed twice in an update names both places", async () => {
    const a = pagesFile(root, "a2.jsonl", [pages[30], pages[30]]);
    const d = idsFile(root, "d2.txt", [pages[2].wikipedia_id]);
    const r = pagesFile(root, "r2.jsonl", [pages[2]]);
    expect(await refused({ add: a, replace: r, delete: d })).toBe([`${a}:2: page ${pages[30].wikipedia_id} is also given at ${a}:1 (one change per page in an update)`, `${d}:1: page ${pages[2].wikipedia_id} is also given at ${r}:1 (one change per page in an update)`].join("\n"));
  });

  it("a malformed page line and a missing or wrong field name the file, line and field", async () => {
    const bad = join(root, "bad.jsonl");
    writeFileSync(bad, `${JSON.stringify(pages[40])}\n{"wikipedia_id": \n`);
    expect(await refused({ add: bad })).toMatch(new RegExp(`^${bad}:2: `));
    writeFileSync(bad, `${JSON.stringify({ wikipedia_title: "x", text: ["x"] })}\n`);
    expect(await refused({ add: bad })).toBe(`${bad}:1: wikipedia_id: expected a non-empty string or number`);
    writeFileSync(bad, `${JSON.stringify({ wikipedia_id: "p", wikipedia_title: "x", text: "not a list" })}\n`);
    expect(await refused({ add: bad })).toMatch(new RegExp(`^${bad}:1: .*text`));
    expect(await refused({ add: join(root, "absent.jsonl") })).toBe(`${join(root, "absent.jsonl")}: no such file or directory`);
  });

  it("no change, another passage size and a kind that is not BM25 are refused", async () => {
    expect(await refused({})).toBe("give pages to --add or --replace, or ids to --delete");
    expect(await refused({ add: pagesFile(root, "w.jsonl", [pages[41]]) }, { words: 50 })).toBe(`${dir}: its passages are 100 words; --words 50 would cut added pages otherwise`);
    const tfidf = join(root, "tfidf");
    await buildIndex({ pages: pagesFile(root, "t.jsonl", pages.slice(0, 3)), kind: "tfidf", out: tfidf }, () => {});
    const e = await updateLiveIndex(tfidf, { delete: idsFile(root, "t.txt", [pages[0].wikipedia_id]) }, quiet).catch((x: Error) => x);
    expect((e as Error).message).toBe(`${tfidf}: a tfidf index; live updates are for BM25 indexes (rebuild the others)`);
    expect((await verifyIndexDir(dir)).problems).toEqual([]);
  });
});
