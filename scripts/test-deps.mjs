#!/usr/bin/env node
// The system packages the test suite needs beyond `npm ci`, set up by `npm test` itself (its pretest step):
// Debian's chromium (the explorer's browser tests), clickhouse-server (the ClickHouse backend's local
// clusters), python3-onnx and python3-numpy (the bert-onnx encoder's test graphs and NumPy reference),
// liblucene8-java and default-jdk-headless (the Lucene references of bench/lucene/ that tests run: search-time
// BM25 parameters, RM3 and Rocchio).
// As root with apt-get, the missing ones are installed; otherwise it stops naming the command to run, or,
// with TARTAN_TEST_MISSING=skip, lets the tests that need them be skipped (each skip is listed at the end
// of the run, with its reason: vitest.config.ts, test/support/skips.ts). `--check` only prints what is missing.

import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";

/** On PATH (or at one of `paths`). */
function haveBinary(name, paths = []) {
  if (paths.some((p) => existsSync(p))) return true;
  return (process.env.PATH ?? "").split(delimiter).some((d) => d && existsSync(join(d, name)));
}

/** Debian's Lucene 8 jars (liblucene8-java) that bench/lucene/lucene.mjs compiles against. */
function haveLucene8() {
  const dir = "/usr/share/java";
  if (!existsSync(dir)) return false;
  const files = readdirSync(dir);
  return ["lucene-core", "lucene-analyzers-common", "lucene-queryparser"].every((j) => files.some((f) => new RegExp(`^${j}-8[.0-9]*\\.jar$`, "u").test(f)));
}

/** Debian's python3 (where apt installs python3-onnx) can import these modules. */
function pythonImports(modules) {
  const python = process.env.TARTAN_PYTHON ?? (existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3");
  const r = spawnSync(python, ["-c", `import ${modules.join(", ")}`], { stdio: "ignore" });
  return r.status === 0;
}

/** What the tests need: how to tell it is there, the Debian packages that bring it, and how a test file that uses it reads (`uses`). */
export const REQUIREMENTS = [
  { what: "Chromium (test/browser: the explorer)", packages: ["chromium"], uses: /playwright-core/u, present: () => existsSync(process.env.TARTAN_CHROMIUM ?? "/usr/bin/chromium") },
  {
    what: "clickhouse-server (test/backends, test/knowledge: local ClickHouse clusters)",
    packages: ["clickhouse-server", "clickhouse-client"],
    uses: /cluster-fixture|cluster\/process/u,
    present: () => haveBinary("clickhouse-server", [process.env.TARTAN_CLICKHOUSE_SERVER ?? "/usr/sbin/clickhouse-server"]),
  },
  { what: "python3-onnx and python3-numpy (test/retrieval/dense: bert-onnx graphs; test/retrieval/rerank: cross-encoder graphs)", packages: ["python3-onnx", "python3-numpy"], uses: /bert-fixture|cross-encoder-fixture/u, present: () => pythonImports(["onnx", "numpy"]) },
  {
    what: "Lucene 8 and a JDK (test/retrieval/bm25: search-time k1 and b against Lucene built with them; feedback-lucene: the RM3 and Rocchio reference)",
    packages: ["liblucene8-java", "default-jdk-headless"],
    uses: /lucene-fixture|bench\/lucene\/(?:lucene|prf)\.mjs/u,
    present: () => haveBinary("javac") && haveLucene8(),
  },
];

/** The requirements not met on this machine. */
export function missingRequirements() {
  return REQUIREMENTS.filter((r) => !r.present());
}

function isRoot() {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

function main() {
  const check = process.argv.includes("--check");
  const missing = missingRequirements();
  if (missing.length === 0) {
    if (check) console.log("test dependencies: all present");
    return 0;
  }
  const packages = [...new Set(missing.flatMap((r) => r.packages))];
  const command = `apt-get install -y ${packages.join(" ")}`;
  const list = missing.map((r) => `  - ${r.what}: ${r.packages.join(", ")}`).join("\n");
  if (check) {
    console.log(`test dependencies missing:\n${list}\ninstall with: ${command}`);
    return 0;
  }
  if (process.env.TARTAN_TEST_MISSING === "skip") {
    console.error(`test dependencies missing (TARTAN_TEST_MISSING=skip: the tests that need them are skipped and listed at the end):\n${list}`);
    return 0;
  }
  if (!isRoot() || !haveBinary("apt-get")) {
    console.error(
      `test dependencies missing:\n${list}\n` +
        `install them with:  sudo apt-get update && sudo ${command}\n` +
        `or run the tests without them (skipped, and listed at the end):  TARTAN_TEST_MISSING=skip npm test`,
    );
    return 1;
  }
  console.error(`test dependencies missing:\n${list}\ninstalling (as root): apt-get update && ${command}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const update = spawnSync("apt-get", ["update", "-qq"], { stdio: ["ignore", "ignore", "inherit"], env });
  if (update.status !== 0) {
    console.error(`apt-get update failed (status ${update.status}); install by hand: ${command}`);
    return 1;
  }
  const install = spawnSync("apt-get", ["install", "-y", "-qq", ...packages], { stdio: ["ignore", "ignore", "inherit"], env });
  const still = missingRequirements();
  if (install.status !== 0 || still.length > 0) {
    console.error(`apt-get install failed (status ${install.status}); still missing: ${still.map((r) => r.packages.join(", ")).join("; ") || "none"}`);
    return 1;
  }
  console.error("test dependencies installed");
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exit(main());
