// `--task wikireading`: WikiReading Mean F1 (./wikireading.ts, loaded when the task runs) with its flags of `tartan eval`.

import type { WikiReadingEvalOptions } from "./wikireading.js";
import type { TaskDescriptor } from "./task.js";

/** WikiReading: Mean F1 overall and by property class (docs/wikireading.md). */
export const wikiReadingTask: TaskDescriptor<WikiReadingEvalOptions> = {
  name: "wikireading",
  version: 1,
  summary: "Mean F1",
  docs: "docs/wikireading.md",
  flags: [
    { flag: "--train <path>", description: "training shards for the categorical/relational/date property classes", option: "train" },
    { flag: "--property-stats <file.json>", description: "property table written by datasets convert wikireading --property-stats", option: "propertyStats" },
    { flag: "--answer-separator <sep>", description: "split each predicted answer at this string (default: one answer per output)", option: "separator" },
  ],
  async evaluate(gold, guess, options) {
    const { evaluateWikiReading, formatWikiReadingReport } = await import("./wikireading.js");
    const r = await evaluateWikiReading(gold, guess, options);
    return { report: r.report, problems: r.problems, text: formatWikiReadingReport(r.report) };
  },
};
