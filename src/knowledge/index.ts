// Public API of the knowledge source: the store (KILT's KnowledgeSource API), the ingest that builds
// it, the text of a provenance span, and the synthetic knowledge source used by benchmarks and tests.

export { KnowledgeSource, StoreError, readStoreInfo, type StoreInfo } from "./store.js";
export { ingest, IngestError, type IngestOptions, type IngestResult } from "./ingest.js";
export { provenanceText, SpanError, type SpanLocation } from "./span.js";
export { titlesFromUrl, pyUnquote, pyQueryParam } from "./url.js";
export { checkPage } from "./prepare.js";
export { FORMAT, STORE_FILE, storeFile, type StoreMeta } from "./format.js";
export { syntheticPages, writeSyntheticKnowledgeSource, type SyntheticOptions } from "./synthetic.js";
