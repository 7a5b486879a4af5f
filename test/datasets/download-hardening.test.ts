// The downloader under hostile or changing servers (issue 39, third round), each against a loopback
// node:http server: hard links at DEST.part, redirects to other schemes and too many of them, a file
// that changes between a download and its resume (If-Range), HTML pages served with 200, bodies
// shorter or longer than declared, and a .part started from another URL.

import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, linkSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { downloadDatasets, resolveDownloads } from "../../src/datasets/downloads.js";
import { downloadFile } from "../../src/util/download.js";
import { startFileServer, type FileServer } from "../fixtures/file-server.js";
import { runCli } from "../fixtures/run-cli.js";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
/** The ETag the file server names a body by. */
const etagOf = (b: Buffer) => `"${sha(b).slice(0, 16)}"`;
/** 300,000 deterministic bytes, and another version of the same size. */
const BODY = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919 + (i >> 8)) & 0xff));
const NEW = Buffer.from(BODY.map((b) => b ^ 0x55));
/** 300,000 bytes of JSON lines. */
const JSONL = (() => {
  let s = "";
  for (let i = 0; s.length < 300_000; i++) s += `{"id":"${i}","input":"question ${i}"}\n`;
  return Buffer.from(s.slice(0, 300_000));
})();
const PORTAL = Buffer.from("<!DOCTYPE html>\n<html><head><title>Wi-Fi login</title></head><body>Please log in</body></html>\n");

let server: FileServer | null = null;
let raw: Server | null = null;
const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "tartan-dlh-"));
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await server?.close();
  server = null;
  if (raw) {
    raw.closeAllConnections();
    await new Promise((ok) => raw!.close(ok));
    raw = null;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A node:http server on 127.0.0.1 answering with `handler`; returns its base URL. */
async function serve(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void): Promise<string> {
  let n = 0;
  raw = createServer((req, res) => handler(req, res, n++));
  await new Promise<void>((ok) => raw!.listen(0, "127.0.0.1", ok));
  return `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
}

describe("links at DEST and DEST.part", () => {
  it("never writes through a hard link at DEST.part (refused, its other name keeps its bytes); a hard link at DEST is only read; a planted link at the record is replaced, not followed", async () => {
    server = await startFileServer({ "a.bin": BODY });
    const d = tmp();
    const victim = join(d, "victim");
    writeFileSync(victim, "keep");
    linkSync(victim, join(d, "a.bin.part"));
    const url = `${server.url}/a.bin`;
    await expect(downloadFile(url, join(d, "a.bin"))).rejects.toThrow(`${url} → ${join(d, "a.bin")}: ${join(d, "a.bin.part")} is a hard link (2 names for one file): refusing to write through it; remove it to download again`);
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(existsSync(join(d, "a.bin"))).toBe(false);
    expect(server.ranges).toEqual([]); // refused before anything was asked
    linkSync(victim, join(d, "b.bin"));
    await expect(downloadFile(url, join(d, "b.bin"), { sha256: sha(BODY) })).rejects.toThrow(`${join(d, "b.bin")} already exists with sha256 ${sha(Buffer.from("keep"))}, expected ${sha(BODY)}: remove it to download it again`);
    expect(readFileSync(victim, "utf8")).toBe("keep");
    symlinkSync(victim, join(d, "c.bin.part.json"));
    const r = await downloadFile(url, join(d, "c.bin"));
    expect([r.bytes, r.sha256]).toEqual([300_000, sha(BODY)]);
    expect(readFileSync(victim, "utf8")).toBe("keep");
    expect(readdirSync(d).sort()).toEqual(["a.bin.part", "b.bin", "c.bin", "victim"]);
  });
});

describe("redirects", () => {
  it("are followed to http(s) only: a redirect to file:, ftp: or data: is refused naming it, and nothing is read or written", async () => {
    const d = tmp();
    const secret = join(d, "secret.jsonl");
    writeFileSync(secret, '{"secret":1}\n');
    const targets: Record<string, string> = { file: pathToFileURL(secret).href, ftp: "ftp://127.0.0.1/x.jsonl", data: "data:,%7B%7D%0A" };
    server = await startFileServer({}, { redirects: targets });
    for (const [name, to] of Object.entries(targets)) {
      const dest = join(d, `${name}.jsonl`);
      const url = `${server.url}/${name}`;
      await expect(downloadFile(url, dest)).rejects.toThrow(`${url} → ${dest}: ${url} redirected to ${to}: refused (only http and https redirects are followed)`);
      expect(existsSync(dest) || existsSync(`${dest}.part`)).toBe(false);
    }
  });

  it("are followed at most 10 times, and the final URL is named (result, log, the CLI's line and JSON)", async () => {
    const redirects: Record<string, string> = { "r10": "real/nq-dev-kilt.jsonl", "nq-dev-kilt.jsonl": "r1" };
    for (let i = 0; i < 10; i++) redirects[`r${i}`] = `r${i + 1}`;
    server = await startFileServer({ "real/nq-dev-kilt.jsonl": JSONL }, { redirects });
    const d = tmp();
    const lines: string[] = [];
    const r = await downloadFile(`${server.url}/r1`, join(d, "a.jsonl"), { log: (l) => lines.push(l) });
    expect(r).toEqual({ file: join(d, "a.jsonl"), bytes: 300_000, sha256: sha(JSONL), resumedFrom: 0, present: false, verified: "server-size", redirectedTo: `${server.url}/real/nq-dev-kilt.jsonl` });
    expect(lines).toEqual([`${join(d, "a.jsonl")}: ${server.url}/r1 redirected to ${server.url}/real/nq-dev-kilt.jsonl`]);
    await expect(downloadFile(`${server.url}/r0`, join(d, "b.jsonl"))).rejects.toThrow(`${server.url}/r0 → ${join(d, "b.jsonl")}: more than 10 redirects (the last from ${server.url}/r10 to ${server.url}/real/nq-dev-kilt.jsonl)`);
    expect(existsSync(join(d, "b.jsonl.part"))).toBe(false);
    // the CLI: nq-dev-kilt.jsonl → r1 → … → r10 → real/ is 11 redirects: refused, exit 2
    const out = tmp();
    const bad = await runCli(["datasets", "download", "nq:dev", "--out", out, "--mirror", server.url]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`more than 10 redirects (the last from ${server.url}/r10 to ${server.url}/real/nq-dev-kilt.jsonl)`);
    redirects["nq-dev-kilt.jsonl"] = "r2"; // 10 redirects: followed
    const ok = await runCli(["datasets", "download", "nq:dev", "--out", out, "--mirror", server.url, "--json"]);
    expect(ok.status).toBe(0);
    expect(ok.stderr).toContain(`sha256 ${sha(JSONL)}; from ${server.url}/real/nq-dev-kilt.jsonl (redirected)`);
    expect(JSON.parse(ok.stdout)[0].redirectedTo).toBe(`${server.url}/real/nq-dev-kilt.jsonl`);
  }, 30_000);
});

describe("a file that changes between a download and its resume", () => {
  it("resumes with If-Range naming the ETag; the server's whole new file (200) starts again, never spliced onto the old .part", async () => {
    server = await startFileServer({ "a.bin": BODY }, { etags: true, cuts: [100_000, 100_000] });
    const dest = join(tmp(), "a.bin");
    const url = `${server.url}/a.bin`;
    await expect(downloadFile(url, dest, { retries: 0 })).rejects.toThrow("100,000 bytes kept in");
    expect(JSON.parse(readFileSync(`${dest}.part.json`, "utf8"))).toEqual({ url, etag: etagOf(BODY), total: 300_000 });
    // unchanged: resumed (If-Range matches, 206)
    await expect(downloadFile(url, dest, { retries: 0 })).rejects.toThrow("200,000 bytes kept in");
    server.files.set("a.bin", NEW);
    const lines: string[] = [];
    const r = await downloadFile(url, dest, { retries: 0, log: (l) => lines.push(l) });
    expect(r).toEqual({ file: dest, bytes: 300_000, sha256: sha(NEW), resumedFrom: 0, present: false, verified: "server-size" });
    expect(readFileSync(dest).equals(NEW)).toBe(true);
    expect(server.ranges).toEqual(["", "bytes=100000-", "bytes=200000-"]);
    expect(server.ifRanges).toEqual(["", etagOf(BODY), etagOf(BODY)]);
    expect(lines).toEqual([
      `${dest}: resuming after 200,000 bytes (${dest}.part)`,
      `${dest}: the server sent the whole file for a resume of version ${etagOf(BODY)} (it changed, or it does not resume): downloading from the start`,
    ]);
    expect(existsSync(`${dest}.part.json`)).toBe(false);
  });

  it("a 206 naming another ETag (a server that ignores If-Range), or another size (a server naming no version), starts again from zero", async () => {
    server = await startFileServer({ "a.bin": BODY }, { etags: true, ifRange: false, cuts: [100_000] });
    const dest = join(tmp(), "a.bin");
    const url = `${server.url}/a.bin`;
    await expect(downloadFile(url, dest, { retries: 0 })).rejects.toThrow("100,000 bytes kept in");
    server.files.set("a.bin", NEW);
    const lines: string[] = [];
    const r = await downloadFile(url, dest, { retries: 0, log: (l) => lines.push(l) });
    expect(readFileSync(dest).equals(NEW)).toBe(true);
    expect(r.resumedFrom).toBe(0);
    expect(server.ranges).toEqual(["", "bytes=100000-", ""]);
    expect(lines[1]).toBe(`${dest}: the file changed since ${dest}.part was started (its ETag is ${etagOf(NEW)}, was ${etagOf(BODY)}): downloading from the start`);
    await server.close();
    // no ETag, no Last-Modified: the size the server declares is the version
    server = await startFileServer({ "b.bin": BODY }, { cuts: [100_000] });
    const dest2 = join(tmp(), "b.bin");
    await expect(downloadFile(`${server.url}/b.bin`, dest2, { retries: 0 })).rejects.toThrow("100,000 bytes kept in");
    const shorter = NEW.subarray(0, 250_000);
    server.files.set("b.bin", shorter);
    const r2 = await downloadFile(`${server.url}/b.bin`, dest2, { retries: 0 });
    expect([r2.sha256, r2.resumedFrom]).toEqual([sha(shorter), 0]);
    expect(server.ranges).toEqual(["", "bytes=100000-", ""]);
  });

  it("sends Last-Modified as If-Range when there is no strong ETag", async () => {
    const date = "Tue, 01 Dec 2026 10:00:00 GMT";
    server = await startFileServer({ "a.bin": BODY }, { headers: { "Last-Modified": date, ETag: 'W/"weak"' }, cuts: [100_000] });
    const dest = join(tmp(), "a.bin");
    await expect(downloadFile(`${server.url}/a.bin`, dest, { retries: 0 })).rejects.toThrow("100,000 bytes kept in");
    const r = await downloadFile(`${server.url}/a.bin`, dest, { retries: 0 });
    expect([r.sha256, r.resumedFrom]).toEqual([sha(BODY), 100_000]);
    expect(server.ifRanges).toEqual(["", date]);
  });

  it("a .part started from another URL starts again (it is that URL's file, not this one's)", async () => {
    server = await startFileServer({ "a.bin": BODY, "b.bin": NEW }, { cuts: [100_000] });
    const dest = join(tmp(), "x.bin");
    await expect(downloadFile(`${server.url}/a.bin`, dest, { retries: 0 })).rejects.toThrow("100,000 bytes kept in");
    const lines: string[] = [];
    const r = await downloadFile(`${server.url}/b.bin`, dest, { log: (l) => lines.push(l) });
    expect([r.sha256, r.resumedFrom]).toEqual([sha(NEW), 0]);
    expect(lines).toEqual([`${dest}: ${dest}.part was started from ${server.url}/a.bin, not ${server.url}/b.bin: downloading from the start`]);
    expect(server.ranges).toEqual(["", ""]);
  });
});

describe("an HTML error or login page served with 200", () => {
  it("is refused by its Content-Type before anything is written", async () => {
    server = await startFileServer({ "nq-dev-kilt.jsonl": PORTAL }, { headers: { "Content-Type": "text/html; charset=utf-8" } });
    const out = tmp();
    const url = `${server.url}/nq-dev-kilt.jsonl`;
    await expect(downloadDatasets(resolveDownloads(["nq:dev"]), { out, mirror: server.url })).rejects.toThrow(
      `${url} → ${join(out, "nq-dev-kilt.jsonl")}: ${url} answered HTTP 200 with an HTML page (Content-Type: text/html; charset=utf-8), not the file: an error or login page? Nothing written`,
    );
    expect(readdirSync(out)).toEqual([]);
    const cli = await runCli(["datasets", "download", "nq:dev", "--out", out, "--mirror", server.url]);
    expect(cli.status).toBe(2);
    expect(cli.stderr).toContain("with an HTML page (Content-Type: text/html; charset=utf-8), not the file");
    expect(readdirSync(out)).toEqual([]);
  });

  it("is refused by the file's format (JSONL's first line, TSV's tab, gzip's magic bytes) when no Content-Type says so; the right formats pass", async () => {
    server = await startFileServer({ "nq-dev-kilt.jsonl": PORTAL, "kilt_w100_title.tsv": PORTAL, "triviaqa-rc.tar.gz": PORTAL });
    const out = tmp();
    const quoted = JSON.stringify(PORTAL.subarray(0, 60).toString("latin1"));
    const html = "(it looks like an HTML page: an error or login page?): refused, not installed";
    for (const [name, file, why] of [
      ["nq:dev", "nq-dev-kilt.jsonl", `not JSONL: its first line does not parse as JSON: ${quoted} ${html}`],
      ["dpr-passages", "kilt_w100_title.tsv", `not TSV: its first line has no tab: ${quoted} ${html}`],
      ["triviaqa-rc", "triviaqa-rc.tar.gz", `not gzip: it does not start with the bytes 1f 8b but with ${quoted}${html.replace("(", " (")}`],
    ]) {
      const dest = join(out, file);
      await expect(downloadDatasets(resolveDownloads([name]), { out, mirror: server.url })).rejects.toThrow(`${server.url}/${file} → ${dest}: ${why}; ${dest}.part removed`);
      expect(readdirSync(out)).toEqual([]);
    }
    server.files.set("nq-dev-kilt.jsonl", JSONL);
    server.files.set("kilt_w100_title.tsv", Buffer.from("id\ttext\ttitle\n1\tsome text\tA title\n"));
    server.files.set("triviaqa-rc.tar.gz", gzipSync(Buffer.from("not really a tar")));
    const r = await downloadDatasets(resolveDownloads(["nq:dev", "dpr-passages", "triviaqa-rc"]), { out, mirror: server.url });
    expect(r.map((x) => x.present)).toEqual([false, false, false]);
    expect(readdirSync(out).sort()).toEqual(["SHA256SUMS", "kilt_w100_title.tsv", "nq-dev-kilt.jsonl", "triviaqa-rc.tar.gz"]);
  });
});

describe("bodies shorter or longer than declared", () => {
  it("a body shorter than its Content-Length (the server ends early) is resumed from where it stopped, never taken as complete", async () => {
    const url = await serve((req, res, n) => {
      if (n === 0) {
        res.writeHead(200, { "Content-Length": BODY.length });
        res.write(BODY.subarray(0, 120_000), () => setTimeout(() => res.socket?.end(), 20));
        return;
      }
      const start = Number(/^bytes=(\d+)-$/u.exec(req.headers.range ?? "")?.[1] ?? 0);
      res.writeHead(206, { "Content-Length": BODY.length - start, "Content-Range": `bytes ${start}-${BODY.length - 1}/${BODY.length}` }).end(BODY.subarray(start));
    });
    const dest = join(tmp(), "a.bin");
    const lines: string[] = [];
    const r = await downloadFile(`${url}/a.bin`, dest, { retryDelayMs: 5, log: (l) => lines.push(l) });
    expect([r.bytes, r.sha256]).toEqual([300_000, sha(BODY)]);
    expect(lines).toEqual([`${dest}: the connection closed after 120,000 of 300,000 bytes; retrying from byte 120,000 (1/3)`]);
  });

  it("a body that goes on past its declared size (the catalogue's, or the Content-Range total of a resume) is cut there and refused, its .part removed", async () => {
    const endless = (res: ServerResponse) => {
      const chunk = Buffer.alloc(16_384, 0x61);
      const timer = setInterval(() => res.write(chunk), 1);
      res.on("close", () => clearInterval(timer));
    };
    const url = await serve((req, res, n) => {
      if (req.url === "/resume" && n === 1) {
        res.writeHead(200, { "Content-Length": BODY.length });
        res.write(BODY.subarray(0, 100_000), () => setTimeout(() => res.socket?.destroy(), 20));
        return;
      }
      const start = /^bytes=(\d+)-$/u.exec(req.headers.range ?? "")?.[1];
      if (req.url === "/resume") res.writeHead(206, { "Content-Range": `bytes ${start}-299999/300000` });
      else res.writeHead(200); // chunked, no size
      endless(res);
    });
    const d = tmp();
    await expect(downloadFile(`${url}/fresh`, join(d, "a.bin"), { bytes: 300_000 })).rejects.toThrow(`${url}/fresh → ${join(d, "a.bin")}: more bytes than the 300,000 declared: refused; ${join(d, "a.bin")}.part removed`);
    expect(existsSync(join(d, "a.bin.part"))).toBe(false);
    await expect(downloadFile(`${url}/resume`, join(d, "b.bin"), { retries: 0 })).rejects.toThrow(/ bytes kept in /u); // 100,000 or fewer: a reset may drop some
    await expect(downloadFile(`${url}/resume`, join(d, "b.bin"), { retries: 0 })).rejects.toThrow(`${url}/resume → ${join(d, "b.bin")}: more bytes than the 300,000 declared: refused; ${join(d, "b.bin")}.part removed`);
    expect(readdirSync(d)).toEqual([]);
  }, 20_000);
});

describe("files checked after the fact", () => {
  it("a .part without a record is resumed only when a checksum holds it (then verified), else started again", async () => {
    server = await startFileServer({ "a.bin": BODY });
    const d = tmp();
    writeFileSync(join(d, "a.bin.part"), BODY.subarray(0, 5000));
    const r = await downloadFile(`${server.url}/a.bin`, join(d, "a.bin"), { sha256: sha(BODY) });
    expect([r.resumedFrom, r.verified]).toEqual([5000, "sha256"]);
    writeFileSync(join(d, "b.bin.part"), BODY.subarray(0, 5000));
    const r2 = await downloadFile(`${server.url}/a.bin`, join(d, "b.bin"));
    expect([r2.resumedFrom, r2.sha256]).toEqual([0, sha(BODY)]);
    expect(statSync(join(d, "b.bin")).size).toBe(300_000);
    expect(server.ranges).toEqual(["bytes=5000-", ""]);
  });

  it("an HTML page already at DEST (installed before these checks), with nothing recorded to hold it to, is refused, not taken as the file", async () => {
    const mirror = tmp();
    writeFileSync(join(mirror, "nq-dev-kilt.jsonl"), JSONL);
    const out = tmp();
    writeFileSync(join(out, "nq-dev-kilt.jsonl"), PORTAL);
    await expect(downloadDatasets(resolveDownloads(["nq:dev"]), { out, mirror })).rejects.toThrow(
      `${join(out, "nq-dev-kilt.jsonl")} already exists but does not look right (not JSONL: its first line does not parse as JSON: ${JSON.stringify(PORTAL.toString("latin1", 0, 60))} (it looks like an HTML page: an error or login page?)): remove it to download it again`,
    );
    expect(readFileSync(join(out, "nq-dev-kilt.jsonl")).equals(PORTAL)).toBe(true);
  });
});
