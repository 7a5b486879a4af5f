// The registry of backends (./backend.ts) and the one rule that picks one from a location: a URL's scheme
// names its backend (`clickhouse://…`), a plain path is the embedded backend's directory. Adding a backend:
// its folder under src/backends/ with a descriptor, and one line in BACKENDS below.

import { Registry } from "../util/registry.js";
import type { Backend } from "./backend.js";
import { clickHouseBackend } from "./clickhouse/backend.js";
import { embeddedBackend } from "./embedded/backend.js";

/** Every backend, the embedded one (plain paths) first. */
export const BACKENDS = new Registry<Backend>("backend", [embeddedBackend, clickHouseBackend]);

/** Makes `backend` answer the locations of its schemes (a library's own store, a test's in-memory runs). */
export function registerBackend(backend: Backend): Backend {
  const taken = backend.schemes.find((s) => BACKENDS.all().some((b) => b.schemes.includes(s.toLowerCase())));
  if (taken !== undefined) throw new Error(`backend ${JSON.stringify(backend.name)}: the scheme ${taken}:// is already another backend's`);
  return BACKENDS.register(backend);
}

/** The URL scheme of `location` (lower case, without `://`), or undefined for a plain path. */
export function schemeOf(location: string): string | undefined {
  return /^([a-z][a-z0-9+.-]*):\/\//iu.exec(location)?.[1]?.toLowerCase();
}

/** The backend `location` names: its URL scheme's, or the embedded one for a plain path; throws naming the known schemes. */
export function backendFor(location: string): Backend {
  const scheme = schemeOf(location);
  if (scheme === undefined) return embeddedBackend;
  const b = BACKENDS.all().find((d) => d.schemes.includes(scheme));
  if (b === undefined) throw new Error(`${location}: no backend for "${scheme}://" (known: a directory${remoteSchemes().map((s) => `, ${s}://`).join("")})`);
  return b;
}

/** Whether `location` is a URL of a backend other than the embedded one (a database, not a directory). */
export function isRemote(location: string): boolean {
  const scheme = schemeOf(location);
  return scheme !== undefined && remoteSchemes().includes(scheme);
}

/** The URL schemes of the backends other than the embedded one, in registration order. */
export function remoteSchemes(): string[] {
  return BACKENDS.all().flatMap((b) => (b === embeddedBackend ? [] : b.schemes));
}

/** `a clickhouse:// URL` (or `a clickhouse:// or x:// URL`): the remote locations a flag takes, for messages. */
export function remoteUrlText(): string {
  const s = remoteSchemes().map((x) => `${x}://`);
  return `a ${s.length <= 1 ? (s[0] ?? "database") : `${s.slice(0, -1).join(", ")} or ${s[s.length - 1]}`} URL`;
}
