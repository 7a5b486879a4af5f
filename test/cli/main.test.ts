// Every command the CLI registers (src/cli/main.ts) is in the README's command table: top-level commands
// as `tartan NAME`, their subcommands as `NAME SUB` (or `tartan NAME SUB`, or `NAME A\|SUB`) in a row's first cell. Read
// from the compiled CLI's own --help, so a new command fails here until the README lists it.

import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../dist/src/cli/main.js", import.meta.url));
const README = fileURLToPath(new URL("../../README.md", import.meta.url));

/** The subcommands `tartan …path --help` lists (commander's "Commands:" section), without `help`. */
function subcommands(path: string[]): string[] {
  const help = execFileSync(process.execPath, [CLI, ...path, "--help"], { encoding: "utf8" });
  const section = help.split(/^Commands:\n/m)[1];
  if (section === undefined) return [];
  return [...section.matchAll(/^ {2}([a-z][\w-]*)/gm)].map((m) => m[1]).filter((n) => n !== "help");
}

/** The first cells of the README's command table. */
function tableCommands(): string {
  const text = readFileSync(README, "utf8");
  const table = text.split(/^## Commands\n/m)[1].split(/^## /m)[0];
  return table
    .split("\n")
    .filter((l) => l.startsWith("| `"))
    .map((l) => l.split(/(?<!\\)\|/)[1])
    .join("\n");
}

describe("the README's command table", () => {
  it("lists every command and subcommand the CLI registers", () => {
    const cells = tableCommands();
    const missing: string[] = [];
    const top = subcommands([]);
    expect(top).toContain("baseline");
    for (const name of top) {
      if (!cells.includes(`\`tartan ${name}`)) missing.push(`tartan ${name}`);
      for (const sub of subcommands([name])) {
        // `ks get`, `tartan ks get`, or one of alternatives: `tartan runs add\|list\|show`
        const listed = new RegExp(`\`(tartan )?${name} ([\\w-]+\\\\\\|)*${sub}(?![\\w-])`);
        if (!listed.test(cells)) missing.push(`tartan ${name} ${sub}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("option defaults in --help", () => {
  it("are shown in the option's own unit (serve --max-upload <MB>: 256, not the bytes it holds)", () => {
    const help = execFileSync(process.execPath, [CLI, "serve", "--help"], { encoding: "utf8" }).replace(/\s+/g, " ");
    expect(help).toContain("--max-upload <MB> largest request body in megabytes (413 beyond) (default: 256)");
  });
});
