// Public API of the backends (`import … from "tartan/backends"`): the `Backend` interface and its registry
// (a location's scheme picks the backend once: a directory is the embedded one's, `clickhouse://` is
// ClickHouse's), the functions that open what a location names through it, the ClickHouse adapters
// themselves (knowledge source, BM25, dense, runs), and the local cluster scripts (docs/scale-out.md).

export { openKnowledgeSource, openRetriever, searchPoolFor, openRuns, pagesOf, describeIndex, canonicalLocation, servedIndexName, buildIndexAt, ingestAt, knowledgeSourceStats, type IndexBuildAtOptions } from "./open.js";
export { capability, type Backend, type BackendCapability, type BackendBuildOptions, type BackendIngestOptions, type BackendOpenOptions, type IngestReport, type KnowledgeSourceStats } from "./backend.js";
export { BACKENDS, backendFor, registerBackend, isRemote, remoteSchemes, remoteUrlText, schemeOf } from "./registry.js";
export { Registry, type Descriptor } from "../util/registry.js";
export { embeddedBackend } from "./embedded/backend.js";
export { clickHouseBackend } from "./clickhouse/backend.js";
export { isClickHouseUrl } from "./clickhouse/client.js";
export { ClickHouseDatabase, ClickHouseEndpoint, ClickHouseError, parseClickHouseUrl, type ClickHouseUrl } from "./clickhouse/client.js";
export { ClickHouseKnowledgeSource, ingestClickHouse, clickHouseKsInfo, type ClickHouseIngestOptions, type ClickHouseIngestResult } from "./clickhouse/knowledge.js";
export { ClickHouseBm25Retriever, ClickHouseUnits, buildBm25ClickHouse, openClickHouseBm25, type ClickHouseBm25Stats, type ClickHouseBm25BuildOptions, type ClickHouseBm25OpenOptions } from "./clickhouse/bm25.js";
export type { ImpactStats } from "./clickhouse/bm25-impacts.js";
export { ClickHouseDenseRetriever, buildDenseClickHouse, openClickHouseDense, type ClickHouseDenseStats, type ClickHouseDenseOpenOptions } from "./clickhouse/dense.js";
export { ClickHouseRunsStore } from "./clickhouse/runs.js";
export { startCluster, stopCluster, readCluster, type RunningCluster, type StartOptions } from "../cluster/process.js";
export type { ClickHouseKsInfo } from "./clickhouse/knowledge.js";
export type { RunningShard } from "../cluster/process.js";
export type { UnitSource } from "../retrieval/units/unit.js";
