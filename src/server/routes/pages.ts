// Knowledge-source endpoints: a page by id (`GET /api/pages/:id`), by title (`GET /api/pages?title=`),
// and the text of a provenance span (`GET /api/provenance`). Ids and titles are looked up in the
// store's SQLite indexes; nothing from the request reaches the file system.

import type { Hono } from "hono";
import type { KiltPage } from "../../records/types.js";
import { provenanceText, SpanError } from "../../knowledge/span.js";
import { ApiError } from "../errors.js";
import { int, str } from "../params.js";
import type { PageView, ProvenanceTextAnswer } from "../api-types.js";
import type { ServerEnv } from "../context.js";

/** A page as the API returns it: the KILT page fields the explorer shows. */
export function pageBody(p: KiltPage): PageView {
  return {
    wikipedia_id: p.wikipedia_id,
    wikipedia_title: p.wikipedia_title,
    text: p.text,
    anchors: p.anchors ?? [],
    categories: p.categories ?? null,
    url: p.history?.url ?? null,
  };
}

/** Characters of encoded page answers kept for repeated lookups (about twice as many bytes). */
const PAGE_CACHE_CHARS = 16 << 20;

/**
 * The encoded answers of the most recently asked pages, least recently used dropped first: a store is
 * read-only while served, so an answer, once encoded, stays right; a repeated lookup then skips the
 * SQLite read, decompression, JSON.parse and JSON.stringify of the page.
 */
export class PageBodyCache {
  private readonly bodies = new Map<string, string>();
  private chars = 0;

  constructor(private readonly maxChars = PAGE_CACHE_CHARS) {}

  get(id: string): string | undefined {
    const body = this.bodies.get(id);
    if (body !== undefined) {
      this.bodies.delete(id);
      this.bodies.set(id, body);
    }
    return body;
  }

  set(id: string, body: string): void {
    if (body.length > this.maxChars / 8 || this.bodies.has(id)) return;
    this.bodies.set(id, body);
    this.chars += body.length;
    for (const [k, v] of this.bodies) {
      if (this.chars <= this.maxChars) break;
      this.bodies.delete(k);
      this.chars -= v.length;
    }
  }

  get size(): number {
    return this.bodies.size;
  }
}

export function registerPages(app: Hono<ServerEnv>): void {
  const cache = new PageBodyCache();
  app.get("/api/pages/:id", async (c) => {
    const id = c.req.param("id");
    if (id.length > 1000) throw new ApiError(400, "id is longer than 1000 characters");
    let body = cache.get(id);
    if (body === undefined) {
      const page = await c.var.resources.store().getPageById(id);
      if (!page) throw new ApiError(404, `no page with wikipedia_id ${JSON.stringify(id.slice(0, 100))}`);
      body = JSON.stringify(pageBody(page));
      cache.set(id, body);
    }
    return c.body(body, 200, { "Content-Type": "application/json" });
  });

  app.get("/api/pages", async (c) => {
    const title = str(c.req.query(), "title", { required: true, max: 1000 });
    const page = await c.var.resources.store().getPageByTitle(title);
    if (!page) throw new ApiError(404, `no page titled ${JSON.stringify(title.slice(0, 100))}`);
    return c.json(pageBody(page));
  });

  app.get("/api/provenance", async (c) => {
    const q = c.req.query();
    const id = str(q, "wikipedia_id", { required: true, max: 1000 });
    const MAX = 10_000_000;
    const span = {
      start_paragraph_id: int(q, "start_paragraph_id", { min: 0, max: MAX, required: true }),
      end_paragraph_id: q.end_paragraph_id ? int(q, "end_paragraph_id", { min: 0, max: MAX }) : undefined,
      start_character: q.start_character ? int(q, "start_character", { min: 0, max: MAX }) : undefined,
      end_character: q.end_character ? int(q, "end_character", { min: 0, max: MAX }) : undefined,
    };
    const page = await c.var.resources.store().getPageById(id);
    if (!page) throw new ApiError(404, `no page with wikipedia_id ${JSON.stringify(id.slice(0, 100))}`);
    try {
      return c.json({ wikipedia_id: page.wikipedia_id, wikipedia_title: page.wikipedia_title, ...span, text: provenanceText(page, span) } satisfies ProvenanceTextAnswer);
    } catch (e) {
      if (e instanceof SpanError) throw new ApiError(422, e.message);
      throw e;
    }
  });
}
