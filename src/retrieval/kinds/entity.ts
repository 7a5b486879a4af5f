// The entity kind (mentions of page titles and anchor texts, ../entity/): page level only, built from
// pages (not units), resumable, reads KILT inputs with their entity markers; `verify` adds the alias
// file's full check (SHA-256, every line, the key index rebuilt) that opening leaves out.

import { formatCount as fmt, type ProgressEvent } from "../../util/progress.js";
import type { IndexKind } from "./kind.js";
import { ENTITY_FORMAT_VERSION } from "../entity/format.js";

export const entityKind: IndexKind = {
  name: "entity",
  version: ENTITY_FORMAT_VERSION,
  defaultUnit: "page",
  units: ["page"],
  fromTable: false,
  resumes: true,
  stripMarkers: false,
  async build(b) {
    const { buildEntityIndex } = await import("../entity/build.js");
    const feed = b.pages();
    // Pages from a store are counted against its page count; from a file, by bytes against its size.
    const report = b.onProgress ?? (() => {});
    const bar: ProgressEvent = { label: "index entity", unit: "pages", totalBytes: feed.totalBytes, totalItems: feed.totalPages, countItems: feed.totalPages !== undefined, items: 0 };
    let reading = true;
    try {
      const s = await buildEntityIndex(feed.pages, b.dir, { ...b.params, source: b.source }, undefined, {
        memory: b.memory,
        ownDir: true,
        onProgress: (p) => {
          if (p.phase === "read") return report({ ...bar, items: p.pages, bytes: feed.bytes() });
          if (reading) report({ ...bar, done: true });
          reading = false;
          report({ label: "index entity", status: () => (p.phase === "resolve" ? `resolving anchors (${fmt(p.runs)} runs)` : `merging: ${fmt(p.aliases ?? 0)} aliases`) });
        },
      });
      if (reading) report({ ...bar, done: true });
      const detail = `${fmt(s.aliases)} aliases, ${fmt(s.anchors)} anchors (${fmt(s.unresolvedAnchors)} to pages not in the source)${s.runs > 0 ? `, ${fmt(s.runs)} runs` : ""}${s.resumedPages > 0 ? `, resumed after ${fmt(s.resumedPages)} pages` : ""}`;
      return { units: s.units, detail };
    } finally {
      report({ label: "index entity", status: () => "", done: true });
    }
  },
  async open(dir, manifest) {
    const { EntityRetriever } = await import("../entity/search.js");
    return new EntityRetriever(dir, manifest);
  },
  async verify(dir) {
    (await import("../entity/search.js")).checkEntityIndex(dir);
  },
};
