// Comparing systems: significance tests, confidence intervals, corrections and paper-ready tables.
export * from "./compare.js";
export * from "./corrections.js";
export * from "./distributions.js";
export * from "./parametric.js";
export * from "./resampling.js";
export * from "./render.js";
export * from "./table.js";
export * from "./scores.js";
export * from "./load.js";
export type { RecordSource } from "../eval/evaluate.js";
