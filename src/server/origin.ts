// Who may talk to a server without a token: requests whose `Host` header names the server (the bound
// address, loopback names, names given with --allow-host), so a web page that rebinds its own DNS name
// to 127.0.0.1 is refused (DNS rebinding), and state-changing requests (POST, …) only from the
// server's own origin, so no other web page can make a user's server run evaluations. Also: answers
// never carry local file paths (an absolute path in a message becomes its last component).

import { basename } from "node:path";
import { ApiError } from "./errors.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The host name of a `Host` header value (lowercase, without port; IPv6 without brackets), or null when malformed. */
export function hostName(header: string): string | null {
  const h = header.trim().toLowerCase();
  const m = /^\[([0-9a-f:.]+)\](?::\d{1,5})?$/.exec(h) ?? /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(h);
  return m ? m[1].replace(/\.$/, "") : null;
}

/** The names a server bound to `host` answers to without a token: `host` itself, the loopback names, and `extra`. */
export function allowedHostNames(host: string, extra: readonly string[] = []): string[] {
  const bound = host.replace(/^\[|\]$/g, "").toLowerCase();
  return [...new Set([bound, "localhost", "127.0.0.1", "::1", ...extra.map((h) => h.toLowerCase())])];
}

/**
 * Throws a 403 when the request's `Host` is not among `allowed`, or when a state-changing request comes
 * from another origin (its `Origin` is not `http://HOST`, or the browser marks it cross-site).
 */
export function checkOrigin(method: string, headers: { get(name: string): string | null | undefined }, allowed: ReadonlySet<string>): void {
  const host = headers.get("host") ?? "";
  const name = hostName(host);
  if (name === null || !allowed.has(name))
    throw new ApiError(403, `the Host header ${JSON.stringify(host.slice(0, 100))} does not name this server (answers to ${[...allowed].join(", ")}; start it with --allow-host NAME for another name, or give --token)`);
  if (SAFE_METHODS.has(method.toUpperCase())) return;
  const origin = headers.get("origin");
  const site = headers.get("sec-fetch-site");
  let same = true;
  if (origin !== null && origin !== undefined) {
    try {
      const u = new URL(origin);
      same = (u.protocol === "http:" || u.protocol === "https:") && u.host.toLowerCase() === host.trim().toLowerCase();
    } catch {
      same = false; // "null" (a sandboxed page, a file) or garbage
    }
  }
  if (site === "cross-site" || site === "same-site") same = false;
  if (!same) throw new ApiError(403, `a ${method.toUpperCase()} from another origin (${JSON.stringify((origin ?? site ?? "").slice(0, 100))}) is refused without a token`);
}

/** `text` with every absolute local path replaced by its last component (API paths `/api/…` kept). */
export function withoutLocalPaths(text: string): string {
  return text.replace(/(^|[\s("'=:,[])((?:\/[^\s/"'(),:[\]]+){2,}\/?)/g, (all, lead: string, path: string) => (path.startsWith("/api/") ? all : `${lead}${basename(path)}`));
}
