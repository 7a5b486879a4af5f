// Public API of the backends (`import … from "tartan/backends"`): the one place a location picks the
// embedded store/index or ClickHouse, the ClickHouse adapters themselves (knowledge source, BM25, dense, runs), and the local cluster scripts
// (docs/scale-out.md).

export { openKnowledgeSource, openRetriever, searchPoolFor, openRuns, pagesOf, describeIndex, isClickHouseUrl, buildIndexAt, ingestAt, knowledgeSourceInfo, type IndexBuildAtOptions, type IngestAtResult, type KnowledgeSourceInfo } from "./open.js";
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
