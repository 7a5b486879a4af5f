// The explorer's views in Chromium (playwright-core, Debian's /usr/bin/chromium) against `tartan serve`
// (in-process, 127.0.0.1) over the quick start's two runs, its BM25 index and a dense index with no
// encoder: an answer that comes late (held back by the test) is never drawn into the view opened since,
// nor a slower earlier search over a newer one; a loading state while a view computes; an API error
// keeps the form and what was in it; and the run browser: collapsible passages, F1 beside EM, the gold
// answers marked inside passages, a jump to any page and a search within the run. Skipped without
// Chromium, except under CI (test/browser/explorer.test.ts says the same). Needs `npm run build`.

import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext, type Page, type Route } from "playwright-core";
import { startServer, type RunningServer } from "../../src/server/listen.js";
import { runsFixture, type RunsFixture } from "../server/runs-fixture.js";
import { denseWithoutEncoder } from "../server/dense-fixture.js";
import { noteSkip } from "../support/skips.js";

const CHROMIUM = "/usr/bin/chromium";
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`${CHROMIUM} is missing: npm test's pretest step (scripts/test-deps.mjs) installs Debian's chromium`);
if (!haveChromium) noteSkip(import.meta.url, `${CHROMIUM} is missing (apt-get install chromium)`);

let f: RunsFixture;
let server: RunningServer;
let browser: BrowserContext;
const problems: string[] = [];
const A = "bm25%2Breader";

async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewportSize({ width: 1100, height: 800 });
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  return page;
}

/** Holds back the requests `pattern` matches until `release()`; `asked` resolves when the first arrives. */
async function hold(page: Page, pattern: string | RegExp): Promise<{ asked: Promise<void>; release: () => void; settled: Promise<string> }> {
  let release!: () => void;
  let asked!: () => void;
  let settled!: (how: string) => void;
  const gate = new Promise<void>((r) => (release = r));
  const out = { asked: new Promise<void>((r) => (asked = r)), release, settled: new Promise<string>((r) => (settled = r)) };
  await page.route(pattern, async (route: Route) => {
    asked();
    await gate;
    // The page may have cancelled the request meanwhile (the fix under test): then there is nothing to answer.
    await route.continue().then(
      () => settled("answered"),
      (e: Error) => settled(`not answered: ${e.message}`),
    );
  });
  out.release = release;
  return out;
}

/** The next failed request of `page` matching `part`, with its error text. */
function failure(page: Page, part: string): Promise<string> {
  return page.waitForEvent("requestfailed", { predicate: (r) => r.url().includes(part), timeout: 10_000 }).then((r) => r.failure()?.errorText ?? "");
}

describe.skipIf(!haveChromium)("the explorer's views in Chromium", () => {
  beforeAll(async () => {
    f = await runsFixture();
    const tmp = mkdtempSync(join(tmpdir(), "tartan-views-"));
    denseWithoutEncoder(f.index, tmp, join(tmp, "dense"));
    server = await startServer({ ks: f.ks, indexes: [f.index, join(tmp, "dense")], runs: f.runs, port: 0 });
    browser = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "tartan-chromium-")), {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("never draws a comparison that answers late into the view opened since, and shows loading meanwhile", async () => {
    const page = await newPage();
    const held = await hold(page, /\/api\/compare\?/);
    await page.goto(`${server.url}/#/compare?runs=${A},${A}-top1`);
    await held.asked;
    // Computing: the loading state, the form already drawn.
    await expect.poll(() => page.locator("#status").textContent()).toBe("Loading…");
    expect(await page.locator("#status").isVisible()).toBe(true);
    expect(await page.locator("main").getAttribute("aria-busy")).toBe("true");
    expect(await page.locator("#run-a").inputValue()).toBe("bm25+reader");
    // The user moves on to the leaderboard before the comparison answers.
    const cancelled = failure(page, "/api/compare?");
    await page.getByRole("link", { name: "Leaderboard" }).click();
    await page.waitForSelector("table");
    expect(await cancelled).toBe("net::ERR_ABORTED");
    held.release();
    await held.settled;
    // Give a late answer every chance to be drawn: two more round trips of the page's own.
    for (let i = 0; i < 2; i++) await page.evaluate(() => fetch("/api/health").then((r) => r.json()));
    expect(await page.locator("h1").allTextContents()).toEqual(["Leaderboard"]);
    expect(await page.locator("svg.chart").count()).toBe(0);
    expect(await page.locator("h2").allTextContents()).toEqual(["squad"]);
    // Drawn: no loading state.
    expect(await page.locator("#status").isVisible()).toBe(false);
    expect(await page.locator("main").getAttribute("aria-busy")).toBeNull();
    await page.close();
  });

  it("never draws a slower earlier search over a newer one", async () => {
    const page = await newPage();
    const held = await hold(page, /\/api\/search\?q=Normans/);
    await page.goto(`${server.url}/#/search?q=Normans`);
    await held.asked;
    const cancelled = failure(page, "/api/search?q=Normans");
    await page.locator("#q").fill("Super Bowl 50");
    await page.locator("#q").press("Enter");
    await expect.poll(() => page.locator("ol.hits > li").count()).toBe(10);
    expect(await cancelled).toBe("net::ERR_ABORTED");
    held.release();
    await held.settled;
    for (let i = 0; i < 2; i++) await page.evaluate(() => fetch("/api/health").then((r) => r.json()));
    // Still the newer search's hits, under the newer query.
    expect(await page.locator("#q").inputValue()).toBe("Super Bowl 50");
    const titles = await page.locator("ol.hits .hit-title").allTextContents();
    const api = (await (await fetch(`${server.url}/api/search?q=${encodeURIComponent("Super Bowl 50")}&k=10`)).json()) as { hits: { provenance: { title: string } }[] };
    expect(titles).toEqual(api.hits.map((h) => h.provenance.title));
    expect(titles).not.toContain("Normans");
    await page.close();
  });

  it("keeps the search form and what was in it when the API refuses the search", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/search`);
    await page.waitForSelector("#q");
    // The index without encoder says so in the menu.
    expect(await page.locator("#index option").allTextContents()).toEqual(["index-bm25 (bm25, 2,067 paragraphs)", "dense (dense, 2,067 paragraphs; query vectors only, no text search)"]);
    await page.selectOption("#index", "dense");
    await page.selectOption("#k", "20");
    await page.locator("#q").fill("Who won Super Bowl 50?");
    await page.locator("#q").press("Enter");
    await page.waitForSelector("[role=alert]");
    const body = (await (await fetch(`${server.url}/api/search?q=x&index=dense`)).json()) as { status: number; error: string };
    expect(body.status).toBe(422);
    expect(await page.locator("[role=alert]").textContent()).toBe(body.error);
    // The form, as the user left it.
    expect(await page.locator("h1").textContent()).toBe("Search");
    expect(await page.locator("#q").inputValue()).toBe("Who won Super Bowl 50?");
    expect(await page.locator("#index").inputValue()).toBe("dense");
    expect(await page.locator("#k").inputValue()).toBe("20");
    // And it works again from there.
    await page.selectOption("#index", "index-bm25");
    await page.getByRole("button", { name: "Search" }).click();
    await expect.poll(() => page.locator("ol.hits > li").count()).toBe(20);
    expect(await page.locator("[role=alert]").count()).toBe(0);
    await page.close();
    // The refused search is logged by Chromium as a resource error: the only expected entry.
    problems.splice(0, problems.length, ...problems.filter((p) => !/422 \(Unprocessable (Content|Entity)\)/.test(p)));
  });

  it("keeps the comparison form when the comparison fails", async () => {
    const page = await newPage();
    await page.route(/\/api\/compare\?/, (route) => route.fulfill({ status: 503, contentType: "application/json", body: JSON.stringify({ status: 503, error: "too many computation requests at once; try again shortly" }) }));
    await page.goto(`${server.url}/#/compare?runs=${A}-top1,${A}`);
    await page.waitForSelector("[role=alert]");
    expect(await page.locator("[role=alert]").textContent()).toBe("too many computation requests at once; try again shortly");
    expect(await page.locator("h1").textContent()).toBe("Compare two runs");
    expect(await page.locator("#run-a").inputValue()).toBe("bm25+reader-top1");
    expect(await page.locator("#run-b").inputValue()).toBe("bm25+reader");
    await page.close();
    problems.splice(0, problems.length, ...problems.filter((p) => !/503 \(Service Unavailable\)/.test(p)));
  });

  it("collapses passages, shows F1 beside EM and marks the gold answers inside passages", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/runs/${A}?filter=wrong&offset=0`);
    await page.waitForSelector("article.record");
    const api = (await (await fetch(`${server.url}/api/runs/${A}/records?filter=wrong&limit=20`)).json()) as { records: { scores: Record<string, number>; prediction: { provenance: { text?: string }[] } }[] };
    // Retrieved passages collapsed, gold evidence open.
    const retrieved = page.locator("[aria-label='retrieved passages'] details");
    const withText = api.records.reduce((n, r) => n + r.prediction.provenance.filter((p) => typeof p.text === "string").length, 0);
    expect(await retrieved.count()).toBe(withText);
    expect(await page.locator("[aria-label='retrieved passages'] details[open]").count()).toBe(0);
    expect(await page.locator("[aria-label='gold evidence'] details:not([open])").count()).toBe(0);
    const collapsed = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.getByRole("button", { name: "Expand all passages" }).click();
    const expanded = await page.evaluate(() => document.documentElement.scrollHeight);
    expect(collapsed * 3).toBeLessThan(expanded);
    await page.getByRole("button", { name: "Collapse all passages" }).click();
    expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThanOrEqual(collapsed);
    await page.reload();
    await page.waitForSelector("article.record");

    // F1 beside EM, each as the API scores the record.
    const first = page.locator("article.record").first();
    const s = api.records[0].scores;
    const one = (v: number) => (v * 100).toFixed(1);
    expect(await first.locator(".scores").textContent()).toBe(`em ${one(s.em)} · f1 ${one(s.f1)} · KILT-em ${one(s["KILT-em"])} · Rprec ${one(s.Rprec)} · recall@5 ${one(s["recall@5"])}`);
    expect(s.f1).toBeGreaterThan(0);

    // The gold answers marked inside the retrieved passage that holds them (ABC's paragraph 1).
    const gold = first.locator("[aria-label='retrieved passages'] li.gold");
    expect(await gold.locator(".tag").allTextContents()).toEqual(["gold evidence", "holds the answer"]);
    expect(await gold.locator("mark.answer").first().isVisible()).toBe(false);
    await gold.locator("summary").click({ position: { x: 400, y: 5 } });
    expect(await gold.locator("details").getAttribute("open")).toBe("");
    expect(await gold.locator("mark.answer").allTextContents()).toEqual(["Disney–ABC Television Group", "The Walt Disney Company"]);
    expect(await gold.locator("mark.answer").first().isVisible()).toBe(true);
    // Passages that do not hold an answer carry no tag and no mark.
    const plain = first.locator("[aria-label='retrieved passages'] li:not(.gold)").first();
    expect(await plain.locator(".tag").count()).toBe(0);
    expect(await plain.locator("mark").count()).toBe(0);
    await page.close();
  });

  it("jumps to a page and searches within the run", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/runs/${A}?filter=wrong`);
    await page.waitForSelector("article.record");
    expect(await page.getByLabel("Page (of 4)").inputValue()).toBe("1");
    await page.getByLabel("Page (of 4)").fill("3");
    await page.getByLabel("Page (of 4)").press("Enter");
    await expect.poll(() => page.url()).toBe(`${server.url}/#/runs/${A}?filter=wrong&offset=40`);
    await page.waitForSelector("text=Records 41–60 of 79");
    expect(await page.locator(".pager").textContent()).toBe("← previouspage 3 of 4next →");
    const third = (await (await fetch(`${server.url}/api/runs/${A}/records?filter=wrong&offset=40&limit=20`)).json()) as { records: { id: string }[] };
    expect(await page.locator("article.record dd").nth(0).textContent()).toBe(third.records[0].id);

    // A search within the run keeps the filter and starts at its first page.
    await page.locator("#run-q").fill("Disney");
    await page.locator("#run-q").press("Enter");
    await expect.poll(() => page.url()).toBe(`${server.url}/#/runs/${A}?filter=wrong&q=Disney&offset=0`);
    await page.waitForSelector("text=Records 1–2 of 2 holding “Disney”");
    expect(await page.locator("nav.filters a").allTextContents()).toEqual(["all (4)", "right (2)", "wrong (2)", "no-evidence (0)"]);
    const found = (await (await fetch(`${server.url}/api/runs/${A}/records?filter=wrong&q=Disney`)).json()) as { records: { input: string }[] };
    const heads = await page.locator("article.record h3").allTextContents();
    expect(heads).toHaveLength(2);
    heads.forEach((t, i) => expect(t).toContain(found.records[i].input));
    // The filters keep the search; "all" shows its four records.
    await page.locator("nav.filters a[data-filter=all]").click();
    await page.waitForSelector("text=Records 1–4 of 4 holding “Disney”");
    expect(await page.locator("#run-q").inputValue()).toBe("Disney");
    // One page only: no page jump.
    expect(await page.locator("form.jump").count()).toBe(0);
    await page.locator("#run-q").fill("no such words anywhere");
    await page.locator("#run-q").press("Enter");
    await page.waitForSelector("text=No records hold “no such words anywhere”.");
    await page.close();
  });

  it("logged no console errors or warnings", () => {
    expect(problems).toEqual([]);
  });
});
