// `tartan index pull` under hostile servers and killed runs (issue 39, third round), against a loopback
// node:http server: a kept archive used only for the URL and checksum it was downloaded for, HTML pages
// served with 200 in place of the archive, redirects (to http(s) only, the final URL named), a hard
// link at the archive's .part, and the temporary directories of killed pulls removed by the next pull
// or by `tartan index verify`.

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { writeJsonl } from "../../src/records/jsonl.js";
import { syntheticPages } from "../../src/knowledge/synthetic.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { sealIndex } from "../../src/retrieval/manifest.js";
import { archiveCachePath, archiveRecordPath, packArtefact, pullArtefact } from "../../src/artefacts/index.js";
import { startFileServer, type FileServer } from "../fixtures/file-server.js";
import { runCli } from "../fixtures/run-cli.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
let root: string;
let A: Buffer;
let B: Buffer;
let server: FileServer | null = null;
const children: ChildProcess[] = [];

/** A packed BM25 index of `pages` synthetic pages (seed `seed`): the archive's bytes. */
async function packed(name: string, pages: number, seed: number): Promise<Buffer> {
  const src = join(root, `${name}.jsonl`);
  await writeJsonl(src, [...syntheticPages({ pages, seed })]);
  const dir = join(root, name);
  await buildBm25Index(unitsFromPagesFile(src, { unit: "page" }), dir, { unit: "page", source: src });
  sealIndex(dir);
  await packArtefact(dir, { out: join(root, `${name}.tar`) });
  return readFileSync(join(root, `${name}.tar`));
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "tartan-pullh-"));
  A = await packed("a", 12, 1);
  B = await packed("b", 20, 2);
}, 60_000);
afterEach(async () => {
  await server?.close();
  server = null;
});
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

/** The units count of the index pulled into `dir`. */
const unitsIn = (dir: string) => (JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { units: number }).units;

/** A process that has exited: its pid names no running process. */
async function deadPid(): Promise<number> {
  const c = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((ok) => c.on("exit", ok));
  return c.pid!;
}

describe("a kept archive", () => {
  it("is used again only for the URL and checksum it was downloaded for; --force with another URL downloads that URL", async () => {
    server = await startFileServer({ "a.tar": A, "b.tar": B });
    const out = join(root, "kept");
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);
    const first = await pullArtefact(`${server.url}/a.tar`, { out, keepArchive: true, log });
    expect(first.archive.downloaded).toBe(true);
    expect(JSON.parse(readFileSync(archiveRecordPath(out), "utf8"))).toEqual({ url: `${server.url}/a.tar`, sha256: sha(A) });
    expect(unitsIn(out)).toBe(12);
    // the same URL: the kept archive, nothing asked
    const same = await pullArtefact(`${server.url}/a.tar`, { out, force: true, keepArchive: true, log });
    expect(same.archive.downloaded).toBe(false);
    expect(server.ranges.length).toBe(1);
    // another URL: downloaded
    const other = await pullArtefact(`${server.url}/b.tar`, { out, force: true, keepArchive: true, log });
    expect(other.archive).toMatchObject({ downloaded: true, sha256: sha(B) });
    expect(unitsIn(out)).toBe(20);
    expect(lines).toEqual([`${archiveCachePath(out)}: kept archive removed (it was downloaded from ${server.url}/a.tar), downloading ${server.url}/b.tar`]);
    // the same URL republished with other bytes and asked for by their checksum: downloaded again
    server.files.set("b.tar", A);
    const again = await pullArtefact(`${server.url}/b.tar`, { out, force: true, sha256: sha(A), log });
    expect(again.archive).toMatchObject({ downloaded: true, sha256: sha(A) });
    expect(unitsIn(out)).toBe(12);
    expect(lines[1]).toBe(`${archiveCachePath(out)}: kept archive removed (its sha256 is ${sha(B)}, expected ${sha(A)}), downloading ${server.url}/b.tar`);
    // not kept this time: the archive and its record are gone
    expect(existsSync(archiveCachePath(out)) || existsSync(archiveRecordPath(out))).toBe(false);
    // a kept archive without a record (from an older tartan, or planted) is not trusted
    writeFileSync(archiveCachePath(out), B);
    const unrecorded = await pullArtefact(`${server.url}/b.tar`, { out, force: true, log });
    expect([unrecorded.archive.downloaded, unitsIn(out)]).toEqual([true, 12]);
  });
});

describe("what the server sends in place of the archive", () => {
  it("an HTML page served with 200 is refused (by its Content-Type, or by not being a tar archive), naming the URL; --out is not made", async () => {
    const page = Buffer.from("<!DOCTYPE html><html><body>Sign in to the network</body></html>\n");
    server = await startFileServer({ "a.tar": page }, { headers: { "Content-Type": "text/html" } });
    const out = join(root, "never");
    const url = `${server.url}/a.tar`;
    await expect(pullArtefact(url, { out })).rejects.toThrow(`${url} → ${archiveCachePath(out)}: ${url} answered HTTP 200 with an HTML page (Content-Type: text/html), not the file: an error or login page? Nothing written`);
    await server.close();
    server = await startFileServer({ "a.tar": page });
    const url2 = `${server.url}/a.tar`;
    await expect(pullArtefact(url2, { out })).rejects.toThrow(`${url2} → ${archiveCachePath(out)}: not a tar archive: no "ustar" at byte 257; it starts with ${JSON.stringify(page.toString("latin1", 0, 60))} (it looks like an HTML page: an error or login page?): refused, not installed; ${archiveCachePath(out)}.part removed`);
    expect(readdirSync(root).filter((n) => n.startsWith(".never"))).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it("redirects are followed to http(s) only, and the final URL is named in the CLI's line", async () => {
    writeFileSync(join(root, "local.tar"), A);
    server = await startFileServer({ "a.tar": A }, { redirects: { "old.tar": "a.tar", "to-file.tar": pathToFileURL(join(root, "local.tar")).href } });
    const out = join(root, "redirected");
    const r = await runCli(["index", "pull", `${server.url}/old.tar`, "--out", out]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`${server.url}/old.tar (redirected to ${server.url}/a.tar) → ${out}: bm25 page index of 12 units`);
    const bad = await runCli(["index", "pull", `${server.url}/to-file.tar`, "--out", join(root, "never")]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`${server.url}/to-file.tar redirected to ${pathToFileURL(join(root, "local.tar")).href}: refused (only http and https redirects are followed)`);
    expect(existsSync(join(root, "never"))).toBe(false);
  }, 30_000);

  it("a hard link at the archive's .part is refused, never written through", async () => {
    server = await startFileServer({ "a.tar": A });
    const out = join(root, "linked");
    const victim = join(root, "victim");
    writeFileSync(victim, "keep");
    linkSync(victim, `${archiveCachePath(out)}.part`);
    await expect(pullArtefact(`${server.url}/a.tar`, { out })).rejects.toThrow(`${archiveCachePath(out)}.part is a hard link (2 names for one file): refusing to write through it`);
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(existsSync(out)).toBe(false);
  });
});

describe("temporary directories of killed pulls", () => {
  it("are removed by the next pull once their process is gone (a live one's are kept): no leak grows with every kill", async () => {
    const out = join(root, "killed");
    const stale = () => readdirSync(root).filter((n) => n.startsWith(".killed.pulling-")).sort();
    for (let round = 1; round <= 3; round++) {
      // a process that made its temporary directory and was killed mid-unpack
      const child = spawn(process.execPath, ["-e", `const fs=require("fs");const d=${JSON.stringify(join(root, ".killed.pulling-"))}+process.pid;fs.mkdirSync(d);fs.writeFileSync(d+"/bm25.postings","x".repeat(4096));console.log("ready");setInterval(()=>{},1000)`], { stdio: ["ignore", "pipe", "ignore"] });
      await new Promise((ok) => child.stdout!.once("data", ok));
      expect(stale()).toEqual([`.killed.pulling-${child.pid}`]);
      child.kill("SIGKILL");
      await new Promise((ok) => child.on("exit", ok));
      const lines: string[] = [];
      await pullArtefact(join(root, "a.tar"), { out, force: true, log: (l) => lines.push(l) });
      expect(lines).toEqual([`removed ${join(root, `.killed.pulling-${child.pid}`)}, left by a pull that was killed`]);
      expect(stale()).toEqual([]);
    }
    // a pull still running keeps its directory
    const live = spawn(process.execPath, ["-e", "setInterval(()=>{},1000)"], { stdio: "ignore" });
    children.push(live);
    mkdirSync(join(root, `.killed.pulling-${live.pid}`));
    await pullArtefact(join(root, "a.tar"), { out, force: true });
    expect(stale()).toEqual([`.killed.pulling-${live.pid}`]);
    rmSync(join(root, `.killed.pulling-${live.pid}`), { recursive: true });
  });

  it("a pull killed between its two renames: the next one puts the old directory back; `tartan index verify` removes the stale directories too", async () => {
    const out = join(root, "swapped");
    await pullArtefact(join(root, "a.tar"), { out });
    const dead = await deadPid();
    const old = join(root, `.swapped.old-${dead}`);
    const { renameSync } = await import("node:fs");
    renameSync(out, old); // as the killed pull left it: DIR moved aside, the new one not yet in place
    mkdirSync(join(root, `.swapped.pulling-${dead}`));
    await expect(pullArtefact(join(root, "a.tar"), { out })).rejects.toThrow(`${out}: already exists: give --force to replace it`);
    expect(unitsIn(out)).toBe(12);
    expect(existsSync(old) || existsSync(join(root, `.swapped.pulling-${dead}`))).toBe(false);
    // verify: a stale temporary directory beside the index is removed and said
    const dead2 = await deadPid();
    mkdirSync(join(root, `.swapped.pulling-${dead2}`));
    const v = await runCli(["index", "verify", out]);
    expect(v.status).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`^${out.replace(/[.]/gu, "\\.")}: OK \\(`, "u"));
    expect(v.stderr).toBe(`tartan: removed ${join(root, `.swapped.pulling-${dead2}`)}, left by a pull that was killed\n`);
    expect(existsSync(join(root, `.swapped.pulling-${dead2}`))).toBe(false);
  }, 30_000);
});
