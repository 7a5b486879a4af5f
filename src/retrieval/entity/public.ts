// The entity names tartan/retrieval exports as its `entity` namespace: the retriever, its parameters and
// build progress, title variants and the marked mention of an entity-linking input. buildEntityIndex and
// openEntity are at the top level; the mention matching and table formats stay internal.
export { EntityRetriever, type Candidates } from "./search.js";
export { titleVariants, DEFAULT_ENTITY_PARAMS, type EntityParams, type EntityBuildStats, type EntityBuildOptions, type EntityBuildProgress } from "./build.js";
export { markedMention, type FoundMention } from "./mentions.js";
export type { PageFeed } from "./source.js";
