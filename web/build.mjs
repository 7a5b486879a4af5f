// Builds the web explorer: compiles web/src with tsc into dist/web (plain ES modules the browser
// loads as they are) and copies index.html and style.css beside them. Run by `npm run build`.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const web = dirname(fileURLToPath(import.meta.url));
const out = join(web, "..", "dist", "web");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
execFileSync(process.execPath, [tsc, "-p", join(web, "tsconfig.json")], { stdio: "inherit" });
for (const f of ["index.html", "style.css"]) copyFileSync(join(web, f), join(out, f));
