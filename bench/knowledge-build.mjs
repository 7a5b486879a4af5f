// Measures the knowledge-building numbers quoted in docs/knowledge-build.md: sentence splitting
// (tartan's rules against Intl.Segmenter) and passage cutting on the SQuAD v1.1 dev pages, and MediaWiki
// export conversion on test/fixtures/dump/small.xml repeated 1,000 times.
// Usage: npm run bench:knowledge-build

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load, opt, ROOT, SHARED, tartan } from "./lib.mjs";

const { convertDump, cutPassages, readSquadFile, splitSentences, squadToPages } = await tartan("knowledge");
opt({}, "usage: npm run bench:knowledge-build (no options)");
console.log(`load average at the start: ${load()}`);
const squad = readSquadFile(join(SHARED, "data/squad/dev-v1.1.reconstructed.json"));
const contexts = squad.data.flatMap((a) => a.paragraphs.map((p) => p.context));
const chars = contexts.reduce((n, c) => n + c.length, 0);

function time(fn, repeat) {
  fn();
  const t0 = performance.now();
  for (let i = 0; i < repeat; i++) fn();
  return (performance.now() - t0) / repeat;
}

const segmenter = new Intl.Segmenter("en", { granularity: "sentence" });
const segmenterEnds = (t) => {
  const ends = [];
  for (const s of segmenter.segment(t)) {
    const trimmed = s.segment.trimEnd();
    if (trimmed.trim()) ends.push(s.index + trimmed.length);
  }
  return ends;
};
const rulesEnds = (t) => splitSentences(t).map((s) => s.end);
let onlyRules = 0;
let onlySegmenter = 0;
for (const c of contexts) {
  const a = new Set(rulesEnds(c));
  const b = new Set(segmenterEnds(c));
  for (const e of a) if (!b.has(e)) onlyRules++;
  for (const e of b) if (!a.has(e)) onlySegmenter++;
}
for (const [name, f] of [["rules", rulesEnds], ["Intl.Segmenter", segmenterEnds]]) {
  const ms = time(() => contexts.forEach(f), 5);
  const n = contexts.reduce((s, c) => s + f(c).length, 0);
  console.log(`sentences ${name}: ${n} sentences in ${contexts.length} contexts, ${ms.toFixed(1)} ms, ${(chars / 1e3 / ms).toFixed(0)} MB/s`);
}
console.log(`boundaries only the rules find: ${onlyRules}; only Intl.Segmenter finds: ${onlySegmenter}`);

const pages = squadToPages(squad);
for (const unit of ["chunk", "paragraph"]) {
  const passages = pages.flatMap((p) => cutPassages(p, { words: 100, unit }));
  const ms = time(() => pages.forEach((p) => cutPassages(p, { words: 100, unit })), 5);
  const merged = passages.filter((p) => p.sources.length > 1).length;
  const mean = passages.reduce((s, p) => s + p.words, 0) / passages.length;
  console.log(
    `passages ${unit}: ${passages.length} (${merged} merged, mean ${mean.toFixed(1)} words) in ${ms.toFixed(1)} ms, ${Math.round(passages.length / (ms / 1000))} passages/s`,
  );
}

const xml = readFileSync(join(ROOT, "test/fixtures/dump/small.xml"), "utf8");
const head = xml.slice(0, xml.indexOf("  <page>"));
const pageXml = xml.match(/ {2}<page>[\s\S]*?<\/page>\n/g);
const parts = [head];
for (let i = 0; i < 1000; i++)
  for (const p of pageXml) parts.push(p.replace(/<title>(.*?)<\/title>/, `<title>$1 ${i}</title>`).replace(/<id>(\d+)<\/id>/, (_, id) => `<id>${Number(id) * 10000 + i}</id>`));
parts.push("</mediawiki>\n");
const bigDir = mkdtempSync(join(tmpdir(), "tartan-bench-"));
const big = join(bigDir, "big.xml");
writeFileSync(big, parts.join(""));
const t0 = performance.now();
let articles = 0;
for await (const item of convertDump(big)) if (item.kind === "page") articles++;
const s = (performance.now() - t0) / 1000;
const mb = Buffer.byteLength(parts.join("")) / 1e6;
rmSync(bigDir, { recursive: true, force: true });
console.log(`dump: ${articles} articles from ${mb.toFixed(1)} MB of XML in ${s.toFixed(2)} s: ${Math.round(articles / s)} articles/s, ${(mb / s).toFixed(1)} MB/s`);
