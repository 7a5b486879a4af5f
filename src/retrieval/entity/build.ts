// Builds the entity retriever's alias table from KILT pages, the CPU stand-in for BLINK in KILT: every
// anchor's text counts one link to its target page (resolved by wikipedia_id, else by title), and every
// page's title, its title without a "(…)" qualifier or ", …" suffix, and its Wikidata label and aliases
// add `titleCount` pseudo-links. p(page | mention) = links(mention → page) / links(mention → any page).
// Units are pages (sources.ts `page` units), so entity hits fuse with page-level TF-IDF.

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { displayTitle } from "../../knowledge/wiki-title.js";
import { JsonlWriter } from "../../records/jsonl.js";
import type { KiltPage } from "../../records/types.js";
import { writeManifest } from "../manifest.js";
import { pageUnit } from "../sources.js";
import { UnitWriter } from "../units.js";
import { mentionKey } from "./mentions.js";

export interface EntityParams {
  /** Pseudo-links a page's title (and title variants, Wikidata label/aliases) adds. Default 1. */
  titleCount: number;
  /** Longest mention looked for, in tokens. Default 12. */
  maxMentionTokens: number;
}

export const DEFAULT_ENTITY_PARAMS: EntityParams = { titleCount: 1, maxMentionTokens: 12 };
export const ENTITY_FORMAT_VERSION = 1;
export const ALIASES_FILE = "aliases.jsonl";

/** One line of aliases.jsonl: a mention key and its candidate units with link counts (count desc, unit asc). */
export interface AliasLine {
  m: string;
  c: [number, number][];
}

export interface EntityBuildStats {
  units: number;
  aliases: number;
  anchors: number;
  unresolvedAnchors: number;
}

/** The title variants a page is known by: the title, without "(…)" qualifier, before ", ". */
export function titleVariants(title: string): string[] {
  const out = new Set<string>([title]);
  const paren = title.replace(/\s*\([^()]*\)\s*$/u, "");
  if (paren.length > 0) out.add(paren);
  const comma = paren.indexOf(", ");
  if (comma > 0) out.add(paren.slice(0, comma));
  return [...out];
}

function wikidataNames(page: KiltPage): string[] {
  const info = page.wikidata_info;
  const out: string[] = [];
  if (info && typeof info.wikidata_label === "string") out.push(info.wikidata_label);
  // KILT stores Wikidata aliases as a list of strings, or as {"alias": [...]}.
  const raw = info?.aliases;
  const list: unknown = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? (raw as { alias?: unknown }).alias : undefined;
  if (Array.isArray(list)) for (const a of list) if (typeof a === "string") out.push(a);
  return out;
}

/** Indexes `pages` into `outDir`: page units, aliases.jsonl and manifest.json. */
export async function buildEntityIndex(
  pages: AsyncIterable<KiltPage> | Iterable<KiltPage>,
  outDir: string,
  params: Partial<EntityParams> & { source: string },
  onProgress?: (pages: number) => void,
): Promise<EntityBuildStats> {
  const p: EntityParams = { titleCount: params.titleCount ?? DEFAULT_ENTITY_PARAMS.titleCount, maxMentionTokens: params.maxMentionTokens ?? DEFAULT_ENTITY_PARAMS.maxMentionTokens };
  if (!(p.titleCount >= 0)) throw new Error(`entity titleCount must be ≥ 0, got ${p.titleCount}`);
  if (!Number.isInteger(p.maxMentionTokens) || p.maxMentionTokens < 1) throw new Error(`entity maxMentionTokens must be a positive integer`);
  mkdirSync(outDir, { recursive: true });
  const units = new UnitWriter(outDir);
  const byId = new Map<string, number>();
  const byTitle = new Map<string, number>();
  // key → (unit → count) for titles; key → (target reference → count) for anchors, resolved at the end.
  const titleLinks = new Map<string, Map<number, number>>();
  const anchorLinks = new Map<string, Map<string, number>>();
  let anchors = 0;
  const add = <K>(table: Map<string, Map<K, number>>, key: string, target: K, n: number) => {
    let m = table.get(key);
    if (!m) table.set(key, (m = new Map()));
    m.set(target, (m.get(target) ?? 0) + n);
  };
  let n = 0;
  for await (const page of pages as AsyncIterable<KiltPage>) {
    const unit = await units.add(pageUnit(page));
    n = unit + 1;
    const title = String(page.wikipedia_title ?? "");
    byId.set(String(page.wikipedia_id), unit);
    if (!byTitle.has(title)) byTitle.set(title, unit);
    const names = new Set([...titleVariants(title), ...wikidataNames(page)]);
    const keys = new Set<string>();
    for (const name of names) {
      const key = mentionKey(name);
      if (key !== null) keys.add(key);
    }
    if (p.titleCount > 0) for (const key of keys) add(titleLinks, key, unit, p.titleCount);
    for (const a of page.anchors ?? []) {
      const key = mentionKey(String(a.text ?? ""));
      if (key === null) continue;
      const ref = a.wikipedia_id !== undefined && a.wikipedia_id !== null && String(a.wikipedia_id) !== "" ? `id:${a.wikipedia_id}` : `title:${displayTitle(String(a.wikipedia_title ?? String(a.href ?? "").split("#")[0]))}`;
      add(anchorLinks, key, ref, 1);
      anchors++;
    }
    onProgress?.(n);
  }
  await units.close();

  let unresolved = 0;
  for (const [key, targets] of anchorLinks) {
    for (const [ref, count] of targets) {
      const unit = ref.startsWith("id:") ? byId.get(ref.slice(3)) : byTitle.get(ref.slice(6));
      if (unit === undefined) {
        unresolved += count;
        continue;
      }
      add(titleLinks, key, unit, count);
    }
  }
  const out = new JsonlWriter(join(outDir, ALIASES_FILE));
  const keys = [...titleLinks.keys()].sort();
  for (const key of keys) {
    const c = [...titleLinks.get(key)!].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
    await out.write({ m: key, c } satisfies AliasLine);
  }
  await out.close();
  writeManifest(outDir, { kind: "entity", unit: "page", units: n, params: { ...p, aliases: keys.length, anchors, unresolvedAnchors: unresolved }, source: params.source, formatVersion: ENTITY_FORMAT_VERSION });
  return { units: n, aliases: keys.length, anchors, unresolvedAnchors: unresolved };
}
