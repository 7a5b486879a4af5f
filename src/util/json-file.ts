// Reading a whole JSON file that a user names (a model, a config, a manifest): an error says which file
// and what went wrong (cannot be read, with the system's code; not valid JSON, with the parser's
// message), instead of JSON.parse's message alone.

import { readFileSync } from "node:fs";

/**
 * The parsed contents of `file`; `what` names it in the error when it cannot be read ("the reader
 * model"), and errors begin with `shownAs` (default `file`: a downloaded copy is named by its URL).
 */
export function readJsonFile(file: string, what: string, shownAs = file): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`${shownAs}: cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new Error(`${shownAs}: not valid JSON (${(e as Error).message})`);
  }
}
