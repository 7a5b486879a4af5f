#!/usr/bin/env node
// Benchmark of the JSONL reader's line assembly on gzip input (src/records/jsonl.ts, byteLineBatches):
// the hostile cases of issue 12 (a 20 MB single-line record, a gzip without a newline that must stop at
// --max-line-bytes) and an ordinary many-line file, each against two anchors run in the same process
// tree: `zcat FILE | wc -l` (the decompression floor) and Node's readline over zlib.createGunzip (what a
// plain Node program would do). Every reader runs in its own process under /usr/bin/time (wall, CPU =
// user + sys, peak RSS); the line counts must agree. Usage: npm run bench:jsonl [-- --runs 3]

import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createGunzip, createGzip } from "node:zlib";
import { once } from "node:events";
import { load, opt, OUT as BENCH_OUT, SHARED, tartan } from "./lib.mjs";

const OUT = join(BENCH_OUT, "jsonl");
const SELF = fileURLToPath(import.meta.url);

// --- worker mode: one reader over one file, prints "lines" or "error: message" ---------------------
if (process.argv[2] === "--worker") {
  const [, , , mode, file] = process.argv;
  try {
    let lines = 0;
    if (mode === "tartan") {
      const { byteLineBatches } = await tartan("records");
      for await (const batch of byteLineBatches(file)) lines += batch.length;
    } else if (mode === "readline") {
      const rl = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity });
      for await (const line of rl) if (line.trim() !== "") lines++;
    }
    process.stdout.write(`${lines}\n`);
  } catch (e) {
    process.stdout.write(`error: ${String(e instanceof Error ? e.message : e).slice(0, 200)}\n`);
  }
  process.exit(0);
}

const RUNS = Number(opt({ runs: { type: "string", default: "3" } }, "usage: npm run bench:jsonl [-- --runs N]").runs);

/** A deterministic stream of lowercase words (compresses like text, ~3:1). */
function* words(seed) {
  const vocab = ["the", "of", "knowledge", "intensive", "language", "task", "wikipedia", "page", "answer", "provenance", "retrieval", "paragraph", "question", "entity", "fact", "dialogue", "slot", "filling", "evidence", "claim"];
  let x = seed >>> 0 || 1;
  for (;;) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    yield vocab[x % vocab.length] + ((x >>> 8) % 7 === 0 ? String(x % 1000) : "");
  }
}

/** Writes `parts` (strings, in order) gzip-compressed to `file`. */
async function writeGz(file, parts) {
  const gz = createGzip({ level: 6 });
  const out = createWriteStream(file);
  gz.pipe(out);
  for (const p of parts) if (!gz.write(p)) await once(gz, "drain");
  gz.end();
  await once(out, "close");
}

function* textOf(bytes, seed) {
  const w = words(seed);
  let n = 0;
  let buf = [];
  let bufLen = 0;
  while (n < bytes) {
    const s = `${w.next().value} `;
    buf.push(s);
    bufLen += s.length;
    n += s.length;
    if (bufLen > 1 << 20) {
      yield buf.join("");
      buf = [];
      bufLen = 0;
    }
  }
  if (buf.length) yield buf.join("");
}

async function prepare() {
  mkdirSync(OUT, { recursive: true });
  const cases = [];
  // 1. one 20 MB record on one line (issue 12: 21 s as .gz before linear assembly), plus a short line
  const longLine = join(OUT, "long-line-20mb.jsonl.gz");
  if (!existsSync(longLine))
    await writeGz(longLine, (function* () {
      yield '{"id": "long", "input": "';
      yield* textOf(20e6, 7);
      yield '"}\n{"id": "short", "input": "a question"}\n';
    })());
  cases.push({ name: "one 20 MB line + one short line", file: longLine, expect: 2 });
  // 2. an ordinary file: 40 copies of the real HotpotQA dev set (KILT format), 216,000 lines
  const many = join(OUT, "hotpotqa-dev-x40.jsonl.gz");
  const hotpot = join(SHARED, "data", "kilt-dev", "hotpotqa-dev-kilt.jsonl");
  const hotpotText = readFileSync(hotpot, "utf8");
  const hotpotLines = hotpotText.split("\n").filter((l) => l.trim() !== "").length;
  if (!existsSync(many)) await writeGz(many, Array.from({ length: 40 }, () => hotpotText));
  cases.push({ name: `HotpotQA dev x40 (${(40 * hotpotLines).toLocaleString("en-US")} lines)`, file: many, expect: 40 * hotpotLines });
  // 3. 300 MB without a newline: tartan stops at --max-line-bytes (256 MiB) with file:line
  const noNl = join(OUT, "no-newline-300mb.jsonl.gz");
  if (!existsSync(noNl)) await writeGz(noNl, textOf(300e6, 11));
  cases.push({ name: "300 MB without a newline (tartan stops at 256 MiB)", file: noNl, expect: "line longer than" });
  return cases;
}

/** Runs `argv` under /usr/bin/time; returns stdout, wall s, CPU s, peak RSS MiB. */
function timed(argv) {
  const r = spawnSync("/usr/bin/time", ["-f", "TIME %e %U %S %M", ...argv], { encoding: "utf8", maxBuffer: 1 << 26 });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (!m) throw new Error(`${argv.join(" ")}: no timing (${r.stderr.slice(-300)})`);
  return { out: r.stdout.trim(), wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMiB: Number(m[4]) / 1024 };
}

const READERS = {
  "tartan byteLineBatches": (f) => ["node", SELF, "--worker", "tartan", f],
  "node readline + zlib": (f) => ["node", "--max-old-space-size=4096", SELF, "--worker", "readline", f],
  "zcat | wc -l": (f) => ["sh", "-c", `zcat '${f}' | wc -l`],
};

const cases = await prepare();
console.log(`load average at start: ${load()}; best of ${RUNS} (lowest wall)`);
console.log("| case | reader | lines | wall s | CPU s | peak RSS MiB | wall vs zcat | wall vs readline |");
console.log("|---|---|---|---|---|---|---|---|");
for (const c of cases) {
  const best = {};
  for (const [name, argv] of Object.entries(READERS)) {
    for (let r = 0; r < RUNS; r++) {
      const t = timed(argv(c.file));
      if (!best[name] || t.wall < best[name].wall) best[name] = t;
    }
  }
  const tartan = best["tartan byteLineBatches"];
  if (typeof c.expect === "number" && tartan.out !== String(c.expect)) throw new Error(`${c.name}: tartan read ${tartan.out} lines, expected ${c.expect}`);
  if (typeof c.expect === "string" && !tartan.out.includes(c.expect)) throw new Error(`${c.name}: tartan printed ${tartan.out}, expected an error with "${c.expect}"`);
  for (const [name, t] of Object.entries(best)) {
    const vsZcat = (t.wall / best["zcat | wc -l"].wall).toFixed(2);
    const vsRl = (t.wall / best["node readline + zlib"].wall).toFixed(2);
    const label = name.replace("|", "\\|");
    const lines = t.out.startsWith("error:") ? t.out.replace(/^error: .*?:\d+: /, "stops: ").slice(0, 60) : t.out;
    console.log(`| ${c.name} (${(statSync(c.file).size / 1e6).toFixed(1)} MB .gz) | ${label} | ${lines} | ${t.wall.toFixed(2)} | ${t.cpu.toFixed(2)} | ${t.rssMiB.toFixed(0)} | ${vsZcat}x | ${vsRl}x |`);
  }
}
console.log(`load average at end: ${load()}`);
