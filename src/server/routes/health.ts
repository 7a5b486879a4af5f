// `GET /api/health`: what the server has loaded (store pages, each index's kind, unit and size, the
// number of recorded runs, the named rerankers), so a client knows what it can ask for.

import type { Hono } from "hono";
import { TARTAN_VERSION, answersText } from "../../retrieval/manifest.js";
import type { HealthAnswer } from "../api-types.js";
import type { ServerEnv } from "../context.js";

export function registerHealth(app: Hono<ServerEnv>): void {
  app.get("/api/health", async (c) => {
    const r = c.var.resources;
    return c.json({
      status: "ok",
      version: TARTAN_VERSION,
      ks: r.ks ? { pages: await r.ks.count() } : null,
      indexes: r.indexes.map((i) => ({ name: i.name, kind: i.manifest.kind, unit: i.manifest.unit, units: i.manifest.units, text: answersText(i.manifest) })),
      data: r.data !== null,
      runs: r.runs ? (await r.runs.list()).length : null,
      rerankers: r.rerankers.names(),
    } satisfies HealthAnswer);
  });
}
