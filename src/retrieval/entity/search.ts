// The entity retriever: ranks pages for the mention an input marks with `[START_ENT] … [END_ENT]` by
// p(page | mention) from the alias table (a marked mention that is no alias falls back to the aliases
// found inside it); unmarked inputs have their mentions found by longest n-gram match, and a page scores
// Σ over mentions of p(page | mention) × the mention's content-word count.

import { join } from "node:path";
import { checkIndexFiles, readManifest } from "../manifest.js";
import type { Hit, IndexManifest, Retriever } from "../types.js";
import { queryText, type QueryInput } from "../query.js";
import { UnitStore } from "../units/store.js";
import { topK } from "../tfidf/topk.js";
import type { EntityParams } from "./build.js";
import { ALIASES_FILE, ENTITY_FORMAT_VERSION, checkAliasFile, openAliasFile } from "./format.js";
import { AliasTable, type Candidates } from "./table.js";
import { findMentions, keyOfTokens, markedMention, mentionTokens, type FoundMention } from "./mentions.js";

export type { Candidates } from "./table.js";

/** The entity retriever: mentions in the query (longest alias matches) vote for the pages they link to, weighted by how often they do. */
export class EntityRetriever implements Retriever {
  readonly kind = "entity" as const;
  readonly units: UnitStore;
  readonly params: EntityParams;
  private readonly table: AliasTable;

  constructor(
    readonly dir: string,
    readonly manifest: IndexManifest,
  ) {
    if (manifest.kind !== "entity") throw new Error(`${dir}: not an entity index (kind ${manifest.kind})`);
    if (manifest.formatVersion !== ENTITY_FORMAT_VERSION) throw new Error(`${dir}: entity format ${manifest.formatVersion}, this tartan reads ${ENTITY_FORMAT_VERSION}: rebuild the index`);
    this.params = manifest.params as unknown as EntityParams;
    checkIndexFiles(dir, manifest);
    this.units = UnitStore.open(dir);
    if (this.units.count !== manifest.units) {
      this.units.close();
      throw new Error(`${dir}: ${this.units.count} units in its unit store, manifest.json says ${manifest.units} (mixed or corrupt; rebuild the index)`);
    }
    try {
      this.table = new AliasTable(openAliasFile(join(dir, ALIASES_FILE), { units: manifest.units, buildId: manifest.params.buildId }));
    } catch (e) {
      this.units.close();
      throw e;
    }
  }

  /** The candidates of a mention key, or undefined. */
  candidates(key: string): Candidates | undefined {
    return this.table.get(key);
  }

  /** The mentions the retriever uses for `input` (marked mention, or those found in the text). */
  mentions(input: string): FoundMention[] {
    const has = (k: string) => this.table.has(k);
    const marked = markedMention(input);
    const tokens = mentionTokens(marked ?? input);
    if (marked !== null) {
      const key = keyOfTokens(tokens);
      if (key !== null && has(key)) return [{ key, start: 0, end: tokens.length, weight: 1 }];
    }
    return findMentions(tokens, has, this.params.maxMentionTokens, (t) => this.table.mayStartLongerKey(t));
  }

  async search(query: QueryInput, k: number): Promise<Hit[]> {
    return this.searchSync(queryText(query), k);
  }

  /** {@link EntityRetriever.search} without the promise. */
  searchSync(query: string, k: number): Hit[] {
    const scores = new Map<number, number>();
    for (const m of this.mentions(query)) {
      const c = this.table.get(m.key)!;
      for (let i = 0; i < c.units.length; i++) scores.set(c.units[i], (scores.get(c.units[i]) ?? 0) + c.probs[i] * m.weight);
    }
    const units = [...scores.keys()];
    return topK(units, units.length, (u) => scores.get(u)!, k);
  }

  /** Closes the unit store and the alias file. */
  async close(): Promise<void> {
    this.units.close();
    this.table.close();
  }
}

/**
 * Checks the entity index in `dir` in full (what opening leaves out): the alias file's checksum, every
 * line and its key index (format.ts checkAliasFile). Throws naming the file; returns the alias count.
 */
export function checkEntityIndex(dir: string): { aliases: number } {
  const manifest = readManifest(dir);
  if (manifest.kind !== "entity") throw new Error(`${dir}: not an entity index (kind ${manifest.kind})`);
  return checkAliasFile(join(dir, ALIASES_FILE), { units: manifest.units, buildId: manifest.params.buildId });
}

/** Opens the entity index in `dir`. */
export async function openEntity(dir: string): Promise<EntityRetriever> {
  return new EntityRetriever(dir, readManifest(dir));
}
