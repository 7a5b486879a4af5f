// The web explorer in a real browser: Debian's Chromium driven by playwright-core (no browser
// download), against `tartan serve` on 127.0.0.1 over the SQuAD store and a BM25 index. Searches a
// SQuAD question, opens a hit and checks the highlighted span against /api/provenance, checks the
// page on a narrow screen and by keyboard, opens the quick start's run and filters its wrong answers,
// opens the leaderboard and the comparison of two runs; no console errors anywhere. Screenshots go to
// test/browser/out/ (git-ignored). The run browser, leaderboard and comparison run on two recorded
// runs of the quick start's held-out questions (test/server/runs-fixture.ts). Without /usr/bin/chromium the test is skipped, except under CI
// (`.ci/run` installs it), where that is a failure.

import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { runsFixture, type RunsFixture } from "../server/runs-fixture.js";
import { noteSkip } from "../support/skips.js";

const CHROMIUM = "/usr/bin/chromium";
const OUT = new URL("./out/", import.meta.url).pathname;
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: npm test's pretest step (scripts/test-deps.mjs) installs Debian's chromium`);
if (!haveChromium) noteSkip(import.meta.url, `${CHROMIUM} is missing (apt-get install chromium)`);

let f: RunsFixture;
let server: RunningServer;
let browser: BrowserContext;
const problems: string[] = [];

async function newPage(width = 1100): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize({ width, height: 800 });
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}`));
  return page;
}

describe.skipIf(!haveChromium)("the web explorer in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(OUT, { recursive: true });
    f = await runsFixture();
    server = await startServer({ ks: f.ks, indexes: [f.index], runs: f.runs, port: 0 });
    // A fresh profile each run (playwright passes it as --user-data-dir).
    browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "tartan-chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("searches a SQuAD question and opens a hit with its span highlighted", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/`);
    await page.getByLabel("Query").fill("Which NFL team represented the AFC at Super Bowl 50?");
    await page.getByLabel("Query").press("Enter");
    const hits = page.locator("ol.hits > li");
    await expect.poll(() => hits.count()).toBe(10);
    expect(await hits.first().locator(".hit-title").textContent()).toBe("Super Bowl 50");
    expect(await hits.first().locator(".hit-head").textContent()).toContain("Abstract ¶23");
    expect(await hits.first().locator("mark").first().textContent()).toBe("team");
    await page.screenshot({ path: join(OUT, "search.png") });

    // The third hit is the paragraph holding the answer: open it.
    await hits.nth(2).locator(".hit-title").click();
    await page.waitForSelector("article.page mark.span");
    expect(page.url()).toBe(`${server.url}/#/page/squad%3ASuper_Bowl_50?p=1&ep=1&s=0&e=${await spanEnd()}`);
    const highlighted = (await page.locator("article.page mark.span").allTextContents()).join("");
    const api = await (await fetch(`${server.url}/api/provenance?wikipedia_id=squad:Super_Bowl_50&start_paragraph_id=1&start_character=0&end_character=${await spanEnd()}`)).json();
    expect(highlighted).toBe(api.text);
    expect(highlighted.startsWith("Super Bowl 50 was an American football game")).toBe(true);
    expect(await page.locator(".span-text").textContent()).toBe(api.text);
    expect(await page.locator("#p1").getAttribute("class")).toBe("in-span");
    await page.screenshot({ path: join(OUT, "page.png") });
    await page.close();
  });

  it("highlights a character range inside a paragraph (the gold answer's evidence)", async () => {
    const page = await newPage(400);
    await page.goto(`${server.url}/#/page/squad%3ASuper_Bowl_50?p=1&ep=1&s=177&e=191`);
    await page.waitForSelector("article.page mark.span");
    expect((await page.locator("article.page mark.span").allTextContents()).join("")).toBe("Denver Broncos");
    // Narrow screen: nothing wider than the viewport.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(400);
    await page.screenshot({ path: join(OUT, "page-narrow.png") });
    await page.close();
  });

  it("is usable by keyboard", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/search`);
    await page.waitForSelector("#q");
    await page.keyboard.type("Normandy");
    await page.keyboard.press("Enter");
    await page.waitForSelector("ol.hits > li");
    // Tab from the query box through the form to the first hit's link and open it with Enter.
    await page.focus("#q");
    for (let i = 0; i < 4; i++) await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.className)).toBe("hit-title");
    await page.keyboard.press("Enter");
    await page.waitForSelector("article.page");
    expect(await page.locator("h1").first().textContent()).toBe("Normans");
    await page.close();
  });

  it("says evidence is missing only where no cut-off retrieved any (issue 27)", async () => {
    const res = await fetch(`${server.url}/api/runs/bm25%2Breader/records?filter=no-evidence&limit=200`);
    const { records } = (await res.json()) as { records: { scores: Record<string, number> }[] };
    const expected = records.map((r) => (Object.entries(r.scores).some(([m, v]) => /^(recall|success_rate)@\d+$/.test(m) && v > 0) ? "evidence below the top R" : "evidence missing"));
    // Both records without gold evidence in the top R have it in the top 5 (recall@5 is 1 on every record).
    expect(expected).toEqual(["evidence below the top R", "evidence below the top R"]);
    const page = await newPage();
    await page.goto(`${server.url}/#/runs/bm25%2Breader?filter=no-evidence&offset=0`);
    await page.waitForSelector("article.record");
    const tags = await page.locator("article.record h3 .tag.wrong").allTextContents();
    expect(tags.filter((t) => t.startsWith("evidence"))).toEqual(expected);
    await page.close();
  });

  it("browses the quick start's run and filters its wrong answers", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/`);
    await page.getByRole("link", { name: "Runs" }).click();
    await page.waitForSelector("table");
    expect(await page.locator("tbody tr").count()).toBe(2);
    await page.getByRole("link", { name: "bm25+reader", exact: true }).click();
    await page.waitForSelector("article.record");
    expect(await page.locator("h1").textContent()).toBe("bm25+reader");
    expect(await page.locator("nav.filters a").allTextContents()).toEqual(["all (100)", "right (21)", "wrong (79)", "no-evidence (2)"]);
    await page.locator("nav.filters a[data-filter=wrong]").click();
    await expect.poll(() => page.url()).toBe(`${server.url}/#/runs/bm25%2Breader?filter=wrong&offset=0`);
    await page.waitForSelector("nav.filters a[data-filter=wrong][aria-current=true]");
    expect(await page.getByText("Records 1–20 of 79").count()).toBe(1);
    const tags = await page.locator("article.record h3 .tag").allTextContents();
    expect(tags.filter((t) => t === "wrong")).toHaveLength(20);
    expect(tags).not.toContain("right");
    const first = page.locator("article.record").first();
    expect(await first.locator("h3").textContent()).toContain("What company owns the American Broadcasting Company?");
    expect(await first.locator(".gold-answers").textContent()).toBe("The Walt Disney Company | Disney–ABC Television Group");
    expect(await first.locator(".prediction").textContent()).toBe("Walt Disney");
    // Retrieved passages beside the gold evidence, the gold one marked (the badge apart from the paragraph mark).
    expect(await first.locator("[aria-label='retrieved passages'] li.gold").count()).toBe(1);
    const goldItem = await first.locator("[aria-label='retrieved passages'] li.gold").textContent();
    expect(goldItem).toMatch(/¶\d+\S* gold evidence/);
    await page.screenshot({ path: join(OUT, "run-wrong.png") });
    // A gold evidence link opens the page with the answer's span highlighted.
    await first.locator("[aria-label='gold evidence'] a").first().click();
    await page.waitForSelector("article.page mark.span");
    expect((await page.locator("article.page mark.span").allTextContents()).join("")).toBe("The Walt Disney Company");
    await page.close();
  });

  it("shows the leaderboard and compares two runs", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/leaderboard`);
    await page.waitForSelector("table");
    expect(await page.locator("h2").allTextContents()).toEqual(["squad"]);
    // Rows are systems (each run recorded without --system is its own), with the run they come from.
    expect(await page.locator("thead th").allTextContents()).toEqual(["#", "system", "run", "queries", "em", "KILT-em", "Rprec", "recall@5"]);
    expect(await page.locator("tbody tr td:nth-child(2)").allTextContents()).toEqual(["bm25+reader-top1", "bm25+reader"]);
    expect(await page.locator("tbody tr td:nth-child(3)").allTextContents()).toEqual(["bm25+reader-top1", "bm25+reader"]);
    // tartan leaderboard's figures: the mean and its 95% bootstrap interval.
    expect(await page.locator("tbody tr").first().locator("td").nth(4).textContent()).toBe("22.00 [14.00, 31.00]");
    await page.screenshot({ path: join(OUT, "leaderboard.png") });
    await page.getByRole("link", { name: "Compare the top two" }).click();
    await page.waitForSelector("svg.chart");
    expect(await page.locator("h2").first().textContent()).toBe("bm25+reader-top1 against bm25+reader");
    const em = await page.locator("table.compare tbody tr").first().locator("td").allTextContents();
    expect(em).toEqual(["21.00 [13.00, 30.00]", "22.00 [14.00, 31.00]", "+1.00", "1.00", "2 / 97 / 1"]);
    expect(await page.locator("svg.chart").getAttribute("aria-label")).toBe("Per-query differences bm25+reader-top1 minus bm25+reader: 2 better, 1 worse, 97 equal");
    expect(await page.locator("table.disagreements tbody tr").count()).toBe(3);
    await page.screenshot({ path: join(OUT, "compare.png"), fullPage: true });
    // Another metric through the form, by keyboard.
    await page.selectOption("#metric", "f1");
    await page.focus("#metric");
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Compare");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.url()).toContain("metric=f1");
    await page.waitForSelector("text=Per-query differences in f1");
    await page.close();
  });

  it("shows API errors in the page, not in the console", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/page/no-such-page`);
    await page.waitForSelector("[role=alert]");
    expect(await page.locator("[role=alert]").textContent()).toBe('no page with wikipedia_id "no-such-page"');
    await page.close();
    // The failed fetch itself is logged by Chromium as a 404 resource error: the only expected entry.
    const expected = problems.filter((p) => /404 \(Not Found\)/.test(p));
    expect(expected.length).toBeLessThanOrEqual(1);
    problems.splice(0, problems.length, ...problems.filter((p) => !/404 \(Not Found\)/.test(p)));
  });

  it("logged no console errors or warnings on any page", () => {
    expect(problems).toEqual([]);
  });
});

async function spanEnd(): Promise<number> {
  const r = await (await fetch(`${server.url}/api/search?q=${encodeURIComponent("Which NFL team represented the AFC at Super Bowl 50?")}&k=3`)).json();
  return r.hits[2].provenance.end_character;
}
