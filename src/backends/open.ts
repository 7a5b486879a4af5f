// The one place where a location picks the backend: a `clickhouse://` URL opens the ClickHouse
// adapter, anything else is a directory of the embedded store, index or runs database. Every command
// and the server open knowledge sources, indexes and runs databases here (openKnowledgeSource,
// openRetriever, openRuns) and work with the interfaces (KnowledgeSourceReader, Retriever, RunsStore)
// without knowing which backend they have.

import { KnowledgeSource } from "../knowledge/store.js";
import type { KnowledgeSourceReader } from "../knowledge/source.js";
import type { KiltPage } from "../records/types.js";
import { openIndexes } from "../retrieval/open.js";
import { readManifest } from "../retrieval/manifest.js";
import type { HybridOptions } from "../retrieval/hybrid.js";
import type { Retriever, UnitKind } from "../retrieval/types.js";
import { openRunsStore, registerRunsBackend } from "../runs/open.js";
import type { RunsStore } from "../runs/types.js";
import { isClickHouseUrl } from "./clickhouse/client.js";

export { isClickHouseUrl };

// `--runs clickhouse://…`: the runs database in ClickHouse (src/runs chooses backends by URL scheme;
// registered here too, so `openRunsStore` knows it once this module is loaded).
registerRunsBackend("clickhouse", async (url) => (await import("./clickhouse/runs.js")).ClickHouseRunsStore.open(url.href));

/** The runs database at `location`: a ClickHouse URL, a directory (default .tartan/runs or $TARTAN_RUNS) or a URL of another registered backend. */
export async function openRuns(location?: string): Promise<RunsStore> {
  if (location !== undefined && isClickHouseUrl(location)) return (await import("./clickhouse/runs.js")).ClickHouseRunsStore.open(location);
  return openRunsStore(location);
}

/** The knowledge source at `location`: a ClickHouse URL or an embedded store directory. */
export async function openKnowledgeSource(location: string): Promise<KnowledgeSourceReader> {
  if (isClickHouseUrl(location)) return (await import("./clickhouse/knowledge.js")).ClickHouseKnowledgeSource.open(location);
  return KnowledgeSource.open(location);
}

/** The pages of the knowledge source at `location`, in input order (closed at the end). */
export async function* pagesOf(location: string): AsyncGenerator<KiltPage> {
  const ks = await openKnowledgeSource(location);
  try {
    yield* ks.pages();
  } finally {
    await ks.close();
  }
}

/** The retriever at `location`: a ClickHouse BM25 index URL, or index directories (several: their fusion). */
export async function openRetriever(location: string | readonly string[], options: HybridOptions & { batch?: number } = {}): Promise<Retriever> {
  const all = typeof location === "string" ? [location] : [...location];
  const remote = all.filter(isClickHouseUrl);
  if (remote.length === 0) return openIndexes(all, options);
  if (all.length > 1) throw new Error(`${remote[0]}: a ClickHouse index cannot be fused with other indexes yet; give it alone`);
  const { openClickHouseBm25 } = await import("./clickhouse/bm25.js");
  const { MarkerStripping } = await import("../retrieval/markers.js");
  return new MarkerStripping(await openClickHouseBm25(remote[0], { batch: options.batch }));
}

/** The kind and unit of the index at `location` (its manifest, or a ClickHouse index's meta). */
export async function describeIndex(location: string): Promise<{ kind: string; unit: UnitKind }> {
  if (!isClickHouseUrl(location)) return readManifest(location);
  const { ClickHouseBm25Retriever } = await import("./clickhouse/bm25.js");
  const r = await ClickHouseBm25Retriever.open(location);
  try {
    return { kind: r.kind, unit: r.unit };
  } finally {
    await r.close();
  }
}
