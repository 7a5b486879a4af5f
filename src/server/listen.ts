// Starting and stopping the server: opens the resources, refuses a non-loopback address without a
// bearer token, listens with Node's HTTP timeouts set, and closes everything on `close()`.

import { isIP } from "node:net";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { serve } from "@hono/node-server";
import { createApp, DEFAULT_SETTINGS } from "./app.js";
import { allowedHostNames } from "./origin.js";
import { Resources, type ResourceOptions } from "./resources.js";
import type { ServerSettings } from "./context.js";

/** Options of {@link startServer}. */
export interface ServeOptions extends ResourceOptions, Partial<ServerSettings> {
  host?: string;
  /** 0 picks a free port. Default 8080. */
  port?: number;
  /** Where server errors are logged; default: nowhere. */
  log?: (line: string) => void;
  /** More host names the server answers to without a token (besides the bound address and the loopback names). */
  allowHosts?: readonly string[];
}

/** A listening server: its URL, port and resources. */
export interface RunningServer {
  url: string;
  port: number;
  resources: Resources;
  /** Stops listening and closes the resources. */
  close(): Promise<void>;
}

/** 127.0.0.0/8, ::1 and `localhost`: addresses only this machine reaches. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h === "::1" || h === "0:0:0:0:0:0:0:1") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (h.startsWith("::ffff:") && isIP(h.slice(7)) === 4) return h.slice(7).startsWith("127.");
  return false;
}

/** Opens the resources and listens; refuses a non-loopback host without a token. */
export async function startServer(o: ServeOptions): Promise<RunningServer> {
  const host = o.host ?? "127.0.0.1";
  if (!isLoopback(host) && !o.token) throw new Error(`--host ${host} is reachable from other machines: give --token (every API request must then carry it as a bearer token)`);
  if (o.token !== undefined && o.token.length < 16) throw new Error("--token must be at least 16 characters");
  const resources = await Resources.open(o);
  const settings: ServerSettings = {
    maxUpload: o.maxUpload ?? DEFAULT_SETTINGS.maxUpload,
    requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_SETTINGS.requestTimeoutMs,
    evalTimeoutMs: o.evalTimeoutMs ?? DEFAULT_SETTINGS.evalTimeoutMs,
    uploadTimeoutMs: o.uploadTimeoutMs ?? DEFAULT_SETTINGS.uploadTimeoutMs,
    minUploadRate: o.minUploadRate ?? DEFAULT_SETTINGS.minUploadRate,
    uploadRateWindowMs: o.uploadRateWindowMs ?? DEFAULT_SETTINGS.uploadRateWindowMs,
    token: o.token,
    allowedHosts: o.token ? undefined : allowedHostNames(host, o.allowHosts),
  };
  const app = createApp(resources, { settings, log: o.log });
  let server: Server;
  try {
    server = await new Promise<Server>((resolve, reject) => {
      const s = serve({ fetch: app.fetch, hostname: host, port: o.port ?? 8080 }) as Server;
      s.once("error", reject);
      s.once("listening", () => {
        s.off("error", reject);
        resolve(s);
      });
    });
  } catch (e) {
    await resources.close();
    throw e;
  }
  // Slow clients: headers within 30 s, a whole request (an upload) within the upload deadline (the
  // upload's own deadline and least rate answer first, with a 408 saying which).
  server.headersTimeout = 30_000;
  server.requestTimeout = settings.uploadTimeoutMs + 30_000;
  server.keepAliveTimeout = 5_000;
  server.on("error", (e) => o.log?.(`tartan serve: ${e.message}`));
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    resources,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await resources.close();
    },
  };
}
