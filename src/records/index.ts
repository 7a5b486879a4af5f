// Public API of KILT records (`tartan/records`): the record and page types, the streaming JSONL reader
// and writer with line-numbered errors (which also read Hugging Face Parquet exports), the format checks
// behind `tartan validate`, and topic files (TSV, TREC, JSONL) read as queries.
export * from "./types.js";
export { readJsonl, readJsonlAll, scanJsonl, writeJsonl, JsonlWriter, LineError, type JsonlItem, type ScanOptions, type ScanStats } from "./jsonl.js";
export { validateFile, formatReport, type ValidateOptions, type ValidationReport, type ProblemSummary, type Severity, type FileKind } from "./validate.js";
export { isParquetPath, taskRecordFromRow, pageFromRow, parquetLineBatches, FieldError, ParquetRowError, type ParquetLayout } from "./parquet.js";
export type { Row as ParquetRow } from "./parquet.js";
export { setDefaultMaxLineBytes } from "./jsonl.js";
export { byteLineBatches, type ByteLine } from "./jsonl.js";
export { readTopics, TOPIC_FORMATS, type Topic, type TopicsFormat, type TopicsOptions } from "./topics.js";
