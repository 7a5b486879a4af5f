// Runs tartan's BM25 analyzers and Lucene 8.7's (Analyze.java) on the same lines and reports every
// line where the terms differ: all SQuAD v1.1 dev titles, paragraphs and questions, and probe strings
// around every Basic Multilingual Plane code point and the emoji/supplementary ranges.
// usage: npm run bench:lucene-analyzers [-- english|lowercase]
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileLucene, luceneClasspath } from "./lucene.mjs";
import { opt, tartan } from "../lib.mjs";

const { getAnalyzer } = (await tartan("retrieval")).bm25;
const name = opt({}, "usage: npm run bench:lucene-analyzers [-- english|lowercase]", { positionals: true }).positionals[0] ?? "english";
const analyzer = getAnalyzer(name);
const squad = JSON.parse(readFileSync(new URL("../../../shared/data/squad/dev-v1.1.reconstructed.json", import.meta.url), "utf8"));
const lines = [];
const clean = (s) => s.replace(/[\r\n\u0085\u2028\u2029]/g, " ");
for (const a of squad.data) {
  lines.push(clean(a.title.replace(/_/g, " ")));
  for (const p of a.paragraphs) {
    lines.push(clean(p.context));
    for (const q of p.qas) lines.push(clean(q.question));
  }
}
const textLines = lines.length;
const probeCps = [];
for (let cp = 0x80; cp < 0x10000; cp++) if (cp < 0xd800 || cp > 0xdfff) probeCps.push(cp);
for (const [lo, hi] of [[0x10000, 0x10fff], [0x1d400, 0x1d7ff], [0x1f000, 0x1faff], [0x20000, 0x200ff], [0xe0000, 0xe007f]]) for (let cp = lo; cp <= hi; cp++) probeCps.push(cp);
const forms = (c) => [c, `a${c}a`, `1${c}1`, `${c}a`, `a${c}`, `${c}${c}`, `${c}1`, `\u05d0${c}\u05d0`, `\u30ab${c}\u30ab`];
for (const cp of probeCps) {
  const c = String.fromCodePoint(cp);
  if (/[\r\n\u0085\u2028\u2029]/.test(c)) continue;
  lines.push(...forms(c));
}
lines.push(
  "👨\u200d👩\u200d👧\u200d👦 family", "🇺🇸🇫🇷🇩 flags", "#️⃣ *⃣ 1️⃣ keycaps", "🏴\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f} tag",
  "👍🏽 a👍 👍a ©2020 ❤️ ☺️ ☺ 👍🏽\u0301 👍\u0301🏽 😀\u200da", "don't U.S.A. I.B.M's O'Neil's the dogs' bone 3.14.15 1,2,3 ,5 a-b-c x@y.z",
  "İSTANBUL ΟΔΟΣ ΣΑΣ straße ǅemal ﬁne", "x".repeat(300), "a".repeat(254) + "'s", "a'".repeat(200), "1".repeat(600) + " b", "_".repeat(10) + "a", "\u05d0'", "\u05d0\"\u05d1", "\u30ab_a", "a_\u30ab", "a\u30ab");

const dir = mkdtempSync(join(tmpdir(), "tartan-analyze-"));
const input = join(dir, "in.txt");
writeFileSync(input, lines.join("\n") + "\n");
const classes = compileLucene();
const out = execFileSync("java", ["-cp", `${luceneClasspath()}:${classes}`, "Analyze", name], { input: readFileSync(input), maxBuffer: 1 << 30 }).toString("utf8");
const expected = out.split("\n");
let diffText = 0;
let diffProbe = 0;
const examples = [];
const badCps = new Set();
for (let i = 0; i < lines.length; i++) {
  const want = expected[i] ?? "";
  const got = analyzer.analyze(lines[i]).join("\t");
  if (want !== got) {
    if (i < textLines) diffText++;
    else {
      diffProbe++;
      badCps.add(lines[i].codePointAt(lines[i].length > 1 && /^[a1\u05d0\u30ab]/.test(lines[i]) ? 1 : 0));
    }
    if (examples.length < 40) examples.push({ line: lines[i].slice(0, 120), lucene: want.slice(0, 200), tartan: got.slice(0, 200) });
  }
}
console.log(JSON.stringify({ analyzer: name, textLines, textDiffering: diffText, probeLines: lines.length - textLines, probeDiffering: diffProbe, codePointsDiffering: badCps.size }, null, 1));
for (const e of examples) console.log(JSON.stringify(e));
const hex = [...badCps].sort((a, b) => a - b).map((c) => c.toString(16));
console.log("code points:", hex.slice(0, 400).join(" "));
