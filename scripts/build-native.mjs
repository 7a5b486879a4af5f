#!/usr/bin/env node
// Builds tartan's optional native kernels (native/kernels.c, a Node-API addon: the dense index's fast scan
// and RaBitQ first pass with AVX-512BW / AVX2 / portable C paths) with node-gyp, at `npm install` / `npm ci`
// (package.json's "install" script). Offline only: node-gyp is given the headers of the Node.js that runs it
// (`--nodedir`, npm's own setting or the prefix of this node), never a download; with no headers, no
// node-gyp or a failed compile it says so and exits 0, and tartan runs its portable WebAssembly kernels
// (src/retrieval/dense/native.ts). TARTAN_NATIVE=0 skips the build; TARTAN_NATIVE=required makes a failed
// build fail the install.

import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const want = process.env.TARTAN_NATIVE ?? "";
const say = (m) => process.stderr.write(`tartan: ${m}\n`);

function done(ok, why) {
  if (ok) return;
  say(`native kernels not built (${why}); the portable WebAssembly kernels will run`);
  process.exit(want === "required" ? 1 : 0);
}

if (want === "0") {
  say("TARTAN_NATIVE=0: native kernels not built");
  process.exit(0);
}

/** Headers of this Node.js, never downloaded: npm's nodedir setting, else this node's own prefix. */
function nodeDir() {
  const dirs = [process.env.npm_config_nodedir, dirname(dirname(process.execPath))].filter(Boolean);
  return dirs.find((d) => existsSync(join(d, "include", "node", "node_api.h"))) ?? null;
}

/** node-gyp: the one npm gives its scripts, else the one bundled with npm. */
function nodeGyp() {
  const c = [process.env.npm_config_node_gyp];
  if (process.env.npm_execpath) c.push(join(dirname(process.env.npm_execpath), "..", "node_modules", "node-gyp", "bin", "node-gyp.js"));
  c.push(join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"));
  return c.find((p) => p && existsSync(p)) ?? null;
}

const dir = nodeDir();
if (dir === null) done(false, "no Node.js headers beside this node (include/node/node_api.h); set npm's nodedir to them");
const gyp = nodeGyp();
if (gyp === null) done(false, "node-gyp not found");
const r = spawnSync(process.execPath, [gyp, "rebuild", `--nodedir=${dir}`, "--loglevel=warn"], {
  cwd: join(root, "native"),
  stdio: ["ignore", "ignore", "inherit"],
  env: { ...process.env, npm_config_nodedir: dir },
});
done(r.status === 0 && existsSync(join(root, "native", "build", "Release", "tartan_kernels.node")), `node-gyp exited with ${r.status ?? r.signal}`);
say(`native kernels built (native/build/Release/tartan_kernels.node)`);
