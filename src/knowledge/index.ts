// Public API of the knowledge source (`import { knowledge } from "tartan"`): the store (KILT's
// KnowledgeSource API), the ingest that builds it, the text of a provenance span, the synthetic
// knowledge source used by benchmarks and tests, and the builders of pages and passages
// (SQuAD, MediaWiki dumps, KILT-style chunking; docs/knowledge-build.md).

export type { KnowledgeSourceReader, MaybePromise } from "./source.js";
export { KnowledgeSource, StoreError, readStoreInfo, type StoreInfo, type PageTextRow } from "./store.js";
export type { PageText } from "./codec.js";
export { ingest, IngestError, type IngestOptions, type IngestResult } from "./ingest.js";
export { provenanceText, SpanError, type SpanLocation } from "./span.js";
export { titlesFromUrl, pyUnquote, pyQueryParam } from "./url.js";
export { checkPage } from "./prepare.js";
export { FORMAT, STORE_FILE, storeFile, type StoreMeta } from "./format.js";
export { syntheticPages, writeSyntheticKnowledgeSource, KILT_SHAPE, type SyntheticOptions } from "./synthetic.js";
export * from "./passages.js";
export * from "./squad.js";
export * from "./dump.js";
export { fromSquad, fromDump, convertSquad } from "./build.js";
export * from "./sentences.js";
export * from "./codepoints.js";
export * from "./wiki-title.js";
export type { ProgressOptions, ProgressEvent, OnProgress } from "../util/progress.js";
