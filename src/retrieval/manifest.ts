// The manifest every index directory carries (`manifest.json`): its kind, unit, unit count, parameters,
// source, tartan version and format version. Every index kind reads and writes it through this module.

import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import type { IndexManifest } from "./types.js";

export const MANIFEST_FILE = "manifest.json";

/** tartan's package version (written into manifests): the nearest package.json above this module (src/ or dist/src/). */
export const TARTAN_VERSION: string = (() => {
  const require = createRequire(import.meta.url);
  for (const rel of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = require(rel) as { name?: string; version?: string };
      if (pkg.name === "tartan" && typeof pkg.version === "string") return pkg.version;
    } catch {
      /* try the next level */
    }
  }
  return "unknown";
})();

/** Reads and checks `dir/manifest.json`. */
export function readManifest(dir: string): IndexManifest {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file)) throw new Error(`${dir}: no ${MANIFEST_FILE} (not an index directory?)`);
  const m = JSON.parse(readFileSync(file, "utf8")) as IndexManifest;
  if (typeof m.kind !== "string" || typeof m.unit !== "string" || typeof m.units !== "number") throw new Error(`${file}: kind, unit and units are required`);
  return m;
}

/** Writes `dir/manifest.json`, filling in the creation time and tartan version. */
export function writeManifest(dir: string, m: Omit<IndexManifest, "created" | "tartanVersion">): IndexManifest {
  const full: IndexManifest = { kind: m.kind, unit: m.unit, units: m.units, params: m.params, source: m.source, created: new Date().toISOString(), tartanVersion: TARTAN_VERSION, formatVersion: m.formatVersion };
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(full, null, 2)}\n`);
  return full;
}
