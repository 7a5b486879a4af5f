// The readers a pipeline run can use, by name: the one place where reader kinds are registered, so
// `tartan run`, its config files and library users choose from the same list with the same needs.
// Each reader's descriptor (name, version, summary, the options it needs, how it opens) sits beside its
// code; a new reader is its module plus one line in READERS.

import { Registry } from "../util/registry.js";
import { extractiveReaderKind } from "./extractive/reader.js";
import { generativeReaderKind } from "./generative/reader.js";
import { onnxReaderKind } from "./onnx/reader.js";
import { dialogueReaderKind } from "./tasks/dialogue.js";
import { entityLinkingReaderKind } from "./tasks/entity-linking.js";
import { slotFillingReaderKind } from "./tasks/slot-filling.js";
import type { OpenReaderOptions, Reader, ReaderDescriptor } from "./types.js";

export type { OpenReaderOptions, ReaderDescriptor, ReaderNeed } from "./types.js";

/** Every reader kind, by name, in the order `--help` lists them. */
export const READERS = new Registry<ReaderDescriptor>("reader", [
  extractiveReaderKind,
  generativeReaderKind,
  onnxReaderKind,
  dialogueReaderKind,
  entityLinkingReaderKind,
  slotFillingReaderKind,
]);

/** The reader kinds, as `tartan run --reader` and {@link openReader} name them (the names in {@link READERS}). */
export const READER_KINDS: readonly string[] = READERS.names();
/** The name of a reader registered in {@link READERS}. */
export type ReaderKind = string;

/** Whether `name` is a reader kind. */
export function isReaderKind(name: string): name is ReaderKind {
  return READERS.has(name);
}

/** `name` as a reader kind; throws naming the kinds when it is none. */
export function readerKind(name: string): ReaderKind {
  if (!isReaderKind(name)) throw new Error(`unknown reader ${JSON.stringify(name)}: one of ${READERS.names().join(", ")}`);
  return name;
}

/** Opens the reader called `kind`; throws naming the kinds for an unknown one and what is missing for a known one. */
export async function openReader(kind: string, options: OpenReaderOptions = {}): Promise<Reader> {
  const d = READERS.get(readerKind(kind));
  for (const n of d.needs ?? []) if (options[n.option] === undefined || options[n.option] === null) throw new Error(`--reader ${kind} needs ${n.flag} (${n.what})`);
  return d.open(options);
}
