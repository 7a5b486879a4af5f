// What every request handler can reach (Hono's context variables): the opened resources, the gates
// that bound concurrent work, and the server's settings.

import type { Gate } from "./limits.js";
import type { Resources } from "./resources.js";

/** The server's limits and token. */
export interface ServerSettings {
  /** Largest request body, in bytes (413 beyond). */
  maxUpload: number;
  /** Deadline for a search or lookup, in ms. */
  requestTimeoutMs: number;
  /** Deadline for an evaluation, in ms. */
  evalTimeoutMs: number;
  /** Bearer token every API request must carry; none on loopback unless given. */
  token?: string;
}

/** The gates that bound concurrent work: searches, batch searches and evaluations. */
export interface ServerLimits {
  search: Gate;
  batch: Gate;
  eval: Gate;
}

/** The Hono environment of the app's handlers. */
export interface ServerEnv {
  Variables: {
    resources: Resources;
    limits: ServerLimits;
    settings: ServerSettings;
  };
}
