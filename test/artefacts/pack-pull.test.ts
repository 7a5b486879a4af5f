// Prebuilt artefacts: pack → pull round trips (a BM25 index, a knowledge-source store), and pulls that
// must be refused naming what is wrong: truncated, tampered, wrong version, planted links, paths
// escaping the directory; a pull from a loopback URL, by catalogue name, and resumed after a kill.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeJsonl } from "../../src/records/jsonl.js";
import { syntheticPages } from "../../src/knowledge/synthetic.js";
import { ingest } from "../../src/knowledge/ingest.js";
import { KnowledgeSource } from "../../src/knowledge/store.js";
import { buildBm25Index } from "../../src/retrieval/bm25/build.js";
import { openBm25 } from "../../src/retrieval/bm25/search.js";
import { unitsFromPagesFile } from "../../src/retrieval/sources.js";
import { sealIndex } from "../../src/retrieval/manifest.js";
import { packArtefact, pullArtefact, readCatalogue, loadCatalogue, findArtefact, addToCatalogue, TarReader, tarHeader, tarPadding, TAR_END, type ArtefactManifest } from "../../src/artefacts/index.js";
import { startFileServer, type FileServer } from "../fixtures/file-server.js";
import { CLI, runCli } from "../fixtures/run-cli.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
let root: string;
let index: string;
let ks: string;
let archive: string;


/** The entries of an archive: name, type, data. */
function entries(file: string): { name: string; type: string; data: Buffer }[] {
  const r = new TarReader(file);
  const out: { name: string; type: string; data: Buffer }[] = [];
  for (let e = r.next(); e !== null; e = r.next()) {
    const parts: Buffer[] = [];
    r.read(e, (c) => parts.push(Buffer.from(c)));
    out.push({ name: e.name, type: e.type, data: Buffer.concat(parts) });
  }
  r.close();
  return out;
}

/** Writes entries as a tar archive. */
function writeTar(file: string, list: { name: string; type?: string; link?: string; data: Buffer }[]): void {
  const bufs: Buffer[] = [];
  for (const e of list) bufs.push(tarHeader(e.name, e.data.length, e.type ?? "0", e.link ?? ""), e.data, tarPadding(e.data.length));
  bufs.push(TAR_END);
  writeFileSync(file, Buffer.concat(bufs));
}

/** A copy of the test archive with its manifest changed by `edit` and its entries by `list`. */
function variant(name: string, edit: (m: ArtefactManifest) => void, list?: (e: { name: string; type?: string; link?: string; data: Buffer }[]) => typeof e): string {
  const es = entries(archive);
  const m = JSON.parse(es[0].data.toString()) as ArtefactManifest;
  edit(m);
  let out: { name: string; type?: string; link?: string; data: Buffer }[] = [{ name: es[0].name, data: Buffer.from(JSON.stringify(m)) }, ...es.slice(1)];
  if (list) out = list(out);
  const file = join(root, name);
  writeTar(file, out);
  return file;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "tartan-art-"));
  const pages = join(root, "pages.jsonl");
  await writeJsonl(pages, [...syntheticPages({ pages: 30, seed: 3 })]);
  index = join(root, "bm25");
  await buildBm25Index(unitsFromPagesFile(pages, { unit: "paragraph" }), index, { unit: "paragraph", source: pages });
  sealIndex(index);
  ks = join(root, "ks");
  await ingest(pages, { out: ks, force: true, workers: 0 });
  archive = join(root, "bm25.tar");
  await packArtefact(index, { out: archive });
}, 60_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("pack and pull", () => {
  it("round-trips a BM25 index: same files, same rankings, manifest with sizes, sha256 and versions", async () => {
    const r = await packArtefact(index, { out: join(root, "again.tar") });
    const files = readdirSync(index).sort();
    expect(r.manifest.files.map((f) => f.path)).toEqual(files);
    for (const f of r.manifest.files) {
      const data = readFileSync(join(index, f.path));
      expect([f.bytes, f.sha256]).toEqual([data.length, sha(data)]);
    }
    expect(r.manifest.kind).toBe("index");
    expect(r.manifest.index).toMatchObject({ kind: "bm25", unit: "paragraph", formatVersion: 2 });
    expect(r.manifest.builtBy).toEqual({ tartan: "0.1.0", node: process.version, indexTartan: "0.1.0" });
    expect(r.bytes).toBe(statSync(join(root, "again.tar")).size);
    expect(r.sha256).toBe(sha(readFileSync(join(root, "again.tar"))));
    const out = join(root, "pulled");
    const p = await pullArtefact(join(root, "again.tar"), { out, sha256: r.sha256 });
    expect(p.files).toBe(files.length);
    for (const f of files) expect(readFileSync(join(out, f)).equals(readFileSync(join(index, f)))).toBe(true);
    const [a, b] = [await openBm25(index), await openBm25(out)];
    expect(await b.search("the history of", 10)).toEqual(await a.search("the history of", 10));
    await a.close();
    await b.close();
    expect(readdirSync(root).filter((n) => n.startsWith(".pulled"))).toEqual([]);
  });

  it("packs an index the library built without sealing it (its files' sha256 in the archive's manifest)", async () => {
    const unsealed = join(root, "unsealed");
    await buildBm25Index(unitsFromPagesFile(join(root, "pages.jsonl"), { unit: "page" }), unsealed, { unit: "page" });
    const r = await packArtefact(unsealed, { out: join(root, "unsealed.tar") });
    expect(r.manifest.index).toMatchObject({ kind: "bm25", unit: "page", units: 30 });
    const p = await pullArtefact(join(root, "unsealed.tar"), { out: join(root, "unsealed-pulled"), sha256: r.sha256 });
    expect(p.files).toBe(readdirSync(unsealed).length);
  });

  it("round-trips a knowledge-source store (an empty journal left out)", async () => {
    const r = await packArtefact(ks, { out: join(root, "ks.tar") });
    expect(r.manifest.kind).toBe("knowledge-source");
    expect(r.manifest.store).toEqual({ format: "tartan-ks/1", pages: 30 });
    expect(r.manifest.files.map((f) => f.path)).toEqual(["ks.sqlite"]);
    const out = join(root, "ks-pulled");
    await pullArtefact(join(root, "ks.tar"), { out });
    const s = KnowledgeSource.open(out);
    expect(s.meta.pages).toBe(30);
    s.close();
  });

  it("refuses an existing --out unless forced, and then replaces it only after verifying", async () => {
    const out = join(root, "exists");
    mkdirSync(out);
    writeFileSync(join(out, "old"), "x");
    await expect(pullArtefact(archive, { out })).rejects.toThrow(`${out}: already exists: give --force to replace it (it is replaced only once the artefact is verified)`);
    await pullArtefact(archive, { out, force: true });
    expect(existsSync(join(out, "old"))).toBe(false);
    expect(existsSync(join(out, "manifest.json"))).toBe(true);
  });

  it("refuses a truncated archive, naming where it ends", async () => {
    const r = new TarReader(archive);
    const list = [];
    for (let e = r.next(); e !== null; e = r.next()) list.push(e);
    r.close();
    const last = list[list.length - 1];
    const cut = join(root, "cut.tar");
    copyFileSync(archive, cut);
    truncateSync(cut, last.dataOffset + 10);
    const out = join(root, "never");
    await expect(pullArtefact(cut, { out })).rejects.toThrow(`${cut}: truncated: the archive ends inside ${last.name} (10 of ${last.size.toLocaleString("en-US")} bytes)`);
    copyFileSync(archive, cut);
    truncateSync(cut, statSync(archive).size - 1024);
    await expect(pullArtefact(cut, { out })).rejects.toThrow(`${cut}: truncated: the archive ends at byte ${statSync(archive).size - 1024} without its end-of-archive blocks`);
    truncateSync(cut, list[2].dataOffset - 512);
    await expect(pullArtefact(cut, { out })).rejects.toThrow(`${cut}: truncated: the archive ends at byte ${list[2].dataOffset - 512} without its end-of-archive blocks`);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a tampered file (sha256 named) and a tampered archive against its sha256", async () => {
    const r = new TarReader(archive);
    r.next();
    const e = r.next()!;
    r.close();
    const bad = join(root, "tampered.tar");
    const data = readFileSync(archive);
    data[e.dataOffset + 3] ^= 0xff;
    writeFileSync(bad, data);
    const changed = data.subarray(e.dataOffset, e.dataOffset + e.size);
    const original = readFileSync(join(index, e.name));
    const out = join(root, "never");
    await expect(pullArtefact(bad, { out })).rejects.toThrow(`${bad}: tampered: ${e.name} has sha256 ${sha(changed)}, the manifest says ${sha(original)}`);
    const whole = sha(readFileSync(archive));
    await expect(pullArtefact(bad, { out, sha256: whole })).rejects.toThrow(`${bad}: sha256 ${sha(data)}, expected ${whole} (tampered, truncated or a different archive)`);
    const resized = variant("resized.tar", (m) => (m.files[0].bytes += 1));
    await expect(pullArtefact(resized, { out })).rejects.toThrow(`tampered: ${e.name} is ${e.size.toLocaleString("en-US")} bytes in the archive, the manifest says ${(e.size + 1).toLocaleString("en-US")}`);
    const extra = variant("extra.tar", () => {}, (l) => [...l, { name: "extra.bin", data: Buffer.from("x") }]);
    await expect(pullArtefact(extra, { out })).rejects.toThrow(`${extra}: entry "extra.bin" is not in the manifest: refused`);
    expect(existsSync(out)).toBe(false);
  });

  it("refuses a wrong-version archive, naming the field and the versions", async () => {
    const out = join(root, "never");
    const v2 = variant("v2.tar", (m) => (m.formatVersion = 2));
    await expect(pullArtefact(v2, { out })).rejects.toThrow(`${v2}: tartan-artefact.json: formatVersion is 2: wrong version, this tartan reads artefacts of version 1 (built by tartan 0.1.0)`);
    const ix = variant("ix.tar", (m) => (m.index!.formatVersion = 99));
    await expect(pullArtefact(ix, { out })).rejects.toThrow(`tartan-artefact.json: index.formatVersion is 99: wrong version, this tartan reads bm25 indexes of format 2 (the artefact was built by tartan 0.1.0)`);
    const notArtefact = join(root, "plain.tar");
    writeTar(notArtefact, [{ name: "readme.txt", data: Buffer.from("hi") }]);
    await expect(pullArtefact(notArtefact, { out })).rejects.toThrow(`${notArtefact}: not a tartan artefact: the first entry is "readme.txt", not tartan-artefact.json`);
  });

  it("never follows a planted link or a path escaping --out", async () => {
    const out = join(root, "never");
    const first = entries(archive)[1].name;
    const link = variant("link.tar", () => {}, (l) => [l[0], { name: first, type: "2", link: "/etc/passwd", data: Buffer.alloc(0) }, ...l.slice(2)]);
    await expect(pullArtefact(link, { out })).rejects.toThrow(`${link}: entry "${first}" is a symbolic link to "/etc/passwd": refused`);
    const escape = variant("escape.tar", (m) => (m.files[0].path = "../escaped"), (l) => [l[0], { ...l[1], name: "../escaped" }, ...l.slice(2)]);
    await expect(pullArtefact(escape, { out })).rejects.toThrow(`${escape}: tartan-artefact.json: entry "../escaped" is not a plain relative path inside the directory: refused`);
    expect(existsSync(join(root, "escaped"))).toBe(false);
    expect(existsSync(out)).toBe(false);
    // pack refuses links inside the directory and an output inside it
    const d = join(root, "withlink");
    mkdirSync(d);
    for (const f of readdirSync(index)) copyFileSync(join(index, f), join(d, f));
    await expect(packArtefact(d, { out: join(d, "self.tar") })).rejects.toThrow(`${join(d, "self.tar")}: inside ${d}, the directory being packed: choose another output path`);
    symlinkSync("/etc/passwd", join(d, "zz"));
    await expect(packArtefact(d, { out: join(root, "wl.tar") })).rejects.toThrow(`${join(d, "zz")}: a symbolic link inside the directory: refusing to pack it (links are never followed)`);
  });
});

describe("tartan index pack / pull over HTTP", () => {
  let server: FileServer | null = null;
  afterAll(async () => server?.close());

  it("packs into a catalogue, pulls by name from a loopback URL, and resumes a pull killed mid-download", async () => {
    const tar = join(root, "cli.tar");
    const cat = join(root, "catalogue.json");
    const packed = await runCli(["index", "pack", index, "--out", tar, "--name", "synthetic-bm25", "--catalogue", cat]);
    expect(packed.status).toBe(0);
    const entry = JSON.parse(packed.stdout);
    const body = readFileSync(tar);
    expect(entry).toEqual({ name: "synthetic-bm25", url: "cli.tar", bytes: body.length, sha256: sha(body), kind: "bm25 paragraph index" });
    expect(readCatalogue(cat).artefacts).toEqual([entry]);
    // by name, relative URL next to the catalogue
    const local = await runCli(["index", "pull", "synthetic-bm25", "--catalogue", cat, "--out", join(root, "by-name")]);
    expect(local.status).toBe(0);
    expect(local.stderr).toContain("every file's sha256 verified; archive sha256 verified");
    // over HTTP, killed after half the archive, then resumed with a Range request
    const half = Math.floor(body.length / 2);
    server = await startFileServer({ "cli.tar": body }, { stallAfter: half });
    const httpCat = join(root, "http-catalogue.json");
    addToCatalogue(httpCat, { ...entry, url: `${server.url}/cli.tar` });
    const out = join(root, "from-http");
    const part = join(root, ".from-http.artefact.tar.part");
    const child = spawn(process.execPath, [CLI, "index", "pull", "synthetic-bm25", "--catalogue", httpCat, "--out", out], { stdio: "ignore" });
    for (let i = 0; i < 300 && !(existsSync(part) && statSync(part).size >= half); i++) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    expect(statSync(part).size).toBe(half);
    expect(existsSync(out)).toBe(false);
    const again = await runCli(["index", "pull", "synthetic-bm25", "--catalogue", httpCat, "--out", out]);
    expect(again.status).toBe(0);
    expect(server.ranges).toEqual(["", `bytes=${half}-`]);
    expect(again.stderr).toContain(`download resumed after ${half.toLocaleString("en-US")} bytes`);
    for (const f of readdirSync(index)) expect(readFileSync(join(out, f)).equals(readFileSync(join(index, f)))).toBe(true);
    expect(existsSync(part)).toBe(false);
    expect(existsSync(join(root, ".from-http.artefact.tar"))).toBe(false);
    // a catalogue served over HTTP: its relative URL resolves next to it
    server.files.set("catalogue.json", readFileSync(cat));
    const viaUrl = await runCli(["index", "pull", "synthetic-bm25", "--catalogue", `${server.url}/catalogue.json`, "--out", join(root, "via-url")]);
    expect(viaUrl.status).toBe(0);
    expect(viaUrl.stderr).toContain(`${server.url}/cli.tar → ${join(root, "via-url")}: bm25 paragraph index`);
    // the library's loader: the same catalogue over HTTP; a body that is not JSON is named by its URL;
    // either way its temporary directory is gone
    const catalogueDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith("tartan-catalogue-"));
    const loaded = await loadCatalogue(`${server.url}/catalogue.json`);
    expect(loaded).toEqual(readCatalogue(cat));
    expect(findArtefact(loaded, "synthetic-bm25", `${server.url}/catalogue.json`).url).toBe(`${server.url}/cli.tar`);
    server.files.set("broken.json", Buffer.from("{ not json"));
    await expect(loadCatalogue(`${server.url}/broken.json`)).rejects.toThrow(`${server.url}/broken.json: not valid JSON (`);
    expect(catalogueDirs()).toEqual([]);
    // a catalogue with a bad field is named
    writeFileSync(join(root, "bad.json"), JSON.stringify({ format: "tartan-artefact-catalogue", version: 1, artefacts: [{ name: "x", url: "y", bytes: 3, sha256: "abc" }] }));
    const bad = await runCli(["index", "pull", "x", "--catalogue", join(root, "bad.json"), "--out", join(root, "never")]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(`tartan: ${join(root, "bad.json")}: artefacts[0].sha256 is not 64 lower-case hex digits\n`);
  }, 60_000);
});
