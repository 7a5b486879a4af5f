// The newcomer's maps stay true as folders are added: every src/ folder is named in docs/architecture.md
// (its table) and in the README's development section, and every entry point in the README's Library section.

import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
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
