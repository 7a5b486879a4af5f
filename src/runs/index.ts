// The runs database: recorded runs with their per-query scores, behind one interface (RunsStore).
export * from "./types.js";
export { openRunsStore, defaultRunsLocation } from "./open.js";
export { SqliteRunsStore, RUNS_FILE } from "./sqlite.js";
export { makeRun, fileChecksum, gitCommit, type RecordOptions } from "./record.js";
export { buildLeaderboard, leaderboardTables, renderLeaderboard, BOARD_KINDS, type Leaderboard, type BoardKind, type BoardCell } from "./leaderboard.js";
export { exportEvalAi, type EvalAiFile } from "./evalai.js";
