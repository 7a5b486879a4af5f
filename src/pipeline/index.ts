// The pipeline's public API: retrieval over files, reranking a run file, the resumable retrieve-then-read run, the quick start, the report.
export { rerankRun, settingsFileFor, type RerankRunOptions, type RerankRunStats } from "./rerank.js";
export { trainRerankerFromFiles, gradeCandidate, type RerankerTrainOptions, type RerankerTrainStats } from "./reranker-train.js";
export { tuneFusion, simplexGrid, type TuneOptions, type TunePoint, type TuneResult } from "./tune-fusion.js";
export { retrieve, hitsToProvenance, defaultTrecKeys, defaultBatch, HITS_IN_FLIGHT, type RetrieveOptions, type RetrieveStats, type RetrieveText, type RunFormat } from "./retrieve.js";
export { runPipeline, resumeOutput, mergeProvenance, queryOf, type RunOptions, type RunStats } from "./run.js";
export { quickstart, type QuickstartOptions, type QuickstartResult } from "./quickstart.js";
export { markdownReport, htmlReport, headlineTable, headline, svgChart, type ReportInput, type SystemResult } from "./report.js";
export type { TextMode } from "./run.js";
export { checkRunOutput } from "./run.js";
export { readPipelineConfig, resolvePipelineConfig, TEXT_MODES, type PipelineConfig, type PipelineFlags } from "./config.js";
export { planShards, mergeShards, type ShardPlan } from "./shards.js";
