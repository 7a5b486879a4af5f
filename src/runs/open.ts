// The one place a runs backend is chosen: a directory (or `sqlite:DIR`) opens the embedded SQLite
// store; a URL whose scheme a backend registered (e.g. `clickhouse://…`) opens that backend. Backends
// register a factory here, so adding one touches no caller.

import { join } from "node:path";
import { SqliteRunsStore } from "./sqlite.js";
import type { RunsStore } from "./types.js";

/** The default runs directory: `.tartan/runs` under the working directory (or $TARTAN_RUNS). */
export function defaultRunsLocation(): string {
  return process.env.TARTAN_RUNS || join(".tartan", "runs");
}

/** Opens a runs store for a URL of a registered scheme. */
export type RunsBackendFactory = (url: URL) => Promise<RunsStore>;

const backends = new Map<string, RunsBackendFactory>();

/** Makes `scheme://…` locations open with `factory` (scheme without the colon, lower case). */
export function registerRunsBackend(scheme: string, factory: RunsBackendFactory): void {
  backends.set(scheme.toLowerCase(), factory);
}

/** Opens the runs store at `location` (default: defaultRunsLocation()). */
export async function openRunsStore(location: string = defaultRunsLocation()): Promise<RunsStore> {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//iu.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined) return SqliteRunsStore.open(location.startsWith("sqlite:") ? location.slice("sqlite:".length) : location);
  if (scheme === "file" || scheme === "sqlite") return SqliteRunsStore.open(new URL(location).pathname);
  const factory = backends.get(scheme);
  if (!factory) throw new Error(`no runs backend for "${scheme}://" (known: a directory${[...backends.keys()].map((s) => `, ${s}://`).join("")})`);
  return factory(new URL(location));
}
