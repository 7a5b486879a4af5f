// KILT's provenance mapping: find an answer or evidence text in its page (substring, tokens, best-BLEU span).
export { ProvenanceMapper, MemoryPages, mapFile, formatMapReport } from "./map.js";
export { matchAnswer, isMatch, PreparedPage } from "./match.js";
export { sentenceBleu, kiltBleu, kiltWeights, BleuScorer } from "./bleu.js";
export type { MapOptions, MapReport, PageLookup, Split } from "./map.js";
export type { MatchOptions, MatchResult, NoMatchReason, ParagraphTokens } from "./match.js";
export { bleuFromCounts } from "./bleu.js";
export type { DroppedItem, DropReason } from "./map.js";
export type { MatchMethod } from "./match.js";
