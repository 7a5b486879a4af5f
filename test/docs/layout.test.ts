// The newcomer's maps stay true as folders are added: every src/ folder is named in docs/architecture.md
// (its table) and in the README's development section, and every entry point in the README's Library
// section; and no import cycle runs through src/ (docs/architecture.md: types two modules share sit in the
// lower one).

import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const folders = readdirSync(`${ROOT}src`, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

describe("src/ folders", () => {
  it("each have a row in docs/architecture.md", () => {
    const doc = readFileSync(`${ROOT}docs/architecture.md`, "utf8");
    expect(folders.filter((f) => !doc.includes(`| \`src/${f}\` |`))).toEqual([]);
  });

  it("each have a line in the README's development section", () => {
    const readme = readFileSync(`${ROOT}README.md`, "utf8");
    const dev = readme.split(/^## Development\n/m)[1] ?? "";
    expect(folders.filter((f) => !new RegExp(`^- \`${f}\``, "m").test(dev))).toEqual([]);
    expect(folders.length).toBeGreaterThanOrEqual(16);
  });

  it("with an entry point (package.json exports) are each named in the README's Library section", () => {
    const exports = Object.keys((JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { exports: Record<string, unknown> }).exports);
    const entries = exports.filter((e) => e.startsWith("./") && e !== "./package.json").map((e) => `tartan/${e.slice(2)}`);
    const library = readFileSync(`${ROOT}README.md`, "utf8").split(/^## Library\n/m)[1].split(/^## /m)[0];
    expect(entries.length).toBeGreaterThanOrEqual(15);
    expect(entries.filter((e) => !library.includes(`\`${e}\``))).toEqual([]);
  });
});

/** Every .ts file under `dir`, relative to ROOT. */
function sources(dir: string): string[] {
  return readdirSync(`${ROOT}${dir}`, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? sources(`${dir}/${d.name}`) : d.name.endsWith(".ts") ? [`${dir}/${d.name}`] : [],
  );
}

/** The files of src/ each file imports: static, re-exported, type-only and dynamic imports alike. */
function importGraph(): Map<string, string[]> {
  const files = sources("src");
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(`${ROOT}${f}`, "utf8");
    const targets = new Set<string>();
    for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)"(\.{1,2}\/[^"]+)"/gm)) {
      const t = relative(ROOT, join(ROOT, dirname(f), m[1])).replace(/\.js$/, ".ts");
      if (known.has(t) && t !== f) targets.add(t);
    }
    graph.set(f, [...targets]);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan's algorithm). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("src/ imports", () => {
  it("form no cycle", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(300);
    expect(graph.get("src/records/parquet.ts")).toContain("src/records/lines.ts");
    expect(cycles(graph)).toEqual([]);
    // the check finds a cycle where there is one
    const planted = new Map(graph);
    planted.set("src/records/lines.ts", ["src/records/parquet.ts"]);
    expect(cycles(planted)).toEqual([["src/records/lines.ts", "src/records/parquet.ts"]]);
  });
});

describe("test/ imports", () => {
  it("of src/cli come from test/cli only (the library is tested through its own modules)", () => {
    const offenders = sources("test")
      .filter((f) => !f.startsWith("test/cli/"))
      .filter((f) => /from\s+["'][./]*\/src\/cli\//u.test(readFileSync(`${ROOT}${f}`, "utf8")) || /import\(\s*["'][./]*\/src\/cli\//u.test(readFileSync(`${ROOT}${f}`, "utf8")));
    expect(offenders).toEqual([]);
  });
});
