// What every request handler can reach (Hono's context variables): the opened resources, the gates
// that bound concurrent work (made by createLimits), and the server's settings.

import { Gate } from "./limits.js";
import type { Resources } from "./resources.js";

/** The server's limits and token. */
export interface ServerSettings {
  /** Largest request body, in bytes (413 beyond). */
  maxUpload: number;
  /** Deadline for a search or lookup, in ms. */
  requestTimeoutMs: number;
  /** Deadline for an evaluation, in ms. */
  evalTimeoutMs: number;
  /** Deadline for receiving a whole upload, in ms (408 past it); uploads are read before an evaluation slot is taken. */
  uploadTimeoutMs: number;
  /** Least upload rate, in bytes per second, measured over each `uploadRateWindowMs` (408 below it). */
  minUploadRate: number;
  /** The window the upload rate is measured over, in ms. */
  uploadRateWindowMs: number;
  /** Bearer token every API request must carry; none on loopback unless given. */
  token?: string;
  /**
   * Host names (without port) a request's `Host` header may carry when there is no token, and the
   * origins state-changing requests may come from (DNS-rebinding and cross-site protection). Unset:
   * no check (an application embedding `createApp` checks for itself); `startServer` sets it.
   */
  allowedHosts?: readonly string[];
}

/** The gates that bound concurrent work: searches, batch searches, uploads being received, evaluations and CPU-heavy computations (leaderboard, compare). */
export interface ServerLimits {
  search: Gate;
  batch: Gate;
  upload: Gate;
  eval: Gate;
  compute: Gate;
}

/** The gates at the server's sizes (`tartan serve`; `tartan mcp` takes the same): 64 searches, 2 batch searches, 8 uploads, 2 evaluations and 2 computations at once, each with a bounded queue. */
export function createLimits(): ServerLimits {
  return {
    search: new Gate("search", 64, 1024),
    batch: new Gate("batch search", 2, 8),
    upload: new Gate("upload", 8, 8),
    eval: new Gate("evaluation", 2, 8),
    compute: new Gate("computation", 2, 8),
  };
}

/** The Hono environment of the app's handlers. */
export interface ServerEnv {
  Variables: {
    resources: Resources;
    limits: ServerLimits;
    settings: ServerSettings;
  };
}
