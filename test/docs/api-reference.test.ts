// The API reference (`npm run docs:api`, typedoc over every entry point) builds without a warning:
// typedoc.json sets treatWarningsAsErrors, so an exported name without a doc comment, a type an entry
// point uses but does not export, or a broken {@link} fails this test, and no name may be silenced
// through typedoc.json's intentionallyNotExported/intentionallyNotDocumented lists. Runs typedoc with --emit none
// (checks only, writes nothing; about 12 CPU-seconds).

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const TYPEDOC = fileURLToPath(new URL("../../node_modules/typedoc/bin/typedoc", import.meta.url));

describe("API reference", () => {
  it("typedoc.json treats warnings as errors", () => {
    const config = JSON.parse(readFileSync(`${ROOT}/typedoc.json`, "utf8")) as { treatWarningsAsErrors?: boolean; validation?: Record<string, boolean>; intentionallyNotExported?: string[]; intentionallyNotDocumented?: string[] };
    expect(config.treatWarningsAsErrors).toBe(true);
    expect(config.validation).toEqual({ notExported: true, invalidLink: true, notDocumented: true });
    // No name is silenced: every type a signature uses is exported, every exported name documented.
    expect(config.intentionallyNotExported ?? []).toEqual([]);
    expect(config.intentionallyNotDocumented ?? []).toEqual([]);
  });

  it("typedoc checks every entry point without a warning", () => {
    const r = spawnSync(process.execPath, [TYPEDOC, "--emit", "none"], { cwd: ROOT, encoding: "utf8", timeout: 600_000 });
    const out = `${r.stdout}${r.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
    expect(out.split("\n").filter((l) => l.includes("[warning]") || l.includes("[error]"))).toEqual([]);
    expect(r.status).toBe(0);
  }, 660_000);
});
