// Public API of the server (`tartan/server`): `tartan serve` embedded in a program. `startServer` opens
// a knowledge source, indexes and a runs database and listens (loopback unless a token is given);
// `createApp` builds the Hono application over opened `Resources` for a host's own HTTP server or
// router. The server uses the library; nothing in the library imports it.
export { startServer, isLoopback, type ServeOptions, type RunningServer } from "./listen.js";
export { createApp, DEFAULT_SETTINGS, type AppOptions } from "./app.js";
export { Resources, type ResourceOptions, type LoadedIndex } from "./resources.js";
export { ServedRerankers, splitRerankerFlags, searchReranked, DEFAULT_MAX_RERANK_DEPTH, type RerankChoice } from "./rerankers.js";
export { openApiDocument } from "./openapi.js";
export type { ServerSettings, ServerEnv, ServerLimits } from "./context.js";
export { createLimits } from "./context.js";
export { Gate, withDeadline } from "./limits.js";
export { RunRecords, type LoadedRun } from "./run-records.js";
export { FILTERS, type Passage, type RecordFilter, type RunRecordView } from "./api-types.js";
export type {
  BatchSearchAnswer,
  CompareAnswer,
  Disagreement,
  ErrorBody,
  EvalAnswer,
  EvalRefusal,
  HealthAnswer,
  IndexInfo,
  LeaderboardAnswer,
  LeaderboardRow,
  PageView,
  ProvenanceTextAnswer,
  RecordsAnswer,
  RunAnswer,
  RunsAnswer,
  RunView,
  SearchAnswer,
  SearchHit,
} from "./api-types.js";
export type { StaticFile } from "./static.js";
