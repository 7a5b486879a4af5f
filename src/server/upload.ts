// Streaming multipart uploads: the request body is read chunk by chunk through busboy, each expected
// file part is written to a file of a fixed name in a fresh temporary directory, and the body is cut
// off with a 413 the moment it passes the size limit, or with a 408 when it takes longer than its
// deadline or arrives slower than the least rate (a slow client must not hold the server's resources).
// A body cut before its closing boundary is a 400, a client that goes away mid-upload is the client's
// fault: both are logged as one line, never as unexpected errors. Part names choose among fixed file names; the
// client's file names never reach the file system (only whether they end in `.gz`).

import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as NodeWebStream } from "node:stream/web";
import busboy from "busboy";
import { ApiError } from "./errors.js";

export interface Upload {
  dir: string;
  fields: Record<string, string>;
  /** Part name → the file it was written to. */
  files: Record<string, string>;
  bytes: number;
  /** Removes the temporary directory. */
  cleanup(): void;
}

/**
 * Receives a `multipart/form-data` body. `fileParts` are the file part names accepted; `fieldNames`
 * the text fields. Anything else is a 400; more than `maxBytes` of body is a 413.
 */
export async function receiveForm(
  req: Request,
  o: {
    maxBytes: number;
    fileParts: readonly string[];
    fieldNames: readonly string[];
    /** Deadline of the whole body, in ms. */
    deadlineMs?: number;
    /** Least bytes per second over each `windowMs`. */
    minRate?: number;
    windowMs?: number;
  },
): Promise<Upload> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\b/i.test(type)) throw new ApiError(415, "the body must be multipart/form-data");
  const declared = Number(req.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > o.maxBytes) throw new ApiError(413, `the upload is ${declared} bytes; the limit is ${o.maxBytes}`);
  if (!req.body) throw new ApiError(400, "empty body");
  const dir = mkdtempSync(join(tmpdir(), "tartan-serve-"));
  const upload: Upload = { dir, fields: {}, files: {}, bytes: 0, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
  const writes: Promise<void>[] = [];
  const open: { from: NodeJS.ReadableStream; to: WriteStream }[] = [];
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { "content-type": type }, limits: { fields: o.fieldNames.length, files: o.fileParts.length, fieldSize: 64 * 1024, parts: o.fieldNames.length + o.fileParts.length } });
  } catch (e) {
    upload.cleanup();
    throw new ApiError(400, `malformed multipart body: ${(e as Error).message}`);
  }
  const body = Readable.fromWeb(req.body as unknown as NodeWebStream<Uint8Array>);
  let deadline: NodeJS.Timeout | undefined;
  let rateCheck: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const fail = (e: Error) => {
        if (failed) return;
        failed = true;
        clearTimeout(deadline);
        clearInterval(rateCheck);
        body.unpipe(parser);
        body.destroy();
        for (const { from, to } of open) {
          from.unpipe(to);
          from.resume();
          to.destroy();
        }
        reject(e);
      };
      parser.on("file", (name, stream, info) => {
        if (!o.fileParts.includes(name) || upload.files[name]) {
          stream.resume();
          return fail(new ApiError(400, `unexpected file part ${JSON.stringify(name.slice(0, 40))}; expected ${o.fileParts.join(", ")}`));
        }
        const path = join(dir, `${name}.jsonl${/\.gz$/i.test(info.filename ?? "") ? ".gz" : ""}`);
        upload.files[name] = path;
        const out = createWriteStream(path, { flags: "wx" });
        open.push({ from: stream, to: out });
        const written = new Promise<void>((res, rej) => {
          out.on("finish", res);
          out.on("close", res);
          out.on("error", rej);
        });
        written.catch(() => {}); // awaited below unless the upload already failed
        writes.push(written);
        // busboy fails the open file part when the body ends before its boundary: the client's fault.
        stream.on("error", (e: Error) => fail(new ApiError(400, `malformed multipart body: ${e.message}`, true)));
        stream.pipe(out);
      });
      parser.on("field", (name, value, info) => {
        if (!o.fieldNames.includes(name)) return fail(new ApiError(400, `unexpected field ${JSON.stringify(name.slice(0, 40))}; expected ${o.fieldNames.join(", ")}`));
        if (info.valueTruncated) return fail(new ApiError(400, `field ${name} is too long`));
        upload.fields[name] = value;
      });
      parser.on("partsLimit", () => fail(new ApiError(400, "too many parts")));
      parser.on("filesLimit", () => fail(new ApiError(400, "too many files")));
      parser.on("fieldsLimit", () => fail(new ApiError(400, "too many fields")));
      parser.on("error", (e: Error) => fail(new ApiError(400, `malformed multipart body: ${e.message}`, true)));
      parser.on("close", () => {
        clearTimeout(deadline);
        clearInterval(rateCheck);
        if (!failed) resolve();
      });
      let windowStart = 0;
      body.on("data", (chunk: Buffer) => {
        upload.bytes += chunk.length;
        if (upload.bytes > o.maxBytes) fail(new ApiError(413, `the upload is larger than the limit of ${o.maxBytes} bytes`));
      });
      // The request's body stream fails when the client goes away (connection reset, aborted).
      body.on("error", (e: Error) => fail(new ApiError(400, `the client went away mid-upload after ${upload.bytes} bytes (${e.message})`, true)));
      body.on("end", () => {
        clearTimeout(deadline);
        clearInterval(rateCheck);
      });
      if (o.deadlineMs !== undefined) {
        const ms = o.deadlineMs;
        deadline = setTimeout(() => fail(new ApiError(408, `the upload took longer than ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`} (${upload.bytes} bytes received)`, true)), ms);
      }
      if (o.minRate !== undefined && o.minRate > 0) {
        const window = o.windowMs ?? 10_000;
        const least = Math.ceil((o.minRate * window) / 1000);
        rateCheck = setInterval(() => {
          const got = upload.bytes - windowStart;
          windowStart = upload.bytes;
          if (got < least) fail(new ApiError(408, `the upload arrived slower than ${o.minRate} bytes/s (${got} bytes in ${window} ms)`, true));
        }, window);
      }
      body.pipe(parser);
    });
    await Promise.all(writes);
  } catch (e) {
    upload.cleanup();
    throw e;
  } finally {
    clearTimeout(deadline);
    clearInterval(rateCheck);
  }
  return upload;
}
