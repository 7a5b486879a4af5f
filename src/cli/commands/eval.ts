// `tartan eval`: placeholder registration, filled in by the evaluator.
import type { Command } from "commander";

export function registerEval(program: Command): void {
  program.command("eval").description("evaluate KILT predictions").action(() => {
    throw new Error("not yet");
  });
}
