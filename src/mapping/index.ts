// KILT's provenance mapping: find an answer or evidence text in its page (substring, tokens, best-BLEU span).
export { ProvenanceMapper, MemoryPages, mapFile, formatMapReport } from "./map.js";
export { matchAnswer, isMatch, PreparedPage } from "./match.js";
export { sentenceBleu, kiltBleu, kiltWeights, BleuScorer } from "./bleu.js";
