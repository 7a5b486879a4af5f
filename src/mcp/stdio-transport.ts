// The MCP stdio transport `tartan mcp` uses: one JSON-RPC message a line on stdin, answers on stdout.
// Unlike the SDK's, bad input never ends the connection: a line that is not JSON is answered with a
// parse error (-32700), JSON that is not a JSON-RPC message with an invalid request (-32600, with its id
// when it has one), and a line longer than the limit with -32600 as soon as the limit is passed (the
// rest of that line is skipped); the next line is read as usual. Only the end of stdin closes it. While
// the client does not read its answers (stdout full), no more requests are read.

import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Default longest request line, in bytes (the HTTP transport's body limit). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** JSON-RPC messages a line on `input`, answers on `output`; bad lines are answered, never fatal. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** True while the rest of an over-long line is being skipped. */
  private skipping = false;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    readonly maxLineBytes = MAX_LINE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    for (;;) {
      const nl = buf.indexOf(0x0a);
      const piece = nl < 0 ? buf : buf.subarray(0, nl);
      if (!this.skipping) {
        if (this.size + piece.length > this.maxLineBytes) {
          this.parts = [];
          this.size = 0;
          this.skipping = true;
          this.reply(ErrorCode.InvalidRequest, `Invalid Request: the request is longer than ${this.maxLineBytes} bytes (the rest of its line is skipped)`, null);
        } else {
          this.parts.push(piece);
          this.size += piece.length;
        }
      }
      if (nl < 0) return;
      buf = buf.subarray(nl + 1);
      if (this.skipping) this.skipping = false;
      else {
        const line = Buffer.concat(this.parts, this.size).toString("utf8");
        this.parts = [];
        this.size = 0;
        this.handle(line);
      }
    }
  };

  private readonly onEnd = () => void this.close();
  private readonly onInputError = (e: Error) => this.onerror?.(e);
  // stdout gone (the client exited): nothing more can be answered; the end of stdin closes the transport
  private readonly onOutputError = (e: Error) => this.onerror?.(e);

  private handle(text: string): void {
    const line = text.replace(/\r$/, "");
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      return this.reply(ErrorCode.ParseError, `Parse error: ${(e as Error).message}`, null);
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = (value as { id?: unknown } | null)?.id;
      return this.reply(ErrorCode.InvalidRequest, "Invalid Request: not a JSON-RPC 2.0 message (jsonrpc \"2.0\" with a method, or a result or error with an id)", typeof id === "string" || typeof id === "number" ? id : null);
    }
    this.onmessage?.(parsed.data);
  }

  private reply(code: number, message: string, id: string | number | null): void {
    this.write(`${JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })}\n`);
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed || this.output.destroyed) return resolve();
      if (this.output.write(text)) return resolve();
      // the client is not reading its answers: read no more requests until it does
      this.input.pause();
      this.output.once("drain", () => {
        if (!this.closed) this.input.resume();
        resolve();
      });
    });
  }

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("error", this.onInputError);
    this.output.on("error", this.onOutputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(`${JSON.stringify(message)}\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("error", this.onInputError);
    this.input.pause(); // the output's error listener stays: a late EPIPE must not become an uncaught error
    this.parts = [];
    this.onclose?.();
  }
}
