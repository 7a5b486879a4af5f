// The web explorer's files (built into dist/web by `npm run build`), read into memory at start. A
// request path is looked up in that table by exact name: it never reaches the file system.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
};

/** One file of the web explorer. */
export interface StaticFile {
  body: Buffer;
  type: string;
}

/** The package root: the nearest directory above this module holding tartan's package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "tartan") return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error("tartan's package.json not found above the server module");
    dir = up;
  }
}

/** Where the built explorer lives. */
export function webDir(): string {
  return join(packageRoot(), "dist", "web");
}

/** URL path (`/index.js`, `/views/search.js`) → file, for every file under `dir` with a known type. */
export function loadStatic(dir = webDir()): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(dir)) return files;
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (TYPES[extname(name)] && !name.endsWith(".map")) files.set(`/${relative(dir, path).split(sep).join("/")}`, { body: readFileSync(path), type: TYPES[extname(name)] });
    }
  };
  walk(dir);
  return files;
}
