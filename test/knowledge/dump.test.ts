import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { cpSlice } from "../../src/knowledge/codepoints.js";
import {
  convertDump,
  hasNativeBzip2,
  readDumpPages,
  redirectOf,
  wikitextToPage,
  type DumpItem,
  type DumpStats,
  type SiteInfo,
} from "../../src/knowledge/dump.js";
import { cutPassages } from "../../src/knowledge/passages.js";
import type { KiltPage } from "../../src/records/types.js";

const SMALL = new URL("../fixtures/dump/small.xml", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "tartan-dump-"));

function emptyStats(): DumpStats {
  return { pages: 0, articles: 0, redirects: 0, disambiguations: 0, otherNamespaces: 0, anchors: 0, unplacedLinks: 0, failed: 0 };
}

async function convertAll(file: string, options: Parameters<typeof convertDump>[1] = {}) {
  const stats = emptyStats();
  const items: DumpItem[] = [];
  for await (const item of convertDump(file, options, stats)) items.push(item);
  const pages = items.flatMap((i) => (i.kind === "page" ? [i.page] : []));
  const redirects = items.flatMap((i) => (i.kind === "redirect" ? [i.redirect] : []));
  return { items, pages, redirects, stats };
}

describe("MediaWiki export → KILT pages (test/fixtures/dump/small.xml)", async () => {
  const { items, pages, redirects, stats } = await convertAll(SMALL);
  const byTitle = new Map(pages.map((p) => [p.wikipedia_title, p]));

  it("converts namespace-0 articles, reports redirects, skips other namespaces", () => {
    expect(items.map((i) => (i.kind === "page" ? `page:${i.page.wikipedia_title}` : `redirect:${i.redirect.title}`))).toEqual([
      "redirect:AccessibleComputing",
      "page:Anarchism",
      "page:Ada Lovelace",
      "page:Clef",
      "page:Mercury",
      "redirect:Ada Byron",
    ]);
    expect(stats).toEqual({ pages: 8, articles: 4, redirects: 2, disambiguations: 1, otherNamespaces: 2, anchors: 42, unplacedLinks: 0, failed: 0 });
  });

  it("lays Anarchism out as KILT does: title, paragraphs, nested section headers, bullets; drops tables, templates, refs and empty sections", () => {
    const p = byTitle.get("Anarchism")!;
    expect(p.text).toEqual([
      "Anarchism\n",
      "Anarchism is an anti-authoritarian political philosophy that advocates self-governed societies based on voluntary, cooperative institutions and the rejection of hierarchies those societies view as unjust. These institutions are often described as stateless societies, although several authors have defined them more specifically as distinct institutions based on non-hierarchical or free associations.\n",
      "Anarchism holds capitalism, the state and representative democracy to be undesirable, unnecessary and harmful.\n",
      "Section::::Etymology, terminology and definition.\n",
      'The word anarchism is composed from the word anarchy and the suffix -ism, themselves derived respectively from the Greek anarchos, meaning "without rulers", and the verb -izein. The first known use of this word was in 1539.\n',
      "Section::::History.\n",
      "Section::::History.:Prehistoric and ancient world.\n",
      "Most anthropologists follow Pierre Clastres in describing hunter-gatherer bands as egalitarian and lacking division of labour. In Ancient Greece, the philosopher Zeno of Citium rejected the omnipotence of the state.\n",
      "Section::::History.:Classical era.\n",
      "The French Revolution inspired William Godwin, who developed what many consider the first expression of modern anarchist thought. Notable early figures include:\n",
      "BULLET::::- Pierre-Joseph Proudhon, the first self-proclaimed anarchist\n",
      "BULLET::::- Mikhail Bakunin, a founder of collectivist anarchism\n",
      "BULLET::::- Peter Kropotkin\n",
      "Section::::See also.\n",
      "BULLET::::- Anarchism by country\n",
    ]);
    expect(p._id).toBe("12");
    expect(p.wikipedia_id).toBe("12");
    expect(p.categories).toBe("Anarchism,Anti-capitalism,Political culture");
    expect(p.history).toEqual({
      revid: 908793268,
      timestamp: "2019-07-30T20:27:18Z",
      parentid: 908420286,
      pageid: 12,
      url: "https://en.wikipedia.org/wiki/Anarchism",
    });
    expect(p.meta).toBeUndefined();
    expect(p.wikidata_info).toBeUndefined();
  });

  it("places anchors at their text, with the link target and its display title", () => {
    const p = byTitle.get("Anarchism")!;
    expect(p.anchors!.length).toBe(23);
    expect(p.anchors!.slice(0, 2)).toEqual([
      { text: "anti-authoritarian", href: "Anti-authoritarianism", paragraph_id: 1, start: 16, end: 34, wikipedia_title: "Anti-authoritarianism" },
      { text: "political philosophy", href: "political philosophy", paragraph_id: 1, start: 35, end: 55, wikipedia_title: "Political philosophy" },
    ]);
    expect(p.anchors!.find((a) => a.href === "State (polity)")).toEqual({ text: "state", href: "State (polity)", paragraph_id: 2, start: 32, end: 37, wikipedia_title: "State (polity)" });
    expect(p.anchors!.find((a) => a.text === "collectivist anarchism")).toMatchObject({ paragraph_id: 11, start: 42, end: 64 });
    for (const page of pages)
      for (const a of page.anchors!) expect(cpSlice(page.text[a.paragraph_id], a.start, a.end)).toBe(a.text);
  });

  it("converts Ada Lovelace: infobox, image caption and table gone, subsections and piped links kept", () => {
    const p = byTitle.get("Ada Lovelace")!;
    expect(p.text.filter((t) => t.startsWith("Section::::"))).toEqual([
      "Section::::Biography.\n",
      "Section::::Biography.:Childhood.\n",
      "Section::::Biography.:Adult years.\n",
      "Section::::Work.\n",
      "Section::::Legacy.\n",
    ]);
    expect(p.text[1].startsWith("Augusta Ada King, Countess of Lovelace (née Byron; 10 December 1815 – 27 November 1852) was an English mathematician")).toBe(true);
    expect(p.text.some((t) => t.includes("Daguerreotype") || t.includes("Bernoulli") || t.includes("birth_place"))).toBe(false);
    expect(p.text.slice(8, 11)).toEqual([
      "BULLET::::- Byron King-Noel, Viscount Ockham (1836–1862)\n",
      "BULLET::::- Anne Isabella (1837–1917)\n",
      "BULLET::::- Ralph Gordon (1839–1906)\n",
    ]);
    expect(p.anchors!.find((a) => a.href === "Anne Blunt, 15th Baroness Wentworth")).toEqual({
      text: "Anne Isabella",
      href: "Anne Blunt, 15th Baroness Wentworth",
      paragraph_id: 9,
      start: 12,
      end: 25,
      wikipedia_title: "Anne Blunt, 15th Baroness Wentworth",
    });
    expect(p.categories).toBe("1815 births,1852 deaths,English mathematicians");
    expect(p.history?.url).toBe("https://en.wikipedia.org/wiki/Ada_Lovelace");
  });

  it("counts anchor offsets in code points past an astral character", () => {
    const p = byTitle.get("Clef")!;
    const g = p.anchors!.find((a) => a.text === "G")!;
    expect(g).toEqual({ text: "G", href: "G (musical note)", paragraph_id: 1, start: 146, end: 147, wikipedia_title: "G (musical note)" });
    expect(p.text[1].slice(146, 147)).not.toBe("G"); // UTF-16 indexes are one further on
    expect(cpSlice(p.text[1], 146, 147)).toBe("G");
  });

  it("keeps a disambiguation page and marks it", () => {
    const p = byTitle.get("Mercury")!;
    expect(p.meta).toEqual({ disambiguation: true });
    expect(p.text).toEqual([
      "Mercury\n",
      "Mercury usually refers to:\n",
      "BULLET::::- Mercury (planet), the planet closest to the Sun\n",
      "BULLET::::- Mercury (element), a chemical element with symbol Hg\n",
      "BULLET::::- Mercury (mythology), a Roman god\n",
      "Mercury may also refer to:\n",
      "BULLET::::- Freddie Mercury (1946–1991), lead singer of Queen\n",
    ]);
  });

  it("reports redirects with their target and fragment", () => {
    expect(redirects).toEqual([
      { wikipedia_id: "10", title: "AccessibleComputing", target: "Computer accessibility" },
      { wikipedia_id: "1390023", title: "Ada Byron", target: "Ada Lovelace", fragment: "Childhood" },
    ]);
  });

  it("cuts dump pages into passages that follow the sections", () => {
    const p = byTitle.get("Anarchism")!;
    const ps = cutPassages(p, { words: 100 });
    expect(ps.map((x) => [x.section, x.start_paragraph_id, x.end_paragraph_id, x.words])).toEqual([
      ["Section::::Abstract.", 1, 2, 64],
      ["Section::::Etymology, terminology and definition.", 4, 4, 37],
      ["Section::::History.:Prehistoric and ancient world.", 7, 7, 30],
      ["Section::::History.:Classical era.", 9, 12, 40],
      ["Section::::See also.", 14, 14, 4],
    ]);
    const classical = ps[3];
    expect(classical.sources.map((s) => s.paragraph_id)).toEqual([9, 10, 11, 12]);
    for (const a of classical.anchors) expect(cpSlice(classical.text, a.start, a.end)).toBe(a.text);
    expect(classical.anchors.map((a) => a.href)).toEqual([
      "French Revolution",
      "William Godwin",
      "Pierre-Joseph Proudhon",
      "Mikhail Bakunin",
      "collectivist anarchism",
      "Peter Kropotkin",
    ]);
  });
});

describe("reading the export", () => {
  it("streams every page with its revision fields and the line of its <page> tag", async () => {
    const seen: { title: string; ns: number; id: string; revid?: string; parentid?: string; line: number; redirect?: string }[] = [];
    let site: SiteInfo | undefined;
    for await (const p of readDumpPages(SMALL, { onSiteInfo: (s) => (site = s) })) {
      seen.push({ title: p.title, ns: p.ns, id: p.id, revid: p.revid, parentid: p.parentid, line: p.line, redirect: p.redirect });
    }
    expect(site).toEqual({ sitename: "Wikipedia", dbname: "enwiki", base: "https://en.wikipedia.org/wiki/Main_Page" });
    expect(seen.map((s) => [s.title, s.ns, s.id, s.revid, s.line])).toEqual([
      ["AccessibleComputing", 0, "10", "854851586", 17],
      ["Anarchism", 0, "12", "908793268", 41],
      ["Talk:Anarchism", 1, "3056", "907000000", 100],
      ["Ada Lovelace", 0, "974", "908500000", 120],
      ["Clef", 0, "6376", "905000001", 183],
      ["Template:Reflist", 10, "4030045", "900000000", 202],
      ["Mercury", 0, "19694", "907500000", 219],
      ["Ada Byron", 0, "1390023", "600000000", 245],
    ]);
    expect(seen[5].parentid).toBeUndefined();
    expect(seen[0].redirect).toBe("Computer accessibility");
    const lines = readFileSync(SMALL, "utf8").split("\n");
    for (const s of seen) expect(lines[s.line - 1].trim()).toBe("<page>");
  });

  it("decodes XML entities in wikitext before parsing it", async () => {
    for await (const p of readDumpPages(SMALL)) {
      if (p.title === "Template:Reflist") expect(p.text).toBe('<div class="reflist">{{#tag:references}}</div>');
    }
  });

  it("takes the article URL prefix from <siteinfo><base>", async () => {
    const xml = readFileSync(SMALL, "utf8").replace("https://en.wikipedia.org/wiki/Main_Page", "https://simple.wikipedia.org/wiki/Main_Page");
    const file = join(tmp, "simple.xml");
    writeFileSync(file, xml);
    const { pages } = await convertAll(file);
    expect(pages[0].history?.url).toBe("https://simple.wikipedia.org/wiki/Anarchism");
  });

  it("reads .gz and .bz2 (bzip2 program and pure JavaScript, multistream too) to the same result", async () => {
    const plain = await convertAll(SMALL);
    const gz = join(tmp, "small.xml.gz");
    writeFileSync(gz, gzipSync(readFileSync(SMALL)));
    expect((await convertAll(gz)).items).toEqual(plain.items);
    if (!hasNativeBzip2()) return; // the .bz2 copies are made with the bzip2 program
    const xml = readFileSync(SMALL);
    const bz2 = join(tmp, "small.xml.bz2");
    writeFileSync(bz2, execFileSync("bzip2", ["-c"], { input: xml }));
    // A multistream file like Wikipedia's: independent bzip2 streams concatenated.
    const cut = xml.indexOf("  <page>\n    <title>Ada Lovelace");
    const multi = join(tmp, "multi.xml.bz2");
    writeFileSync(multi, Buffer.concat([execFileSync("bzip2", ["-c"], { input: xml.subarray(0, cut) }), execFileSync("bzip2", ["-c"], { input: xml.subarray(cut) })]));
    for (const file of [bz2, multi]) {
      expect((await convertAll(file, { bz2: "native" })).items).toEqual(plain.items);
      expect((await convertAll(file, { bz2: "js" })).items).toEqual(plain.items);
    }
  });

  it("reports broken XML and corrupt compressed data with the file and line", async () => {
    const truncated = join(tmp, "truncated.xml");
    writeFileSync(truncated, readFileSync(SMALL, "utf8").split("\n").slice(0, 60).join("\n"));
    await expect(convertAll(truncated)).rejects.toThrow(/truncated\.xml:60: invalid XML: Unclosed root tag/);
    const bad = join(tmp, "bad.xml");
    writeFileSync(bad, "<mediawiki>\n  <page>\n    <title>A</title>\n  </pagex>\n</mediawiki>\n");
    await expect(convertAll(bad)).rejects.toThrow(/bad\.xml:4: invalid XML: Unexpected close tag/);
    const noId = join(tmp, "noid.xml");
    writeFileSync(noId, "<mediawiki>\n  <page>\n    <title>A</title>\n    <ns>0</ns>\n  </page>\n</mediawiki>\n");
    await expect(convertAll(noId)).rejects.toThrow('noid.xml:2: page "A": no <id>');
    const corrupt = join(tmp, "corrupt.xml.bz2");
    writeFileSync(corrupt, Buffer.from("BZh91AY&SY this is not bzip2 data at all"));
    await expect(convertAll(corrupt, { bz2: "js" })).rejects.toThrow(/corrupt\.xml\.bz2: bzip2 data/);
    if (hasNativeBzip2()) await expect(convertAll(corrupt, { bz2: "native" })).rejects.toThrow(/corrupt\.xml\.bz2: bzip2 failed/);
  });
});

describe("single-page helpers", () => {
  const raw = (text: string, extra: Partial<Parameters<typeof wikitextToPage>[0]> = {}) => ({ title: "T", ns: 0, id: "1", text, line: 1, ...extra });

  it("finds redirects from the wikitext when the export has no <redirect> element", () => {
    expect(redirectOf(raw("#REDIRECT [[target page#Some part|label]]"))).toEqual({ wikipedia_id: "1", title: "T", target: "Target page", fragment: "Some part" });
    expect(redirectOf(raw("#redirect:[[Other]]"))).toEqual({ wikipedia_id: "1", title: "T", target: "Other" });
    expect(redirectOf(raw("Text that mentions #REDIRECT [[X]] later."))).toBeNull();
  });

  it("keeps a section header only when text follows inside it", () => {
    const page: KiltPage = wikitextToPage(raw("Lead text.\n\n== Empty ==\n\n== Parent ==\n=== Child ===\nChild text.\n\n=== Empty child ===\n\n== References ==\n{{Reflist}}\n")).page;
    expect(page.text).toEqual(["T\n", "Lead text.\n", "Section::::Parent.\n", "Section::::Parent.:Child.\n", "Child text.\n"]);
    expect(page.history).toEqual({ pageid: 1, url: "https://en.wikipedia.org/wiki/T" });
    expect(page.anchors).toEqual([]);
    expect(page.categories).toBe("");
  });
});
