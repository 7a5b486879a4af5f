// Downloads: the catalogue of KILT's files and names, and the resumable verified downloader against a
// loopback HTTP server (Range requests, a connection cut mid-file, a server without ranges, a
// mismatching file, a download killed mid-file and resumed, a mirror directory, planted links).

import { afterEach, describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DOWNLOADS, downloadSource, resolveDownloads, downloadDatasets } from "../../src/datasets/downloads.js";
import { DownloadError, downloadFile } from "../../src/util/download.js";
import { startFileServer, type FileServer } from "../fixtures/file-server.js";
import { CLI, runCli } from "../fixtures/run-cli.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** 300,000 deterministic bytes. */
const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919 + (i >> 8)) & 0xff));
/** 300,000 bytes of JSON lines, for files a dataset download checks as JSONL. */
const JSONL = (() => {
  let s = "";
  for (let i = 0; s.length < 300_000; i++) s += `{"id":"${i}","input":"question ${(i * 7919) % 10007}"}\n`;
  return Buffer.from(s.slice(0, 300_000));
})();


let server: FileServer | null = null;
const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "tartan-dl-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await server?.close();
  server = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("the download catalogue", () => {
  it("lists KILT's 31 task files, the knowledge source and the DPR passages with their published URLs", () => {
    const tasks = DOWNLOADS.filter((i) => i.dataset !== undefined);
    expect(tasks.length).toBe(31);
    expect(DOWNLOADS.find((i) => i.name === "knowledge-source")?.url).toBe("http://dl.fbaipublicfiles.com/KILT/kilt_knowledgesource.json");
    expect(DOWNLOADS.find((i) => i.name === "dpr-passages")?.url).toBe("http://dl.fbaipublicfiles.com/KILT/kilt_w100_title.tsv");
    expect(DOWNLOADS.find((i) => i.name === "zsre-dev")?.url).toBe("http://dl.fbaipublicfiles.com/KILT/structured_zeroshot-dev-kilt.jsonl");
    expect(DOWNLOADS.find((i) => i.name === "triviaqa-train")?.file).toBe("triviaqa-train_id-kilt.jsonl");
    // no checksum is invented: none is known yet
    expect(DOWNLOADS.filter((i) => i.sha256 !== undefined)).toEqual([]);
  });

  it("resolves datasets, splits, items, files and groups; names the unknown ones", () => {
    expect(resolveDownloads(["nq"]).map((i) => i.file)).toEqual(["nq-train-kilt.jsonl", "nq-dev-kilt.jsonl", "nq-test_without_answers-kilt.jsonl"]);
    expect(resolveDownloads(["fever:dev", "ks", "fever-dev-kilt.jsonl"]).map((i) => i.name)).toEqual(["fever-dev", "knowledge-source"]);
    expect(resolveDownloads(["dev"]).length).toBe(11);
    expect(resolveDownloads(["wned"]).map((i) => i.name)).toEqual(["wned-dev", "wned-test"]);
    expect(() => resolveDownloads(["nq", "squadx", "foo:dev"])).toThrow(/unknown download names "squadx", "foo:dev"/u);
  });

  it("maps a mirror (http base, file:// URL, directory) to the same file name", () => {
    const item = DOWNLOADS.find((i) => i.name === "nq-dev")!;
    expect(downloadSource(item)).toBe("http://dl.fbaipublicfiles.com/KILT/nq-dev-kilt.jsonl");
    expect(downloadSource(item, "http://127.0.0.1:9/kilt/")).toBe("http://127.0.0.1:9/kilt/nq-dev-kilt.jsonl");
    expect(downloadSource(item, "file:///srv/kilt")).toBe("/srv/kilt/nq-dev-kilt.jsonl");
    expect(downloadSource(item, "/srv/kilt")).toBe("/srv/kilt/nq-dev-kilt.jsonl");
  });
});

describe("downloadFile", () => {
  it("downloads over HTTP, verifies the sha256 and leaves no .part", async () => {
    server = await startFileServer({ "a.bin": BODY });
    const dest = join(tmp(), "a.bin");
    const r = await downloadFile(`${server.url}/a.bin`, dest, { sha256: sha(BODY) });
    expect(r).toEqual({ file: dest, bytes: 300_000, sha256: sha(BODY), resumedFrom: 0, present: false, verified: "sha256" });
    expect(readFileSync(dest).equals(BODY)).toBe(true);
    expect(existsSync(`${dest}.part`)).toBe(false);
    // a second call finds it there, verified
    const again = await downloadFile(`${server.url}/a.bin`, dest, { sha256: sha(BODY) });
    expect(again.present).toBe(true);
    expect(server.ranges).toEqual([""]);
  });

  it("resumes with a Range request after the connection is cut mid-file", async () => {
    server = await startFileServer({ "a.bin": BODY }, { cuts: [100_000, 50_000] });
    const dest = join(tmp(), "a.bin");
    const lines: string[] = [];
    const r = await downloadFile(`${server.url}/a.bin`, dest, { sha256: sha(BODY), retryDelayMs: 10, log: (l) => lines.push(l) });
    expect(r.bytes).toBe(300_000);
    expect(readFileSync(dest).equals(BODY)).toBe(true);
    expect(server.ranges).toEqual(["", "bytes=100000-", "bytes=150000-"]);
    expect(lines.length).toBe(2);
    expect(lines[0]).toMatch(/retrying from byte 100,000 \(1\/3\)$/u);
  });

  it("without retries, fails naming URL and file, keeps the .part, and the next call resumes from it", async () => {
    server = await startFileServer({ "a.bin": BODY }, { cuts: [120_000] });
    const dest = join(tmp(), "a.bin");
    const url = `${server.url}/a.bin`;
    const err = await downloadFile(url, dest, { retries: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DownloadError);
    expect((err as Error).message).toBe(`${url} → ${dest}: the connection closed after 120,000 of 300,000 bytes; 120,000 bytes kept in ${dest}.part: run again to resume`);
    expect(statSync(`${dest}.part`).size).toBe(120_000);
    const r = await downloadFile(url, dest, { retries: 0 });
    expect(r).toEqual({ file: dest, bytes: 300_000, sha256: sha(BODY), resumedFrom: 120_000, present: false, verified: "server-size" });
    expect(server.ranges).toEqual(["", "bytes=120000-"]);
  });

  it("follows redirects, and finishes a .part that is already complete (HTTP 416 with the total)", async () => {
    server = await startFileServer({ "a.bin": BODY }, { redirects: { "old/a.bin": "a.bin" } });
    const d = tmp();
    const r = await downloadFile(`${server.url}/old/a.bin`, join(d, "a.bin"), { sha256: sha(BODY) });
    expect(r.bytes).toBe(300_000);
    writeFileSync(join(d, "b.bin.part"), BODY);
    const done = await downloadFile(`${server.url}/a.bin`, join(d, "b.bin"), { sha256: sha(BODY) });
    expect(done).toEqual({ file: join(d, "b.bin"), bytes: 300_000, sha256: sha(BODY), resumedFrom: 300_000, present: false, verified: "sha256" });
    expect(server.ranges).toEqual(["", "", "bytes=300000-"]);
  });

  it("starts over when the server ignores ranges (a 200 to a ranged request: from zero, not appended), and says so", async () => {
    server = await startFileServer({ "a.bin": BODY }, { ranges: false });
    const dest = join(tmp(), "a.bin");
    writeFileSync(`${dest}.part`, BODY.subarray(0, 1000));
    const lines: string[] = [];
    const r = await downloadFile(`${server.url}/a.bin`, dest, { sha256: sha(BODY), log: (l) => lines.push(l) });
    expect(r).toEqual({ file: dest, bytes: 300_000, sha256: sha(BODY), resumedFrom: 0, present: false, verified: "sha256" });
    expect(readFileSync(dest).equals(BODY)).toBe(true);
    expect(server.ranges).toEqual(["bytes=1000-"]);
    expect(lines).toEqual([`${dest}: resuming after 1,000 bytes (${dest}.part)`, `${dest}: the source does not resume (it answered a ranged request with the whole file): downloading from the start`]);
  });

  it("refuses a mismatching file: names URL, file and both checksums, removes the .part, writes nothing", async () => {
    const other = Buffer.from(BODY);
    other[12345] ^= 1;
    server = await startFileServer({ "a.bin": other });
    const dest = join(tmp(), "a.bin");
    const url = `${server.url}/a.bin`;
    await expect(downloadFile(url, dest, { sha256: sha(BODY) })).rejects.toThrow(`${url} → ${dest}: sha256 ${sha(other)}, expected ${sha(BODY)} (a corrupt or different file); ${dest}.part removed`);
    expect(existsSync(dest)).toBe(false);
    expect(existsSync(`${dest}.part`)).toBe(false);
    await expect(downloadFile(url, dest, { bytes: 299_999 })).rejects.toThrow(`${url} → ${dest}: 300,000 bytes, the catalogue says 299,999; ${dest}.part removed`);
  });

  it("names URL and file on HTTP errors and refused connections", async () => {
    server = await startFileServer({});
    const dest = join(tmp(), "x.bin");
    await expect(downloadFile(`${server.url}/x.bin`, dest)).rejects.toThrow(`${server.url}/x.bin → ${dest}: HTTP 404 Not Found`);
    const url = server.url;
    await server.close();
    server = null;
    await expect(downloadFile(`${url}/x.bin`, dest, { retries: 1, retryDelayMs: 5 })).rejects.toThrow(new RegExp(`^${url.replace(/\./gu, "\\.")}/x\\.bin → ${dest}: connect ECONNREFUSED`, "u"));
  });

  it("never writes through a planted link at DEST or DEST.part", async () => {
    server = await startFileServer({ "a.bin": BODY });
    const d = tmp();
    const victim = join(d, "victim");
    writeFileSync(victim, "keep");
    symlinkSync(victim, join(d, "a.bin.part"));
    await expect(downloadFile(`${server.url}/a.bin`, join(d, "a.bin"))).rejects.toThrow(`${join(d, "a.bin.part")} is a symbolic link: refusing to write through it`);
    symlinkSync(victim, join(d, "b.bin"));
    await expect(downloadFile(`${server.url}/a.bin`, join(d, "b.bin"))).rejects.toThrow(`${join(d, "b.bin")} is a symbolic link: refusing to replace or follow it`);
    expect(readFileSync(victim, "utf8")).toBe("keep");
  });

  it("copies from a mirror directory and a file:// URL, resuming a .part recorded as from that file (one without a record starts again)", async () => {
    const mirror = tmp();
    const source = join(mirror, "nq-dev-kilt.jsonl");
    writeFileSync(source, JSONL);
    const out = tmp();
    const part = join(out, "nq-dev-kilt.jsonl.part");
    writeFileSync(part, JSONL.subarray(0, 4096));
    const st = statSync(source);
    writeFileSync(`${part}.json`, JSON.stringify({ url: source, etag: `${st.size}-${st.mtimeMs}`, total: st.size }));
    const items = resolveDownloads(["nq:dev"]);
    const [r] = await downloadDatasets(items, { out, mirror });
    expect(r.resumedFrom).toBe(4096);
    expect(readFileSync(join(out, "nq-dev-kilt.jsonl")).equals(JSONL)).toBe(true);
    expect(existsSync(part) || existsSync(`${part}.json`)).toBe(false);
    const out2 = tmp();
    writeFileSync(join(out2, "nq-dev-kilt.jsonl.part"), Buffer.from("not from the mirror\n"));
    const lines: string[] = [];
    const [r2] = await downloadDatasets(items, { out: out2, mirror: pathToFileURL(mirror).href, log: (l) => lines.push(l) });
    expect([r2.sha256, r2.resumedFrom]).toEqual([sha(JSONL), 0]);
    expect(lines[0]).toBe(`${join(out2, "nq-dev-kilt.jsonl")}: ${join(out2, "nq-dev-kilt.jsonl.part")} has 20 bytes but no record of where they came from (${join(out2, "nq-dev-kilt.jsonl.part")}.json) and no checksum to hold them to: downloading from the start`);
  });

  it("records every file's sha256 in SHA256SUMS and holds later copies and present files to it", async () => {
    const mirror = tmp();
    writeFileSync(join(mirror, "nq-dev-kilt.jsonl"), JSONL);
    const out = tmp();
    const items = resolveDownloads(["nq:dev"]);
    await downloadDatasets(items, { out, mirror });
    expect(readFileSync(join(out, "SHA256SUMS"), "utf8")).toBe(`${sha(JSONL)}  nq-dev-kilt.jsonl\n`);
    // a second copy from another mirror that serves other bytes is refused, and nothing is written
    const other = tmp();
    const changed = Buffer.from(JSONL);
    changed[1000] ^= 1;
    writeFileSync(join(other, "nq-dev-kilt.jsonl"), changed);
    rmSync(join(out, "nq-dev-kilt.jsonl"));
    await expect(downloadDatasets(items, { out, mirror: other })).rejects.toThrow(sha(changed));
    expect(existsSync(join(out, "nq-dev-kilt.jsonl"))).toBe(false);
    // the first mirror again: verified against the record
    const [again] = await downloadDatasets(items, { out, mirror });
    expect(again.verified).toBe("sha256");
    // a present file that changed since it was recorded is refused
    writeFileSync(join(out, "nq-dev-kilt.jsonl"), changed);
    await expect(downloadDatasets(items, { out, mirror })).rejects.toThrow(`already exists with sha256 ${sha(changed)}, expected ${sha(JSONL)}`);
    // a malformed record names the file and line
    writeFileSync(join(out, "SHA256SUMS"), `${sha(JSONL)}  nq-dev-kilt.jsonl\nnot a sum\n`);
    await expect(downloadDatasets(items, { out, mirror })).rejects.toThrow(`${join(out, "SHA256SUMS")}:2: not a "SHA256  FILE" line`);
  });
});

describe("tartan datasets download", () => {
  it("resumes a download killed mid-file from its .part with a Range request", async () => {
    server = await startFileServer({ "nq-dev-kilt.jsonl": JSONL }, { stallAfter: 200_000 });
    const out = tmp();
    const part = join(out, "nq-dev-kilt.jsonl.part");
    const child = spawn(process.execPath, [CLI, "datasets", "download", "nq:dev", "--out", out, "--mirror", server.url], { stdio: "ignore" });
    for (let i = 0; i < 300 && !(existsSync(part) && statSync(part).size >= 200_000); i++) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGKILL");
    await new Promise((r) => child.on("exit", r));
    expect(statSync(part).size).toBe(200_000);
    expect(existsSync(join(out, "nq-dev-kilt.jsonl"))).toBe(false);
    const r = await runCli(["datasets", "download", "nq:dev", "--out", out, "--mirror", server.url, "--json"]);
    expect(r.status).toBe(0);
    expect(server.ranges).toEqual(["", "bytes=200000-"]);
    expect(readFileSync(join(out, "nq-dev-kilt.jsonl")).equals(JSONL)).toBe(true);
    expect(JSON.parse(r.stdout)).toEqual([{ name: "nq-dev", file: join(out, "nq-dev-kilt.jsonl"), bytes: 300_000, sha256: sha(JSONL), resumedFrom: 200_000, present: false, verified: "server-size" }]);
    expect(r.stderr).toContain(`resuming after 200,000 bytes (${part})`);
    expect(r.stderr).not.toContain("\r"); // no progress line when stderr is piped
  }, 30_000);

  it("draws file, bytes, rate and ETA on a terminal", () => {
    const mirror = tmp();
    writeFileSync(join(mirror, "nq-dev-kilt.jsonl"), JSONL);
    const out = tmp();
    const cmd = [process.execPath, CLI, "datasets", "download", "nq:dev", "--out", out, "--mirror", mirror].map((a) => `'${a}'`).join(" ");
    const r = spawnSync("script", ["-qec", cmd, "/dev/null"], { encoding: "utf8", timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/\rdownload nq-dev-kilt\.jsonl {2}1 of 1 files {2}300 kB \/ 300 kB \(100%\) {2}[\d.]+ MB\/s {2}ETA 0s\x1b\[K\r?\n/u);
  });

  it("prints TriviaQA's extra step and fails with exit 2 naming URL and file", () => {
    const mirror = tmp();
    mkdirSync(join(mirror, "sub"));
    writeFileSync(join(mirror, "triviaqa-dev_id-kilt.jsonl"), "{}\n");
    const out = tmp();
    const ok = spawnSync(process.execPath, [CLI, "datasets", "download", "triviaqa:dev", "--out", out, "--mirror", mirror], { encoding: "utf8" });
    expect(ok.status).toBe(0);
    expect(ok.stderr).toContain("python scripts/get_triviaqa_input.py");
    const bad = spawnSync(process.execPath, [CLI, "datasets", "download", "nq:dev", "--out", out, "--mirror", mirror, "--retries", "1"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`tartan: ${join(mirror, "nq-dev-kilt.jsonl")} → ${join(out, "nq-dev-kilt.jsonl")}: cannot read ${join(mirror, "nq-dev-kilt.jsonl")} (ENOENT)`);
  });
});
