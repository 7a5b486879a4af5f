// Runs the Lucene 8 reference of pseudo-relevance feedback (bench/lucene/Prf.java, from Anserini's
// description) over texts and queries: its expansion terms and weights, its top k, and its search time.
// Shared by the differential test (test/retrieval/bm25/feedback-lucene.test.ts) and bench/prf.mjs.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileLucene, luceneClasspath } from "./lucene.mjs";

const RM3 = { fbDocs: 10, fbTerms: 10, originalQueryWeight: 0.5, filterTerms: true };
const ROCCHIO = { topFbTerms: 10, topFbDocs: 10, bottomFbTerms: 10, bottomFbDocs: 10, alpha: 1, beta: 0.75, gamma: 0.15, useNegative: false, depth: 1000 };

/** A line of Bm25Bench's text files: "\n" for a newline, "\\" for a backslash. */
function escape(s) {
  return s.replace(/\\/gu, "\\\\").replace(/\r?\n|\r/gu, "\\n");
}

/** The arguments Prf.java takes for a feedback spec ({method: "rm3" | "rocchio", …}, Anserini's defaults for the rest). */
export function prfArgs(spec) {
  if (spec.method === "rm3") {
    const p = { ...RM3, ...spec };
    return ["rm3", p.fbDocs, p.fbTerms, p.originalQueryWeight, p.filterTerms].map(String);
  }
  const p = { ...ROCCHIO, ...spec };
  return ["rocchio", p.topFbTerms, p.topFbDocs, p.bottomFbTerms, p.bottomFbDocs, p.alpha, p.beta, p.gamma, p.useNegative, p.depth].map(String);
}

/**
 * Lucene's feedback for each query: `{ terms: [term, weight][], hits: [doc, score][] }` (docs are line
 * numbers of `texts`), and the run's `{ queries, seconds, cpuSeconds }` (the searches, not the indexing).
 */
export function lucenePrf({ analyzer = "english", texts, queries, k, k1, b, spec }) {
  const classes = compileLucene();
  const dir = mkdtempSync(join(tmpdir(), "tartan-prf-"));
  try {
    writeFileSync(join(dir, "docs.txt"), texts.map(escape).join("\n") + "\n");
    writeFileSync(join(dir, "queries.txt"), queries.map(escape).join("\n") + "\n");
    const out = join(dir, "out.jsonl");
    const stdout = execFileSync("java", ["-cp", `${classes}:${luceneClasspath()}`, "Prf", analyzer, join(dir, "docs.txt"), join(dir, "queries.txt"), String(k), String(k1), String(b), out, ...prfArgs(spec)], { encoding: "utf8", maxBuffer: 1 << 26 });
    const results = readFileSync(out, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    return { results, timing: JSON.parse(stdout.trim().split("\n").pop()) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
