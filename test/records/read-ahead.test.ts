import { afterAll, describe, expect, it } from "vitest";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readAhead } from "../../src/records/read-ahead.js";

const dir = mkdtempSync(join(tmpdir(), "tartan-read-ahead-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let fifos = 0;
/** A FIFO and a child process writing `mib` MiB of deterministic bytes into it, then exiting. */
function writer(mib: number): { path: string; child: ChildProcess; exited: Promise<number | null>; sha: string } {
  const path = join(dir, `fifo-${fifos++}`);
  execFileSync("mkfifo", [path]);
  const script = `const fs=require("fs");const fd=fs.openSync(process.argv[1],"w");const b=Buffer.alloc(1<<20);
for(let m=0;m<${mib};m++){for(let i=0;i<b.length;i++)b[i]=(i*7+m*13)&255;let o=0;while(o<b.length)o+=fs.writeSync(fd,b,o);}
fs.closeSync(fd);`;
  const child = spawn(process.execPath, ["-e", script, path], { stdio: "ignore" });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const h = createHash("sha256");
  const b = Buffer.alloc(1 << 20);
  for (let m = 0; m < mib; m++) {
    for (let i = 0; i < b.length; i++) b[i] = (i * 7 + m * 13) & 255;
    h.update(b);
  }
  return { path, child, exited, sha: h.digest("hex") };
}

describe("readAhead", () => {
  it("drains the pipe while the consumer waits: the writer finishes 8 MiB before a second chunk is taken", async () => {
    const w = writer(8);
    const it = readAhead(w.path, { chunkBytes: 1 << 20, maxBytes: 16 << 20 });
    const h = createHash("sha256");
    const first = await it.next();
    expect(first.done).toBe(false);
    h.update(first.value as Buffer);
    // Through the kernel's 64 KiB pipe alone the writer could not end before we read on.
    expect(await w.exited).toBe(0);
    let bytes = (first.value as Buffer).length;
    for await (const chunk of it) {
      h.update(chunk);
      bytes += chunk.length;
    }
    expect(bytes).toBe(8 << 20);
    expect(h.digest("hex")).toBe(w.sha);
  });

  it("stays within maxBytes: a writer of 16 MiB cannot finish while 2 MiB are held unread", async () => {
    const w = writer(16);
    let ended = false;
    void w.exited.then(() => (ended = true));
    const it = readAhead(w.path, { chunkBytes: 1 << 20, maxBytes: 2 << 20 });
    await it.next();
    await new Promise((r) => setTimeout(r, 300));
    expect(ended).toBe(false);
    const h = createHash("sha256");
    let n = 0;
    for await (const chunk of it) {
      h.update(chunk);
      n += chunk.length;
    }
    expect(n).toBe(15 << 20);
    expect(await w.exited).toBe(0);
  });

  it("gives a last short chunk and ends at the end of the input", async () => {
    const path = join(dir, "short.txt");
    execFileSync("sh", ["-c", `printf 'abcdefghij' > '${path}'`]);
    const out: string[] = [];
    for await (const chunk of readAhead(path, { chunkBytes: 4 })) out.push(chunk.toString());
    expect(out).toEqual(["abcd", "efgh", "ij"]);
  });

  it("stops its thread when the consumer leaves early: the writer gets a broken pipe instead of hanging", async () => {
    const w = writer(64);
    for await (const chunk of readAhead(w.path, { chunkBytes: 1 << 20, maxBytes: 2 << 20 })) {
      expect(chunk.length).toBe(1 << 20);
      break;
    }
    expect(await w.exited).not.toBe(0);
  });

  it("names what it could not read", async () => {
    const missing = join(dir, "missing");
    await expect(readAhead(missing).next()).rejects.toThrow(`ENOENT: no such file or directory, open '${missing}'`);
  });
});
