// The embedded runs database: a directory (or `sqlite:DIR`, `sqlite://` and `file://` URLs) opens the
// SQLite store. Runs databases of other backends (`clickhouse://…`) open through src/backends
// (`openRuns`), which picks the backend from the location.

import { join } from "node:path";
import { SqliteRunsStore } from "./sqlite.js";
import type { RunsStore } from "./types.js";

/** The default runs directory: `.tartan/runs` under the working directory (or $TARTAN_RUNS). */
export function defaultRunsLocation(): string {
  return process.env.TARTAN_RUNS || join(".tartan", "runs");
}

/** Opens the SQLite runs store at `location` (default: defaultRunsLocation()); a URL of another scheme is refused (open it with tartan/backends' `openRuns`). */
export async function openRunsStore(location: string = defaultRunsLocation()): Promise<RunsStore> {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//iu.exec(location)?.[1]?.toLowerCase();
  if (scheme === undefined) return SqliteRunsStore.open(location.startsWith("sqlite:") ? location.slice("sqlite:".length) : location);
  if (scheme === "file" || scheme === "sqlite") return SqliteRunsStore.open(new URL(location).pathname);
  throw new Error(`${location}: no runs backend for "${scheme}://" here (a directory, sqlite: or file://); other backends' runs databases open with openRuns of tartan/backends`);
}
