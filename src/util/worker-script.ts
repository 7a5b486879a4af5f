// The compiled JavaScript of a module that runs as a worker thread: workers cannot run the TypeScript
// sources that tests import, so a module under src/ maps to its twin under dist/src/.

import { existsSync } from "node:fs";
import { dirname, extname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * The URL to start a Worker with for the module at `moduleUrl` (its `import.meta.url`), or for its
 * sibling module `sibling` (a name without extension) when given.
 */
export function workerScript(moduleUrl: string, sibling?: string): URL {
  let here = fileURLToPath(moduleUrl);
  if (sibling !== undefined) here = join(dirname(here), `${sibling}${extname(here)}`);
  if (here.endsWith(".js")) return pathToFileURL(here);
  const at = Math.max(here.lastIndexOf(`${sep}src${sep}`), here.lastIndexOf("/src/"));
  const js = at < 0 ? here : `${here.slice(0, at)}${sep}dist${here.slice(at).replace(/\.ts$/, ".js")}`;
  if (js === here || !existsSync(js)) throw new Error(`worker script ${js} missing: run npm run build`);
  return pathToFileURL(js);
}
