// A deterministic generator of live-index update sequences for bench:live-lucene (issue 40), over the synthetic
// KILT-shaped pages of bench:scale (src/knowledge/synthetic.ts, KILT_SHAPE): a base collection of --base
// pages, then --ops page operations drawn by one seeded stream — "add" (a page not yet in the index, the
// next of the synthetic stream), "replace" (a live page's id given the next synthetic page's content) and
// "delete" (a live page) — in the proportions --mix add,replace,delete. Within a commit window of
// --commit-every operations no page is touched twice, so a window is one `tartan index update` (its add,
// replace and delete files) and M operations of Lucene's IndexWriter alike. The same arguments always give
// the same files.
//   node bench/live-gen.mjs --base 20000 --ops 20000 --commit-every 1000 [--mix 0.4,0.4,0.2] [--seed 1] --out DIR
// writes DIR/base.jsonl (KILT pages), DIR/ops.jsonl ({"op", "id", "page"?}: the page for add and replace),
// DIR/live.jsonl (the live pages after every operation, in the order a fresh build would take them: base
// order, replaced pages in place, added pages after), and prints statistics.

import { createWriteStream, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tartan } from "./lib.mjs";
import { stream } from "./impact-gen.mjs";

/** Writes the base, the operations and the final live pages into `out`; returns statistics. */
export async function generateLive({ base, ops, commitEvery, mix = [0.4, 0.4, 0.2], seed = 1, out }) {
  const { syntheticPages, KILT_SHAPE } = await tartan("knowledge");
  mkdirSync(out, { recursive: true });
  const pages = syntheticPages({ pages: base + ops, seed, ...KILT_SHAPE });
  const rand = stream(seed * 104729 + base + ops);
  const write = (s, line) => (s.write(line) ? null : new Promise((r) => s.once("drain", r)));
  const close = (s) => new Promise((r) => s.end(r));
  const baseOut = createWriteStream(join(out, "base.jsonl"));
  // The live collection in fresh-build order: id → page, a Map keeps insertion order (a replace keeps its place).
  const live = new Map();
  const ids = []; // live ids, for drawing (swap-remove on delete)
  const at = new Map(); // id → index in ids
  const addLive = (p) => {
    live.set(String(p.wikipedia_id), p);
    at.set(String(p.wikipedia_id), ids.length);
    ids.push(String(p.wikipedia_id));
  };
  for (let i = 0; i < base; i++) {
    const p = pages.next().value;
    addLive(p);
    await write(baseOut, `${JSON.stringify(p)}\n`);
  }
  await close(baseOut);
  const opsOut = createWriteStream(join(out, "ops.jsonl"));
  const counts = { add: 0, replace: 0, delete: 0 };
  let window = new Set();
  for (let i = 0; i < ops; i++) {
    if (i % commitEvery === 0) window = new Set();
    const u = rand();
    let op = u < mix[0] ? "add" : u < mix[0] + mix[1] ? "replace" : "delete";
    // A live page not touched in this window (an add when there is none).
    let id = null;
    if (op !== "add") {
      for (let tries = 0; tries < 64 && id === null; tries++) {
        const c = ids[Math.floor(rand() * ids.length)];
        if (c !== undefined && !window.has(c)) id = c;
      }
      if (id === null) op = "add";
    }
    const fresh = op === "delete" ? null : pages.next().value;
    if (op === "add") {
      id = String(fresh.wikipedia_id);
      addLive(fresh);
      await write(opsOut, `${JSON.stringify({ op, id, page: fresh })}\n`);
    } else if (op === "replace") {
      const page = { ...fresh, wikipedia_id: id };
      live.set(id, page);
      await write(opsOut, `${JSON.stringify({ op, id, page })}\n`);
    } else {
      live.delete(id);
      const j = at.get(id);
      const last = ids.pop();
      if (last !== id) {
        ids[j] = last;
        at.set(last, j);
      }
      at.delete(id);
      await write(opsOut, `${JSON.stringify({ op, id })}\n`);
    }
    window.add(id);
    counts[op]++;
  }
  await close(opsOut);
  const liveOut = createWriteStream(join(out, "live.jsonl"));
  for (const p of live.values()) await write(liveOut, `${JSON.stringify(p)}\n`);
  await close(liveOut);
  return { base, ops, commitEvery, commits: Math.ceil(ops / commitEvery), mix, seed, ...counts, livePages: live.size };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name, d) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? d : process.argv[i + 1];
  };
  const s = await generateLive({
    base: Number(arg("base", 20_000)),
    ops: Number(arg("ops", 20_000)),
    commitEvery: Number(arg("commit-every", 1000)),
    mix: arg("mix", "0.4,0.4,0.2").split(",").map(Number),
    seed: Number(arg("seed", 1)),
    out: arg("out", "bench/out/live"),
  });
  console.log(JSON.stringify(s));
}
