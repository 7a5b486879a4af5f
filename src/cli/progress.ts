// The CLI draws the library's progress: library jobs report through an `onProgress` callback
// (`ProgressEvent`, src/util/progress.ts) and draw nothing themselves; a command hands them
// `terminalProgress()`, which draws the reports when stderr is a terminal and is absent when it is piped
// (so a job does not even count its input for a total nobody sees).

import { progressDrawer, type OnProgress } from "../util/progress.js";

/** A drawer of progress reports on stderr when it is a terminal; undefined when stderr is piped. */
export function terminalProgress(): OnProgress | undefined {
  return process.stderr.isTTY ? progressDrawer() : undefined;
}
