// Shared by the benchmarks: the repository's paths, the built package (a public name through the
// package's own entry points, `tartan("retrieval")` as a user's `import … from "tartan/retrieval"`; an
// internal one a benchmark measures directly by its dist path, `internal("retrieval/tfidf/hash.js")`),
// command-line options with --help, and the load average, CPU seconds and resident memory printed beside
// every figure. Every benchmark needs `npm run build` first (the npm scripts `bench:*` build).

import { existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** ../shared: data, tools and references beside the checkout. */
export const SHARED = join(ROOT, "..", "shared");
/** Where the benchmarks write their results and scratch files. */
export const OUT = join(ROOT, "bench", "out");
/** The compiled modules (dist/src). */
export const DIST = join(ROOT, "dist", "src");
/** The compiled CLI. */
export const CLI = join(DIST, "cli", "main.js");

function built() {
  if (!existsSync(join(DIST, "index.js"))) throw new Error(`${DIST} is missing: run \`npm run build\` first (the bench:* npm scripts do)`);
}

/** A public entry point of the built package, resolved through package.json "exports": `tartan("retrieval")` is `import("tartan/retrieval")`, `tartan()` is `import("tartan")`. */
export async function tartan(entry) {
  built();
  return import(entry ? `tartan/${entry}` : "tartan");
}

/** The path of a compiled module under dist/src (for a child process, a hash of the code, or `internal`). */
export const distPath = (p) => join(DIST, p);

/** A compiled module the package does not export: an internal a benchmark measures directly. */
export async function internal(p) {
  built();
  return import(pathToFileURL(distPath(p)).href);
}

/**
 * Command-line options (node:util parseArgs, strict): `--help` prints `usage` and exits 0, an unknown or
 * malformed option prints the error and `usage` and exits 2. Returns the values, or `{ values,
 * positionals }` when `positionals` is true.
 */
export function opt(options, usage, { positionals = false, args = process.argv.slice(2) } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: "boolean" } }, allowPositionals: positionals });
  } catch (e) {
    process.stderr.write(`${e.message}\n${usage}\n`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  delete parsed.values.help;
  return positionals ? parsed : parsed.values;
}

/** The load average over 1, 5 and 15 minutes, as printed beside each figure. */
export const load = (digits = 2, sep = " ") => loadavg().map((x) => x.toFixed(digits)).join(sep);

/** CPU seconds (user + system) of this process: in all, or since `since` (an earlier `process.cpuUsage()`). */
export function cpuS(since) {
  const c = process.cpuUsage(since);
  return (c.user + c.system) / 1e6;
}

/** Resident memory of this process now, in MiB. */
export const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

/** Peak resident memory of this process so far (VmHWM), in MiB. */
export const peakMiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
