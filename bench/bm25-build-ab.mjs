// BM25 build against Lucene's, timed in alternation on a shared machine (issue 26): the build commands of
// `bench/scale.mjs`'s index stage (tartan index build --kind bm25 --units DIR/passages) and of its Lucene
// build (Bm25Bench index, one indexing thread, over the text file scale.mjs's --child-docs exports first;
// the export is not timed, as in scale.mjs), run T L, L T, T L … so neither gets the quieter slices.
// Each build under GNU time: wall and CPU seconds, the load average before and after; then the totals.
// Needs a DIR that scale.mjs's passages stage made (DIR/passages and the store it points to).
//
// usage: node bench/bm25-build-ab.mjs --dir DIR [--rounds 4]   (after npm run build)
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { CLI, load as loadAverages, opt as parseOptions } from "./lib.mjs";
import { compileLucene, luceneClasspath } from "./lucene/lucene.mjs";

const opt = parseOptions({ dir: { type: "string" }, rounds: { type: "string", default: "4" } }, "usage: node bench/bm25-build-ab.mjs --dir DIR [--rounds 4]");
if (!opt.dir) throw new Error("--dir DIR is required (a bench:scale directory with passages/)");
const DIR = opt.dir;
const passages = join(DIR, "passages");
const docs = join(DIR, "lucene-docs.txt");
const out = { tartan: join(DIR, "bm25-ab"), lucene: join(DIR, "lucene-ab") };
if (!existsSync(docs)) {
  const r = spawnSync(process.execPath, [new URL("./scale.mjs", import.meta.url).pathname, "--child-docs", passages, docs], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("exporting the passages for Lucene failed");
}
const cmds = {
  tartan: [process.execPath, [CLI, "index", "build", "--kind", "bm25", "--units", passages, "--out", out.tartan]],
  lucene: ["java", ["-Xms2g", "-Xmx8g", "-cp", `${luceneClasspath()}:${compileLucene()}`, "Bm25Bench", "index", "english", docs, out.lucene, "0.9", "0.4"]],
};
const load = () => loadAverages(2, "/");
const timeFile = join(DIR, "ab.time");
const sum = { tartan: { wall: 0, cpu: 0 }, lucene: { wall: 0, cpu: 0 } };
for (let r = 0; r < Number(opt.rounds); r++) {
  for (const name of r % 2 === 0 ? ["tartan", "lucene"] : ["lucene", "tartan"]) {
    rmSync(out[name], { recursive: true, force: true });
    const before = load();
    const [cmd, args] = cmds[name];
    const res = spawnSync("/usr/bin/time", ["-o", timeFile, "-f", "%e %U %S", cmd, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    if (res.status !== 0) throw new Error(`${name} build failed:\n${String(res.stderr).slice(-2000)}`);
    const [wall, user, sys] = readFileSync(timeFile, "utf8").trim().split("\n").pop().split(" ").map(Number);
    sum[name].wall += wall;
    sum[name].cpu += user + sys;
    console.log(`${new Date().toISOString().slice(11, 19)} round ${r + 1} ${name.padEnd(6)} wall ${wall.toFixed(1)} s, CPU ${(user + sys).toFixed(1)} s, load ${before} → ${load()}`);
  }
}
const { tartan: t, lucene: l } = sum;
console.log(`totals: tartan wall ${t.wall.toFixed(1)} s, CPU ${t.cpu.toFixed(1)} s; Lucene wall ${l.wall.toFixed(1)} s, CPU ${l.cpu.toFixed(1)} s; tartan ÷ Lucene wall ${(t.wall / l.wall).toFixed(2)}, CPU ${(t.cpu / l.cpu).toFixed(2)}`);
for (const p of [...Object.values(out), timeFile]) rmSync(p, { recursive: true, force: true });
