// What the command files share: parsers of option values (positive and non-negative integers, ports, comma
// lists, locations), the help line of a location flag, number formatting and the stderr log line.
// A location flag takes a directory or a `clickhouse://` URL wherever the backend seam
// (src/backends/open.ts) can open both; where only a local path can be used, `localPath` refuses a URL.

import { InvalidArgumentError, Option } from "commander";

/** `1234567` → `1,234,567`. */
export const fmt = (n: number): string => n.toLocaleString("en-US");

/** One line on standard error (progress and summaries; standard output is for results). */
export const log = (s: string): void => void process.stderr.write(`${s}\n`);

/** A positive integer option value. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer");
  return n;
}

/** A non-negative integer option value (digits only). */
export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a non-negative integer");
  return Number(value);
}

/** A port number option value (0: any free one). */
export function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError("expected a port number (0-65535)");
  return n;
}

/**
 * The old `--rerank N` (a compressed dense index's rescoring depth, renamed `--refine N` after FAISS's
 * refine step, so that "rerank" names rerankers): a hidden option that refuses any value with the
 * migration. `refine` says where the depth is set now (a flag of this command, or a request field).
 */
export function renamedRerank(refine: string): Option {
  return new Option("--rerank <value>")
    .hideHelp()
    .argParser((v: string): never => {
      const depth = /^\d+$/u.test(v.trim());
      throw new InvalidArgumentError(
        depth
          ? `--rerank ${v} was the rescoring depth of a compressed dense index: it is now ${refine}; --rerank no longer exists (rerankers are --reranker SPEC with --rerank-depth N)`
          : `rerankers are given as --reranker SPEC (with --rerank-depth N); --rerank no longer exists (the rescoring depth of a compressed dense index is ${refine})`,
      );
    });
}

/** A repeatable option's values, in order (`--flag a --flag b` → `["a", "b"]`). */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `a, b,c` → `["a", "b", "c"]` (empty items dropped). */
export function splitList(s: string): string[] {
  return s
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
}

/** A comma-separated list of provenance keys (at least one). */
export function keyList(s: string): string[] {
  const keys = splitList(s);
  if (keys.length === 0) throw new InvalidArgumentError("expected comma-separated provenance keys");
  return keys;
}

/** Help of `--runs`: every command that takes it accepts the same forms. */
export const RUNS_HELP = "runs database: a directory (default .tartan/runs or $TARTAN_RUNS) or a clickhouse:// URL";

/** A `scheme://…` location (a URL, not a path). */
export function isUrl(s: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//iu.test(s);
}

/** Refuses a URL given to `flag`, which names `what` on this machine only (instead of writing a directory called `clickhouse:`). */
export function localPath(flag: string, value: string, what = "a directory", instead?: string): string {
  if (isUrl(value)) throw new Error(`${flag} takes ${what}, not a URL (${value})${instead ? `; ${instead}` : ""}`);
  return value;
}
