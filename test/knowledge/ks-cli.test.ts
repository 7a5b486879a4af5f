// Tests for `tartan ks ingest | get | stats` through the compiled CLI (npm test builds it first),
// including the crash test: a real ingest process SIGKILLed at random moments, resumed each time,
// must end with every page of the input stored exactly once, in input order.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ingest } from "../../src/knowledge/ingest.js";
import { KnowledgeSource, readStoreInfo } from "../../src/knowledge/store.js";
import { writeSyntheticKnowledgeSource } from "../../src/knowledge/synthetic.js";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "tartan-ks-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function tartan(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", cwd: dir });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first (npm test does)`);
});

const PAGES = [
  { _id: "7", wikipedia_id: "7", wikipedia_title: "Red Dwarf", text: ["Red Dwarf\n", "A British sitcom.\n", "Section::::Plot.\n", "Lister is alone.\n"] },
  { wikipedia_id: "8", wikipedia_title: "Red dwarf", text: ["Red dwarf\n", "A small star.\n"] },
];

describe("tartan ks on a small file", () => {
  let file: string;
  beforeAll(() => {
    file = join(dir, "small.jsonl");
    writeFileSync(file, `${JSON.stringify(PAGES[0])}\nnot json\n${JSON.stringify(PAGES[1])}\n${JSON.stringify(PAGES[0])}\n`);
  });

  it("ingests, reporting skipped lines on stderr and a summary on stdout, with no progress line when piped", () => {
    const r = tartan("ks", "ingest", "small.jsonl", "--out", "small.ks");
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^small\.jsonl:2: invalid JSON \(.*\)\nsmall\.jsonl:4: duplicate wikipedia_id "7" \(first at line 1\); skipped\n$/);
    expect(r.stdout).toMatch(
      /^2 pages from small\.jsonl in small\.ks \(skipped 1 malformed line, 1 duplicate id\); [\d.]+s at [\d.]+ MB\/s; store [\d.]+ kB \([\d.]+ of the input\)\n$/,
    );
    const again = tartan("ks", "ingest", "small.jsonl", "--out", "small.ks");
    expect(again.stdout).toBe("small.ks already holds all 2 pages of small.jsonl: nothing to do (--force rebuilds it)\n");
  });

  it("gets pages by id, title and URL, whole or a paragraph range, as text or JSON", () => {
    expect(tartan("ks", "get", "--ks", "small.ks", "--id", "7", "--paragraphs", "1-2").stdout).toBe(
      "wikipedia_id: 7\ntitle: Red Dwarf\nparagraphs: 4\n[1] A British sitcom.\n[2] Section::::Plot.\n",
    );
    expect(tartan("ks", "get", "--ks", "small.ks", "--title", "red dwarf").stdout).toBe(
      "wikipedia_id: 7\ntitle: Red Dwarf\nparagraphs: 4\n[0] Red Dwarf\n[1] A British sitcom.\n[2] Section::::Plot.\n[3] Lister is alone.\n",
    );
    expect(JSON.parse(tartan("ks", "get", "--ks", "small.ks", "--url", "https://en.wikipedia.org/wiki/Red_dwarf", "--json").stdout)).toEqual(PAGES[1]);
    expect(JSON.parse(tartan("ks", "get", "--ks", "small.ks", "--id", "7", "--json", "--paragraphs", "3-").stdout)).toEqual({
      wikipedia_id: "7",
      wikipedia_title: "Red Dwarf",
      paragraphs: [{ paragraph_id: 3, text: "Lister is alone.\n" }],
    });
  });

  it("says what is missing or wrong", () => {
    expect(tartan("ks", "get", "--ks", "small.ks", "--id", "99")).toMatchObject({ code: 1, stdout: "", stderr: 'tartan: no page with id "99" in small.ks\n' });
    expect(tartan("ks", "get", "--ks", "small.ks", "--id", "7", "--paragraphs", "9")).toMatchObject({
      code: 2,
      stderr: "tartan: --paragraphs 9: page 7 has 4 paragraphs (0-3)\n",
    });
    expect(tartan("ks", "get", "--ks", "small.ks", "--id", "7", "--title", "x").stderr).toBe("tartan: ks get: give exactly one of --id, --title, --url\n");
    expect(tartan("ks", "get", "--ks", "nothing.ks", "--id", "7").stderr).toMatch(/^tartan: nothing\.ks: no knowledge-source store here/);
  });

  it("stops at the first malformed line with --strict", () => {
    const r = tartan("ks", "ingest", "small.jsonl", "--out", "strict.ks", "--strict");
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tartan: small\.jsonl:2: invalid JSON \(.*\) \(--strict: stopped; the 1 pages before it are stored\)\n$/);
    expect(tartan("ks", "stats", "--ks", "strict.ks").stdout).toMatch(/status: +incomplete: stopped after line 1 /);
  });

  it("shows a store's stats", () => {
    const r = tartan("ks", "stats", "--ks", "small.ks");
    expect(r.stdout).toMatch(/^store: +small\.ks \([\d.]+ kB, [\d.]+ of the input\)\nstatus: +complete\npages: +2\nmalformed lines: +1\nduplicate ids: +1\ninput: +.*small\.jsonl \(0 kB\)\ningest time: +\d+s over 1 run\n$/);
    expect(JSON.parse(tartan("ks", "stats", "--ks", "small.ks", "--json").stdout)).toMatchObject({ pages: 2, bad_lines: 1, duplicates: 1, complete: 1, checkpoint_line: 4 });
  });

  it("draws progress when asked to (the CLI asks only on a terminal)", async () => {
    const writes: string[] = [];
    await ingest(file, { out: join(dir, "progress.ks"), workers: 0, progress: { enabled: true, stream: { write: (s: string) => writes.push(s) } } });
    expect(writes.at(-1)).toMatch(/^\ringest {2}2 pages {2}[\d.]+ kB \/ [\d.]+ kB \(100%\) {2}[\d.]+ MB\/s {2}ETA 0s\x1b\[K\n$/);
  });
});

/** The checkpoint of a store an ingest was killed in; 0 when the kill came before the first commit. */
function committedLine(out: string): number {
  try {
    return readStoreInfo(out).checkpoint_line;
  } catch (e) {
    if (/no knowledge-source store here|stopped before committing anything/.test(String(e))) return 0;
    throw e;
  }
}

describe("tartan ks ingest killed at random moments", () => {
  const PAGE_COUNT = 50_000;
  let file: string;
  let lines: string[];

  beforeAll(async () => {
    file = join(dir, "big.jsonl");
    await writeSyntheticKnowledgeSource(file, { pages: PAGE_COUNT, seed: 11, scale: 0.5 });
    lines = readFileSync(file, "utf8").trimEnd().split("\n");
  }, 120_000);

  it("resumes after every SIGKILL and ends with each page exactly once", async () => {
    const out = join(dir, "big.ks");
    const store = join(out, "ks.sqlite");
    const seed0 = Date.now() % 100_000;
    let seed = seed0;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    // Kill points: the store file reaching a random size (it grows at each commit; the input is ~175 MB,
    // the store ~0.6 of it), then a random delay, so the kill lands anywhere in a batch. Wall-clock delays
    // alone are unreliable on a loaded machine, where the CLI can take a second to start.
    const sizes = Array.from({ length: 6 }, () => random() * 0.5 * statSync(file).size).sort((a, b) => a - b);
    const checkpoints: number[] = [];
    for (const size of sizes) {
      // Commits every 1 MB (about one per 4 MB read batch), so a kill lands between many checkpoints
      // even on an idle machine, where the whole load takes about a second.
      const child = spawn(process.execPath, [CLI, "ks", "ingest", file, "--out", out, "--commit-mb", "1"], { stdio: "ignore" });
      const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)));
      const extra = Math.floor(random() * 100);
      const poll = setInterval(() => {
        if (existsSync(store) && statSync(store).size >= size) {
          clearInterval(poll);
          setTimeout(() => child.kill("SIGKILL"), extra);
        }
      }, 20);
      const code = await exited;
      clearInterval(poll);
      if (code === 0) break; // finished before the kill
      checkpoints.push(committedLine(out));
    }
    const killedMidway = checkpoints.filter((c) => c > 0 && c < PAGE_COUNT);
    // The test proves nothing unless kills landed in the middle of the load (seed in the message to replay).
    expect(killedMidway.length, `checkpoints after kills: ${checkpoints.join(", ")} (seed ${seed0})`).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < checkpoints.length; i++) expect(checkpoints[i]).toBeGreaterThanOrEqual(checkpoints[i - 1]);

    const last = spawnSync(process.execPath, [CLI, "ks", "ingest", file, "--out", out], { encoding: "utf8" });
    expect(last.status, last.stderr).toBe(0);
    // Either the last kill left work to resume, or (on a fast machine) an ingest finished before its kill.
    expect(last.stdout).toMatch(/^(50,000 pages from .*resumed after line [\d,]+|.* already holds all 50,000 pages of )/);

    const ks = KnowledgeSource.open(out);
    expect(ks.count()).toBe(PAGE_COUNT);
    const ids: string[] = [];
    let i = 0;
    for (const page of ks.pages(1000)) {
      ids.push(page.wikipedia_id);
      if (i % 1000 === 0) expect(page).toEqual(JSON.parse(lines[i]));
      i++;
    }
    expect(ids).toEqual(lines.map((l) => (JSON.parse(l) as { wikipedia_id: string }).wikipedia_id));
    expect(new Set(ids).size).toBe(PAGE_COUNT);
    const info = readStoreInfo(out);
    expect({ pages: info.pages, bad: info.bad_lines, dups: info.duplicates, complete: info.complete }).toEqual({ pages: PAGE_COUNT, bad: 0, dups: 0, complete: 1 });
    expect(info.runs).toBeGreaterThanOrEqual(new Set(killedMidway).size + 1);
    ks.close();
  }, 300_000);
});
