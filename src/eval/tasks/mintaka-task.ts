// `--task mintaka`: Mintaka hits@1 (./mintaka.ts, loaded when the task runs) with its flags of `tartan eval`.

import { parseMintakaLang } from "../../datasets/mintaka.js";
import type { MintakaEvalOptions } from "./mintaka.js";
import type { TaskDescriptor } from "./task.js";

/** Mintaka: hits@1 by language, complexity type and answer type (docs/mintaka.md). */
export const mintakaTask: TaskDescriptor<MintakaEvalOptions> = {
  name: "mintaka",
  version: 1,
  summary: "hits@1",
  docs: "docs/mintaka.md",
  flags: [
    { flag: "--lang <lang>", description: "language(s) to score: en, ar, …, pt, or all (default: those the prediction ids name)", option: "lang", parse: parseMintakaLang },
    {
      flag: "--match <how>",
      description: "exact normalized strings, or gold words contained in the prediction (evaluate.py)",
      choices: ["exact", "contains"],
      option: "match",
      parse: (s) => {
        if (s !== "exact" && s !== "contains") throw new Error(`--match must be exact or contains`);
        return s;
      },
    },
    { flag: "--count-entities", description: "count questions also accept the counted entities (the paper's appendix D); default: only the count", option: "countEntities" },
  ],
  async evaluate(gold, guess, options) {
    const { evaluateMintaka, formatMintakaReport } = await import("./mintaka.js");
    const r = await evaluateMintaka(gold, guess, options);
    return { report: r.report, problems: r.problems, text: formatMintakaReport(r.report) };
  },
};
