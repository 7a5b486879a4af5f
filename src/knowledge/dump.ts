// MediaWiki XML export (`pages-articles.xml[.bz2|.gz]`) → KILT pages, streamed with constant memory.
// XML is read with `sax`; wikitext is turned into plain text by `wtf_wikipedia` and laid out the way
// KILT's knowledge source is (kilt-spec.md §1.3): text[0] the title, then paragraphs, `Section::::A.:B.`
// headers and `BULLET::::- ` list items, each ending in "\n"; anchors located in that text with
// code-point offsets. Redirects are reported separately; other namespaces are skipped. The layout and
// what is dropped (tables, infoboxes, image captions, references): docs/knowledge-build.md.

import { spawn, spawnSync } from "node:child_process";
import { createReadStream } from "node:fs";
import { createRequire } from "node:module";
import { PassThrough, type Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";
import { createGunzip } from "node:zlib";
import sax from "sax";
import wtf from "wtf_wikipedia";
import type { Anchor, KiltPage } from "../records/types.js";
import { OffsetMap } from "./codepoints.js";
import { ENWIKI_ARTICLE_PREFIX, articleUrl, displayTitle } from "./wiki-title.js";

/** One `<page>` of an export, as written (all namespaces). */
export interface DumpPage {
  title: string;
  ns: number;
  id: string;
  /** `<redirect title="…"/>` when the page is a redirect. */
  redirect?: string;
  revid?: string;
  parentid?: string;
  timestamp?: string;
  text: string;
  /** Line of the `<page>` tag in the (decompressed) XML, 1-based. */
  line: number;
}

/** What `<siteinfo>` says. */
export interface SiteInfo {
  sitename?: string;
  dbname?: string;
  /** The main page URL, e.g. https://en.wikipedia.org/wiki/Main_Page. */
  base?: string;
}

/** A redirect page: `title` (page `wikipedia_id`) leads to `target` (`#fragment`). */
export interface Redirect {
  wikipedia_id: string;
  title: string;
  target: string;
  fragment?: string;
}

/** A problem at a place in a dump file. */
export class DumpError extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}:${line}: ${reason}`);
    this.name = "DumpError";
  }
}

/** How to decompress `.bz2`: the `bzip2` program (fast; the default when on PATH) or pure JavaScript. */
export type Bz2Mode = "auto" | "native" | "js";

/** Options of reading a MediaWiki export. */
export interface ReadDumpOptions {
  bz2?: Bz2Mode;
  /** Called once with the export's `<siteinfo>` (site name, base URL, namespaces). */
  onSiteInfo?: (info: SiteInfo) => void;
  /** Compressed bytes read so far, after each chunk. */
  onProgress?: (bytesRead: number) => void;
}

let bzip2Available: boolean | undefined;

/** Whether a `bzip2` program is on PATH (checked once). */
export function hasNativeBzip2(): boolean {
  if (bzip2Available === undefined) {
    const r = spawnSync("bzip2", ["--help"], { stdio: "ignore" });
    bzip2Available = r.error === undefined && r.status === 0;
  }
  return bzip2Available;
}

const requireCjs = createRequire(import.meta.url);

/** The decompressed bytes of `file` (.bz2, .gz or plain), counting compressed bytes for progress. */
export function openDecompressed(file: string, bz2: Bz2Mode = "auto", onBytes?: (n: number) => void): Readable {
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  let read = 0;
  if (onBytes) raw.on("data", (c: string | Buffer) => onBytes((read += c.length)));
  const out = new PassThrough({ highWaterMark: 1 << 20 });
  const fail = (err: Error) => {
    raw.destroy();
    out.destroy(err);
  };
  raw.on("error", fail);
  if (file.endsWith(".gz")) {
    const gz = createGunzip();
    gz.on("error", (e) => fail(new Error(`${file}: gzip: ${e.message}`)));
    return raw.pipe(gz).pipe(out);
  }
  if (!file.endsWith(".bz2")) return raw.pipe(out);
  const native = bz2 === "native" || (bz2 === "auto" && hasNativeBzip2());
  if (native) {
    const child = spawn("bzip2", ["-dc"], { stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", (e) => fail(new Error(`${file}: cannot run bzip2 (${e.message})`)));
    child.stdin.on("error", () => {
      /* bzip2 exited early; its exit status reports why */
    });
    raw.pipe(child.stdin);
    child.stdout.pipe(out, { end: false });
    child.on("close", (code) => {
      if (code === 0) out.end();
      else fail(new Error(`${file}: bzip2 failed (exit ${code}): ${stderr.trim()}`));
    });
    out.on("close", () => {
      if (child.exitCode === null) child.kill();
    });
    return out;
  }
  const unbzip2 = requireCjs("unbzip2-stream") as () => NodeJS.ReadWriteStream;
  const dec = unbzip2();
  dec.on("error", (e: Error) => fail(new Error(`${file}: bzip2 data: ${e.message}`)));
  raw.pipe(dec).pipe(out);
  return out;
}

const PAGE_FIELDS = new Set(["title", "ns", "id", "revision/id", "revision/parentid", "revision/timestamp", "revision/text"]);

/** Streams the `<page>`s of a MediaWiki export, all namespaces, in file order. */
export async function* readDumpPages(file: string, options: ReadDumpOptions = {}): AsyncGenerator<DumpPage> {
  const parser = sax.parser(true, { trim: false, normalize: false, position: true });
  const ready: DumpPage[] = [];
  const stack: string[] = [];
  let page: Partial<DumpPage> & { line?: number } = {};
  let inPage = false;
  let field: string | null = null;
  let buf: string[] = [];
  let site: SiteInfo | null = null;
  let inSite = false;

  const here = () => parser.line + 1;
  parser.onerror = (e) => {
    throw new DumpError(file, here(), `invalid XML: ${e.message.split("\n")[0]}`);
  };
  parser.onopentag = (tag) => {
    const name = tag.name;
    stack.push(name);
    if (name === "siteinfo" && stack.length === 2) {
      inSite = true;
      site = {};
    } else if (name === "page" && stack.length === 2) {
      inPage = true;
      page = { line: here() };
    } else if (inPage) {
      const rel = stack.slice(2).join("/");
      if (rel === "redirect") page.redirect = String(tag.attributes.title ?? "");
      if (PAGE_FIELDS.has(rel)) {
        field = rel;
        buf = [];
      }
    } else if (inSite && stack.length === 3 && (name === "sitename" || name === "dbname" || name === "base")) {
      field = name;
      buf = [];
    }
  };
  const onText = (t: string) => {
    if (field !== null) buf.push(t);
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = (name) => {
    if (field !== null) {
      const value = buf.join("");
      if (inPage) {
        switch (field) {
          case "title": page.title = value; break;
          case "ns": page.ns = Number(value.trim()); break;
          case "id": page.id = value.trim(); break;
          case "revision/id": page.revid = value.trim(); break;
          case "revision/parentid": page.parentid = value.trim(); break;
          case "revision/timestamp": page.timestamp = value.trim(); break;
          case "revision/text": page.text = value; break;
        }
      } else if (site !== null) {
        (site as Record<string, string>)[field] = value.trim();
      }
      field = null;
      buf = [];
    }
    stack.pop();
    if (name === "siteinfo" && inSite && stack.length === 1) {
      inSite = false;
      if (site) options.onSiteInfo?.(site);
    } else if (name === "page" && inPage && stack.length === 1) {
      inPage = false;
      const line = page.line ?? 0;
      if (page.title === undefined) throw new DumpError(file, line, "<page> without <title>");
      if (page.id === undefined || page.id === "") throw new DumpError(file, line, `page ${JSON.stringify(page.title)}: no <id>`);
      if (page.ns === undefined || Number.isNaN(page.ns)) throw new DumpError(file, line, `page ${JSON.stringify(page.title)}: missing or bad <ns>`);
      ready.push({ ...page, text: page.text ?? "", line } as DumpPage);
    }
  };

  const stream = openDecompressed(file, options.bz2 ?? "auto", options.onProgress);
  const decoder = new StringDecoder("utf8");
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      parser.write(decoder.write(chunk));
      if (ready.length > 0) {
        yield* ready.splice(0, ready.length);
      }
    }
    parser.write(decoder.end());
    parser.close();
    if (ready.length > 0) yield* ready.splice(0, ready.length);
  } finally {
    stream.destroy();
  }
}

/** Counts of a conversion. */
export interface DumpStats {
  /** `<page>`s read, all namespaces. */
  pages: number;
  /** Namespace-0 non-redirect pages converted. */
  articles: number;
  redirects: number;
  disambiguations: number;
  /** Pages of other namespaces, skipped. */
  otherNamespaces: number;
  anchors: number;
  /** Links whose text could not be found in the produced plain text (no anchor written). */
  unplacedLinks: number;
  /** Pages the wikitext parser failed on (reported through onError, skipped). */
  failed: number;
}

/** Options of converting one dump page into a KILT page. */
export interface ConvertOptions {
  /** Article URL prefix for `history.url`; default from `<siteinfo><base>`, else English Wikipedia. */
  articlePrefix?: string;
}

/** A converted page with its counts (for {@link DumpStats}). */
export interface PageConversion {
  page: KiltPage;
  unplacedLinks: number;
  disambiguation: boolean;
}

const BULLET = "BULLET::::- ";

interface Block {
  kind: "header" | "text";
  /** Header nesting level (1 for `==`), 0 for text. */
  level: number;
  text: string;
  /** UTF-16 spans of links in `text`. */
  links: { start: number; end: number; text: string; href: string; title: string }[];
}

interface WtfLink {
  text(): string;
  page(): string;
  anchor(): string;
  type(): string;
}
interface WtfSentence {
  text(): string;
  links(): WtfLink[];
}

/** Appends a sentence's text at `offset` of `block` and locates its internal links there. */
function addSentence(block: Block, sentence: WtfSentence, offset: number): number {
  const text = sentence.text();
  let unplaced = 0;
  let cursor = 0;
  for (const link of sentence.links()) {
    if (link.type() !== "internal") continue;
    const page = link.page();
    if (!page) continue;
    const shown = link.text() || page;
    let at = text.indexOf(shown, cursor);
    if (at < 0) at = text.indexOf(shown);
    if (at < 0 || shown.length === 0) {
      unplaced++;
      continue;
    }
    const anchor = link.anchor();
    block.links.push({
      start: offset + at,
      end: offset + at + shown.length,
      text: shown,
      href: anchor ? `${page}#${anchor}` : page,
      title: displayTitle(page),
    });
    cursor = at + shown.length;
  }
  return unplaced;
}

/** Converts the wikitext of one namespace-0 article into a KILT page. */
export function wikitextToPage(raw: DumpPage, options: ConvertOptions = {}): PageConversion {
  const doc = wtf(raw.text, { title: raw.title });
  const blocks: Block[] = [];
  const path: string[] = [];
  let unplaced = 0;
  for (const section of doc.sections()) {
    const name = section.title().trim();
    if (name) {
      path.length = Math.min(path.length, Math.max(0, section.depth()));
      path.push(name);
      blocks.push({ kind: "header", level: path.length, text: `Section::::${path.map((n) => `${n}.`).join(":")}`, links: [] });
    }
    for (const paragraph of section.paragraphs() as unknown as { sentences(): WtfSentence[]; lists(): { lines(): WtfSentence[] }[] }[]) {
      const block: Block = { kind: "text", level: 0, text: "", links: [] };
      for (const sentence of paragraph.sentences()) {
        const t = sentence.text();
        if (!t || !t.trim()) continue;
        const offset = block.text.length === 0 ? 0 : block.text.length + 1;
        if (block.text.length > 0) block.text += " ";
        unplaced += addSentence(block, sentence, offset);
        block.text += t;
      }
      if (block.text.trim()) blocks.push(block);
      for (const list of paragraph.lists()) {
        for (const line of list.lines()) {
          const t = line.text();
          if (!t || !t.trim()) continue;
          const item: Block = { kind: "text", level: 0, text: BULLET + t, links: [] };
          unplaced += addSentence(item, line, BULLET.length);
          blocks.push(item);
        }
      }
    }
  }

  // Keep a header only when text follows it before the next header of the same or a higher level.
  const keep = new Array<boolean>(blocks.length).fill(true);
  for (let i = 0; i < blocks.length; i++) {
    if (blocks[i].kind !== "header") continue;
    let hasText = false;
    for (let j = i + 1; j < blocks.length; j++) {
      if (blocks[j].kind === "text") {
        hasText = true;
        break;
      }
      if (blocks[j].level <= blocks[i].level) break;
    }
    keep[i] = hasText;
  }

  const text = [`${raw.title}\n`];
  const anchors: Anchor[] = [];
  blocks.forEach((b, i) => {
    if (!keep[i]) return;
    const paragraph = `${b.text}\n`;
    const pid = text.length;
    text.push(paragraph);
    if (b.links.length === 0) return;
    const map = new OffsetMap(paragraph);
    for (const l of b.links) {
      anchors.push({
        text: l.text,
        href: l.href,
        paragraph_id: pid,
        start: map.toCodePoint(l.start),
        end: map.toCodePoint(l.end),
        wikipedia_title: l.title,
      });
    }
  });

  const num = (s: string | undefined) => (s !== undefined && /^\d+$/.test(s) ? Number(s) : s);
  const history: NonNullable<KiltPage["history"]> = {};
  if (raw.revid !== undefined) history.revid = num(raw.revid);
  if (raw.timestamp !== undefined) history.timestamp = raw.timestamp;
  if (raw.parentid !== undefined) history.parentid = num(raw.parentid);
  history.pageid = num(raw.id);
  history.url = articleUrl(raw.title, options.articlePrefix ?? ENWIKI_ARTICLE_PREFIX);
  const disambiguation = doc.isDisambiguation();
  const page: KiltPage = {
    _id: raw.id,
    wikipedia_id: raw.id,
    wikipedia_title: raw.title,
    text,
    anchors,
    categories: doc.categories().join(","),
    history,
  };
  if (disambiguation) page.meta = { disambiguation: true };
  return { page, unplacedLinks: unplaced, disambiguation };
}

/** The redirect a page stands for, or null: `<redirect title>` first, else `#REDIRECT [[…]]` in the text. */
export function redirectOf(raw: DumpPage): Redirect | null {
  const m = /^\s*#\s*redirect\s*:?\s*\[\[([^\]|]+)(?:\|[^\]]*)?\]\]/i.exec(raw.text);
  if (raw.redirect === undefined && !m) return null;
  let target = raw.redirect ?? "";
  let fragment: string | undefined;
  if (m) {
    const [linkTarget, frag] = m[1].split("#", 2);
    if (!target) target = displayTitle(linkTarget);
    if (frag) fragment = frag.trim();
  }
  const r: Redirect = { wikipedia_id: raw.id, title: raw.title, target };
  if (fragment) r.fragment = fragment;
  return r;
}

/** One result of {@link convertDump}. */
export type DumpItem = { kind: "page"; page: KiltPage } | { kind: "redirect"; redirect: Redirect };

/** Options of {@link convertDump}. */
export interface ConvertDumpOptions extends ReadDumpOptions, ConvertOptions {
  /** A page the parser failed on; the conversion goes on. Default: ignore (counted in stats.failed). */
  onError?: (error: DumpError) => void;
}

/** Streams KILT pages and redirects out of a MediaWiki export; `stats` is filled as it goes. */
export async function* convertDump(
  file: string,
  options: ConvertDumpOptions = {},
  stats: DumpStats = { pages: 0, articles: 0, redirects: 0, disambiguations: 0, otherNamespaces: 0, anchors: 0, unplacedLinks: 0, failed: 0 },
): AsyncGenerator<DumpItem> {
  let prefix = options.articlePrefix;
  const onSiteInfo = (info: SiteInfo) => {
    if (prefix === undefined && info.base) {
      const m = /^(.*\/)[^/]*$/.exec(info.base);
      if (m) prefix = m[1];
    }
    options.onSiteInfo?.(info);
  };
  for await (const raw of readDumpPages(file, { ...options, onSiteInfo })) {
    stats.pages++;
    if (raw.ns !== 0) {
      stats.otherNamespaces++;
      continue;
    }
    const redirect = redirectOf(raw);
    if (redirect) {
      stats.redirects++;
      yield { kind: "redirect", redirect };
      continue;
    }
    let converted: PageConversion;
    try {
      converted = wikitextToPage(raw, { articlePrefix: prefix });
    } catch (err) {
      stats.failed++;
      options.onError?.(
        new DumpError(file, raw.line, `page ${raw.id} ${JSON.stringify(raw.title)}: ${err instanceof Error ? err.message : String(err)}`),
      );
      continue;
    }
    stats.articles++;
    if (converted.disambiguation) stats.disambiguations++;
    stats.anchors += converted.page.anchors?.length ?? 0;
    stats.unplacedLinks += converted.unplacedLinks;
    yield { kind: "page", page: converted.page };
  }
}
