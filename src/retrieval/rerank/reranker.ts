// What a reranker is: given a query and the passages a first stage retrieved for it, a score per passage
// (higher is better), the second stage researchers expect (cross-encoders, LLM rerankers). Each kind is a
// descriptor (`RerankerDescriptor`) registered in RERANKERS (./index.ts); a reranker is named on the
// command line by a spec string (`NAME:key=value,…`, a JSON object, or `@file.json`), parsed here, so it
// travels as plain data to the search workers and the rerank pool's workers.

import { readFileSync } from "node:fs";
import type { Descriptor } from "../../util/registry.js";

/** One passage to score: its page title and text, and where the first stage has them, its score and place. */
export interface RerankPassage {
  title: string;
  text: string;
  /** The first stage's score (a run's provenance score, or the wrapped retriever's hit score). */
  score?: number;
  /** Its page (`wikipedia_id`). */
  page?: string;
  /** Its first paragraph (`start_paragraph_id`); absent for whole pages. */
  paragraph?: number;
}

/** One query and the passages to score for it, in first-stage order. */
export interface RerankItem {
  query: string;
  passages: readonly RerankPassage[];
}

/** What a reranker gives for one item. */
export interface RerankOutput {
  /** One finite score per passage, in the passages' order (higher is better). */
  scores: number[];
  /** What a model server answered, in call order (recorded in the run's settings so the run can be reproduced); absent for local models. */
  answers?: unknown[];
}

/** An open reranker. */
export interface Reranker {
  /** Its registered name. */
  readonly name: string;
  /** What a run records about it (model, files, prompt, score mode), plain JSON without secrets. */
  readonly settings: Record<string, unknown>;
  /** Scores the passages of each item; items in order. */
  rerank(items: readonly RerankItem[]): Promise<RerankOutput[]>;
  /** Releases models and connections. */
  close(): Promise<void>;
}

/** A reranker spec: its registered name and its options (plain JSON). */
export interface RerankerSpec {
  name: string;
  options: Record<string, unknown>;
}

/** Where a reranker opens: the threads its model may use (the rerank pool opens one per worker with 1). */
export interface RerankerOpenContext {
  threads?: number;
}

/** One kind of reranker. */
export interface RerankerDescriptor extends Descriptor {
  /** The options a spec must give (e.g. `model`), for messages and `--help`. */
  readonly needs: readonly string[];
  /** Opens the reranker a spec's options describe; throws naming the option that is wrong. */
  open(options: Record<string, unknown>, context: RerankerOpenContext): Promise<Reranker>;
}

const camel = (k: string): string => k.replace(/-([a-z0-9])/gu, (_, c: string) => c.toUpperCase());

function value(v: string): unknown {
  if (/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/u.test(v)) return Number(v);
  if (v === "true") return true;
  if (v === "false") return false;
  return v;
}

function fromObject(o: unknown, where: string): RerankerSpec {
  if (o === null || typeof o !== "object" || Array.isArray(o)) throw new Error(`${where}: a reranker spec is a JSON object with a "name"`);
  const { name, ...options } = o as Record<string, unknown>;
  if (typeof name !== "string" || name === "") throw new Error(`${where}: the reranker spec has no "name" string`);
  return { name, options };
}

/**
 * A reranker spec from its text: `NAME` or `NAME:key=value,key=value` (kebab-case keys become camelCase,
 * numbers and true/false are read as such; a value runs to the next comma, so a URL with a port fits;
 * a first part without `=` is the `model` option, so `learned:MODEL.json` is `learned:model=MODEL.json`),
 * a JSON object `{"name": …, …}`, or `@FILE` holding one. Throws naming the spec and what is wrong.
 */
export function parseRerankerSpec(spec: string | RerankerSpec): RerankerSpec {
  if (typeof spec !== "string") return fromObject({ name: spec.name, ...spec.options }, "reranker spec");
  const text = spec.trim();
  if (text.startsWith("@")) {
    const file = text.slice(1);
    let raw: string;
    try {
      raw = readFileSync(file, "utf8");
    } catch (e) {
      throw new Error(`reranker spec file ${file}: cannot read (${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message})`);
    }
    try {
      return fromObject(JSON.parse(raw), `reranker spec file ${file}`);
    } catch (e) {
      if (e instanceof SyntaxError) throw new Error(`reranker spec file ${file}: invalid JSON (${e.message})`);
      throw e;
    }
  }
  if (text.startsWith("{")) {
    try {
      return fromObject(JSON.parse(text), "reranker spec");
    } catch (e) {
      if (e instanceof SyntaxError) throw new Error(`reranker spec ${JSON.stringify(text)}: invalid JSON (${e.message})`);
      throw e;
    }
  }
  // (a first part without "=" is the model: NAME:FILE is NAME:model=FILE)
  const colon = text.indexOf(":");
  const name = colon < 0 ? text : text.slice(0, colon);
  if (!/^[a-z][a-z0-9-]*$/u.test(name)) throw new Error(`reranker spec ${JSON.stringify(text)}: the name comes first (NAME or NAME:key=value,…)`);
  const options: Record<string, unknown> = {};
  if (colon >= 0) {
    text
      .slice(colon + 1)
      .split(",")
      .forEach((part, i) => {
        if (part.trim() === "") return;
        const eq = part.indexOf("=");
        if (eq < 0 && i === 0) {
          options.model = part.trim();
          return;
        }
        if (eq <= 0) throw new Error(`reranker spec ${JSON.stringify(text)}: ${JSON.stringify(part)} is not key=value`);
        const key = camel(part.slice(0, eq).trim());
        if (key in options) throw new Error(`reranker spec ${JSON.stringify(text)}: ${part.slice(0, eq).trim()} is given twice`);
        options[key] = value(part.slice(eq + 1).trim());
      });
  }
  return { name, options };
}

/** The spec as a short line for messages and run tags: `NAME` and its options. */
export function describeSpec(spec: RerankerSpec): string {
  const opts = Object.entries(spec.options).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return opts.length ? `${spec.name}:${opts.join(",")}` : spec.name;
}

/** Throws unless the output has one finite score per passage (a reranker's own check, and the pool's). */
export function checkOutput(name: string, item: RerankItem, out: RerankOutput): RerankOutput {
  if (!Array.isArray(out.scores) || out.scores.length !== item.passages.length) throw new Error(`reranker ${name}: ${out.scores?.length} scores for ${item.passages.length} passages`);
  for (const s of out.scores) if (!Number.isFinite(s)) throw new Error(`reranker ${name}: a score is ${s}, not a finite number`);
  return out;
}

/** The passages' new order: indexes by score descending, ties in first-stage order. */
export function rerankOrder(scores: readonly number[]): number[] {
  return scores.map((_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b);
}

/** Option readers for descriptors: each throws naming the reranker and the option. */
export const opt = {
  string(name: string, o: Record<string, unknown>, key: string, fallback?: string): string {
    const v = o[key] ?? fallback;
    if (typeof v !== "string" || v === "") throw new Error(`reranker ${name}: option ${key} is required (a string)`);
    return v;
  },
  optionalString(name: string, o: Record<string, unknown>, key: string): string | undefined {
    const v = o[key];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") throw new Error(`reranker ${name}: option ${key} must be a string`);
    return v;
  },
  int(name: string, o: Record<string, unknown>, key: string, fallback: number, min = 1): number {
    const v = o[key] ?? fallback;
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) throw new Error(`reranker ${name}: option ${key} must be an integer of at least ${min}, not ${JSON.stringify(v)}`);
    return v;
  },
  number(name: string, o: Record<string, unknown>, key: string, fallback: number): number {
    const v = o[key] ?? fallback;
    if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`reranker ${name}: option ${key} must be a number, not ${JSON.stringify(v)}`);
    return v;
  },
  bool(name: string, o: Record<string, unknown>, key: string, fallback: boolean): boolean {
    const v = o[key] ?? fallback;
    if (typeof v !== "boolean") throw new Error(`reranker ${name}: option ${key} must be true or false, not ${JSON.stringify(v)}`);
    return v;
  },
  choice<T extends string>(name: string, o: Record<string, unknown>, key: string, choices: readonly T[], fallback: T): T {
    const v = o[key] ?? fallback;
    if (typeof v !== "string" || !(choices as readonly string[]).includes(v)) throw new Error(`reranker ${name}: option ${key} must be one of ${choices.join(", ")}, not ${JSON.stringify(v)}`);
    return v as T;
  },
  /** Throws naming any option not in `known`. */
  known(name: string, o: Record<string, unknown>, known: readonly string[]): void {
    for (const k of Object.keys(o)) if (!known.includes(k)) throw new Error(`reranker ${name}: unknown option ${JSON.stringify(k)} (options: ${known.join(", ")})`);
  },
};
