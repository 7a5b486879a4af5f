// `--task kilt`: the KILT evaluator (../evaluate.ts) as a task descriptor. Its flags are `tartan eval`'s
// own (--ks, --rank-keys, --mode, --only-predicted), which the CLI reads itself, with the directory,
// per-query and trec_eval modes.

import type { EvalOptions } from "../evaluate.js";
import type { TaskDescriptor } from "./task.js";

/** The KILT evaluator: downstream, KILT and retrieval scores; the report is the official result keys. */
export const kiltTask: TaskDescriptor<EvalOptions> = {
  name: "kilt",
  version: 1,
  summary: "the KILT evaluator",
  flags: [],
  async evaluate(gold, guess, options) {
    const [{ evaluate }, { formatResult, officialJson }] = await Promise.all([import("../evaluate.js"), import("../report.js")]);
    const result = await evaluate(gold, guess, options);
    return { report: officialJson(result), problems: result.problems, text: formatResult(result) };
  },
};
