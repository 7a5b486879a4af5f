// Closed-book analyses: test/train answer, question and prediction overlap, and the reciting probe.
export * from "./overlap.js";
export * from "./recite.js";
