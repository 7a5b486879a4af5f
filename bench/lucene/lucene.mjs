// Finds Debian's Lucene 8 jars (installing liblucene8-java when run as root and they are missing) and
// compiles the Java programs of bench/lucene/ once into a temporary directory.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, mkdirSync, statSync } from "node:fs";
import { join, dirname } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const JAVA_DIR = "/usr/share/java";
const JARS = ["lucene-core", "lucene-analyzers-common", "lucene-queryparser"];
const here = dirname(fileURLToPath(import.meta.url));

function findJars() {
  if (!existsSync(JAVA_DIR)) return null;
  const files = readdirSync(JAVA_DIR);
  const found = JARS.map((j) => files.find((f) => new RegExp(`^${j}-8[.0-9]*\\.jar$`).test(f)));
  return found.every(Boolean) ? found.map((f) => join(JAVA_DIR, f)) : null;
}

/** The Lucene classpath; installs Debian's liblucene8-java first when missing and running as root. */
export function luceneClasspath() {
  let jars = findJars();
  if (!jars && process.getuid?.() === 0) {
    console.error("installing liblucene8-java (apt-get)…");
    execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
    execFileSync("apt-get", ["install", "-y", "-qq", "liblucene8-java"], { stdio: "inherit" });
    jars = findJars();
  }
  if (!jars) throw new Error("Lucene 8 jars not found in /usr/share/java: apt-get install -y liblucene8-java (as root)");
  return jars.join(":");
}

/** The Lucene version of the jars found (e.g. "8.7.0"). */
export function luceneVersion() {
  return /lucene-core-([0-9.]+)\.jar/.exec(luceneClasspath())?.[1] ?? "unknown";
}

/** Compiles bench/lucene/*.java (when newer than the classes) and returns the classes directory. */
export function compileLucene() {
  const out = join(tmpdir(), "tartan-lucene-classes");
  mkdirSync(out, { recursive: true });
  const sources = readdirSync(here).filter((f) => f.endsWith(".java"));
  const stale = sources.some((f) => {
    const cls = join(out, f.replace(/\.java$/, ".class"));
    return !existsSync(cls) || statSync(cls).mtimeMs < statSync(join(here, f)).mtimeMs;
  });
  if (stale) execFileSync("javac", ["-d", out, "-cp", luceneClasspath(), ...sources.map((f) => join(here, f))], { stdio: "inherit" });
  return out;
}
