// Finds Debian's Lucene 8 jars (liblucene8-java: named when missing, never installed from here) and
// compiles the Java programs of bench/lucene/ once into a temporary directory.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, mkdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";

const JAVA_DIR = "/usr/share/java";
const JARS = ["lucene-core", "lucene-analyzers-common", "lucene-queryparser"];
const here = dirname(fileURLToPath(import.meta.url));

function findJars() {
  if (!existsSync(JAVA_DIR)) return null;
  const files = readdirSync(JAVA_DIR);
  const found = JARS.map((j) => files.find((f) => new RegExp(`^${j}-8[.0-9]*\\.jar$`).test(f)));
  return found.every(Boolean) ? found.map((f) => join(JAVA_DIR, f)) : null;
}

/** The Lucene classpath; throws, naming the Debian package to install, when the jars are missing. */
export function luceneClasspath() {
  const jars = findJars();
  if (!jars) throw new Error("the Lucene anchor needs Lucene 8's jars in /usr/share/java: install Debian's liblucene8-java (apt-get install liblucene8-java, as root)");
  return jars.join(":");
}

/** The Lucene version of the jars found (e.g. "8.7.0"). */
export function luceneVersion() {
  return /lucene-core-([0-9.]+)\.jar/.exec(luceneClasspath())?.[1] ?? "unknown";
}

/**
 * Compiles bench/lucene/*.java (when newer than the classes) and returns the classes directory (one per
 * checkout, so that two checkouts never run each other's classes).
 */
export function compileLucene() {
  const out = join(tmpdir(), `tartan-lucene-classes-${createHash("sha256").update(here).digest("hex").slice(0, 12)}`);
  mkdirSync(out, { recursive: true });
  const sources = readdirSync(here).filter((f) => f.endsWith(".java"));
  const stale = sources.some((f) => {
    const cls = join(out, f.replace(/\.java$/, ".class"));
    return !existsSync(cls) || statSync(cls).mtimeMs < statSync(join(here, f)).mtimeMs;
  });
  if (stale) execFileSync("javac", ["-d", out, "-cp", luceneClasspath(), ...sources.map((f) => join(here, f))], { stdio: "inherit" });
  return out;
}
