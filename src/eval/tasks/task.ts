// What a task of `tartan eval --task` is: a descriptor with its name, version, a one-line summary (its
// metric, for --help), the flags it takes as data (flag, description, the option it sets, how its text
// is parsed) and its evaluate(gold, guess, options) → report, problems and text tables. The CLI builds
// `tartan eval`'s task flags from these descriptors (./registry.ts holds them).

import type { Descriptor } from "../../util/registry.js";
import type { Problem } from "../problems.js";

/** What every task's options have: how many places a problem lists (`--max-examples`). */
export interface TaskOptionsBase {
  /** Places listed per problem; default 5. */
  maxExamples?: number;
}

/** A flag of `tartan eval` that sets one option of a task. */
export interface TaskFlag<O extends TaskOptionsBase = TaskOptionsBase> {
  /** As commander spells it: `--lang <lang>` (takes a value) or `--count-entities` (a switch). */
  readonly flag: string;
  /** What it does (`--help` prefixes the task's name). */
  readonly description: string;
  /** The values commander accepts, when they are few. */
  readonly choices?: readonly string[];
  /** The option of the task's {@link TaskDescriptor.evaluate} it sets. */
  readonly option: keyof O & string;
  /** The option's value from the flag's text (a switch gets ""); throws naming the flag on a bad one. Default: the text (a switch: true). */
  readonly parse?: (text: string) => unknown;
}

/** A task's scores: its report (printed with --json), the problems found, and the report as text tables. */
export interface TaskEvaluation {
  /** The task's report (its JSON shape is the task's own). */
  report: object;
  /** Problems found in the gold and guess files. */
  problems: Problem[];
  /** The report as text tables. */
  text: string;
}

/** A task `tartan eval --task` and {@link TaskDescriptor.evaluate} score: name, version, summary, flags, evaluation. */
export interface TaskDescriptor<O extends TaskOptionsBase = TaskOptionsBase> extends Descriptor {
  /** Its metric, as `--task`'s help names it ("hits@1"). */
  readonly summary: string;
  /** The documentation page `--task`'s help points to (docs/mintaka.md), if any. */
  readonly docs?: string;
  /** Its flags of `tartan eval` (none: the flags are the command's own, as KILT's). */
  readonly flags: readonly TaskFlag<O>[];
  /** Scores the predictions of `guess` against `gold` (file paths); loads its modules only when called. */
  evaluate(gold: string, guess: string, options: O): Promise<TaskEvaluation>;
}
