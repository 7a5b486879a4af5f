// The HTTP application (Hono): security headers, the Host and origin checks of a server without a
// token (src/server/origin.ts), the bearer-token check, deadlines, the JSON API
// routes, the OpenAPI document and the web explorer's static files. Every error becomes a JSON body
// `{status, error}` naming no local path; an unexpected one is logged and answered with a 500 that
// shows no stack, and the server goes on serving; a client's fault on an upload (cut, stalled, gone)
// is one log line; a backend server that does not answer (a ClickHouse shard down) is a 503 naming it.

import { createHash, timingSafeEqual } from "node:crypto";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError, errorBody } from "./errors.js";
import { withDeadline } from "./limits.js";
import { checkOrigin, withoutLocalPaths } from "./origin.js";
import { isUnavailable } from "../backends/backend.js";
import type { Resources } from "./resources.js";
import { createLimits, type ServerEnv, type ServerLimits, type ServerSettings } from "./context.js";
import { openApiDocument } from "./openapi.js";
import { registerSearch } from "./routes/search.js";
import { registerPages } from "./routes/pages.js";
import { registerEval } from "./routes/eval.js";
import { registerHealth } from "./routes/health.js";
import { registerRuns } from "./routes/runs.js";
import { loadStatic, type StaticFile } from "./static.js";

/** The server's default limits. */
export const DEFAULT_SETTINGS: ServerSettings = {
  maxUpload: 256 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  evalTimeoutMs: 10 * 60_000,
  uploadTimeoutMs: 5 * 60_000,
  minUploadRate: 16 * 1024,
  uploadRateWindowMs: 10_000,
};

/** Options of {@link createApp}. */
export interface AppOptions {
  settings?: Partial<ServerSettings>;
  /** The explorer's files; default: dist/web. */
  staticFiles?: Map<string, StaticFile>;
  /** Where unexpected errors are logged; default standard error. */
  log?: (line: string) => void;
}

function digest(s: string): Buffer {
  return createHash("sha256").update(s).digest();
}

/** Builds the application over opened resources. */
export function createApp(resources: Resources, o: AppOptions = {}): Hono<ServerEnv> {
  const settings: ServerSettings = { ...DEFAULT_SETTINGS, ...o.settings };
  const limits: ServerLimits = createLimits();
  const files = o.staticFiles ?? loadStatic();
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const token = settings.token ? digest(settings.token) : null;
  const allowed = !token && settings.allowedHosts ? new Set(settings.allowedHosts.map((h) => h.toLowerCase())) : null;
  const app = new Hono<ServerEnv>();

  // Without a token, the browser is the threat: a foreign Host (DNS rebinding) or a cross-origin POST.
  if (allowed) app.use("*", async (c, next) => {
    checkOrigin(c.req.method, c.req.raw.headers, allowed);
    await next();
  });

  app.use("*", async (c, next) => {
    await next();
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'");
  });

  app.use("/api/*", async (c, next) => {
    if (token) {
      const auth = c.req.header("authorization") ?? "";
      const m = /^Bearer\s+(\S+)$/i.exec(auth);
      if (!m || !timingSafeEqual(digest(m[1]), token)) {
        c.header("WWW-Authenticate", 'Bearer realm="tartan"');
        throw new ApiError(401, "a bearer token is required (Authorization: Bearer TOKEN)");
      }
    }
    c.set("resources", resources);
    c.set("limits", limits);
    c.set("settings", settings);
    // Evaluations have their own (longer) deadline; everything else gets the request deadline.
    if (c.req.path === "/api/eval") await next();
    else await withDeadline(next(), settings.requestTimeoutMs, "the request");
  });

  // JSON bodies (batch search) under the same limit as uploads; uploads count their bytes as they stream.
  app.post("/api/search", bodyLimit({ maxSize: settings.maxUpload, onError: () => {
    throw new ApiError(413, `the body is larger than the limit of ${settings.maxUpload} bytes`);
  } }));
  registerHealth(app);
  registerSearch(app);
  registerPages(app);
  registerEval(app);
  registerRuns(app);
  app.get("/api/openapi.json", (c) => c.json(openApiDocument()));
  app.all("/api/*", () => {
    throw new ApiError(404, "no such endpoint (see /api/openapi.json)");
  });

  app.get("*", (c) => {
    const path = c.req.path === "/" ? "/index.html" : c.req.path;
    const f = files.get(path);
    if (!f) throw new ApiError(404, files.size === 0 ? "the web explorer is not built (npm run build)" : "not found");
    c.header("Content-Type", f.type);
    c.header("Cache-Control", "no-cache");
    return c.body(new Uint8Array(f.body));
  });

  app.onError((err, c) => {
    // A request answered before its body was read: close the connection rather than read the rest.
    if (c.req.method !== "GET") c.header("Connection", "close");
    if (err instanceof ApiError) {
      if (err.logged) log(`tartan serve: ${c.req.method} ${c.req.path}: ${err.status} ${err.message}`);
      return c.json(errorBody(err.status, withoutLocalPaths(err.message)), err.status);
    }
    if (err instanceof HTTPException) return c.json(errorBody(err.status, withoutLocalPaths(err.message) || "request failed"), err.status as ContentfulStatusCode);
    // a backend's server that does not answer (a ClickHouse shard down): 503 naming it, one log line, no stack
    if (isUnavailable(err)) {
      log(`tartan serve: ${c.req.method} ${c.req.path}: 503 ${err instanceof Error ? err.message : String(err)}`);
      c.header("Retry-After", "5");
      return c.json(errorBody(503, withoutLocalPaths(err instanceof Error ? err.message : String(err))), 503);
    }
    log(`tartan serve: ${c.req.method} ${c.req.path}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return c.json(errorBody(500, "internal error (logged on the server)"), 500);
  });
  app.notFound((c) => c.json(errorBody(404, "not found"), 404));
  return app;
}
