// Command groups several command modules add to (`datasets convert`, `ks`, `index`, `baseline`): each
// module asks for the group here, and the first one to ask creates it, so modules load in any order
// (src/cli/main.ts loads only those of the command invoked).

import type { Command } from "commander";

/** `parent`'s subcommand `name`, created with `description` if no module made it yet. */
export function subcommand(parent: Command, name: string, description: string): Command {
  return parent.commands.find((c) => c.name() === name) ?? parent.command(name).description(description);
}

/** The `datasets convert` group, created (with `datasets`, if need be) by whichever module asks first. */
export function datasetsConvertCommand(program: Command): Command {
  const datasets = subcommand(program, "datasets", "KILT datasets: list and convert");
  return subcommand(datasets, "convert", "convert a dataset into KILT task records");
}
