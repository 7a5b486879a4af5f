// The MCP server over streamable HTTP (stateless: a fresh server per request, JSON answers) at /mcp, with
// `tartan serve`'s rules: loopback unless a bearer token is given (at least 16 characters), every
// request then carrying it; on loopback without a token, Host must be a loopback name (DNS rebinding).
// A body over the limit is a 413 whether it declares its length or not (chunked), a body that is not
// JSON-RPC a 400, any other failure a JSON-RPC 500; the endpoint goes on serving. The servers of one
// endpoint share one set of gates (heavy tools run a few at a time, light ones answer meanwhile).

import { createHash, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { isLoopback } from "../server/listen.js";
import type { Resources } from "../server/resources.js";
import { createLimits } from "../server/context.js";
import { createMcpServer, toolFiles, type McpServerOptions } from "./server.js";

/** Options of {@link startMcpHttp}. */
export interface McpHttpOptions extends McpServerOptions {
  host?: string;
  /** 0 picks a free port. Default 8765. */
  port?: number;
  token?: string;
  /** Largest request body in bytes; default 4 MiB. */
  maxBody?: number;
}

/** A listening MCP endpoint. */
export interface RunningMcpHttp {
  /** The endpoint's URL (…/mcp). */
  url: string;
  /** The port it listens on (the one chosen when 0 was asked). */
  port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

function jsonRpcError(status: number, message: string, code = -32000): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), { status, headers: { "Content-Type": "application/json" } });
}

/** The Hono application answering MCP requests at /mcp over `resources`. */
export function mcpHttpApp(resources: Resources, o: McpServerOptions & { token?: string; maxBody?: number } = {}): Hono {
  const token = o.token ? digest(o.token) : null;
  const maxBody = o.maxBody ?? 4 * 1024 * 1024;
  // made once: every request's server shares the directories and the gates
  const shared: McpServerOptions = { ...o, files: toolFiles(resources, o.files), limits: o.limits ?? createLimits() };
  const app = new Hono();
  app.all("/mcp", async (c) => {
    if (token) {
      const m = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
      if (!m || !timingSafeEqual(digest(m[1]), token)) {
        const r = jsonRpcError(401, "a bearer token is required (Authorization: Bearer TOKEN)");
        r.headers.set("WWW-Authenticate", 'Bearer realm="tartan"');
        return r;
      }
    } else {
      const host = (c.req.header("host") ?? "").replace(/:\d+$/, "");
      if (!isLoopback(host)) return jsonRpcError(403, `Host ${JSON.stringify(host.slice(0, 100))} is not a loopback name`);
    }
    if (Number(c.req.header("content-length") ?? 0) > maxBody) return jsonRpcError(413, `the request body is larger than ${maxBody} bytes`);
    const server = createMcpServer(resources, shared);
    // the transport counts the bytes of a body without Content-Length (chunked) against the same limit
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: maxBody });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  app.all("*", () => jsonRpcError(404, "the MCP endpoint is /mcp"));
  // anything unexpected is a JSON-RPC error, logged; the endpoint goes on serving
  app.onError((err) => {
    process.stderr.write(`tartan mcp: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    return jsonRpcError(500, "internal error (logged on the server)", -32603);
  });
  return app;
}

/** Listens for MCP requests on `host:port`/mcp; refuses a non-loopback host without a token. */
export async function startMcpHttp(resources: Resources, o: McpHttpOptions = {}): Promise<RunningMcpHttp> {
  const host = o.host ?? "127.0.0.1";
  if (!isLoopback(host) && !o.token) throw new Error(`--host ${host} is reachable from other machines: give --token (every request must then carry it as a bearer token)`);
  if (o.token !== undefined && o.token.length < 16) throw new Error("--token must be at least 16 characters");
  const app = mcpHttpApp(resources, o);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: o.port ?? 8765 }) as Server;
    s.once("error", reject);
    s.once("listening", () => {
      s.off("error", reject);
      resolve(s);
    });
  });
  server.headersTimeout = 30_000;
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/mcp`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
