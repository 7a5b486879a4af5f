// The readers a pipeline run can use, by name: the one place where reader kinds are registered, so
// `tartan run`, its config files and library users choose from the same list with the same needs.

import { ExtractiveReader } from "./extractive/reader.js";
import { GenerativeReader } from "./generative/reader.js";
import { OnnxQaReader } from "./onnx/reader.js";
import { DialogueReader } from "./tasks/dialogue.js";
import { EntityLinkingReader } from "./tasks/entity-linking.js";
import { SlotFillingReader } from "./tasks/slot-filling.js";
import type { Reader } from "./types.js";

/** The reader kinds, as `tartan run --reader` and {@link openReader} name them. */
export const READER_KINDS = ["extractive", "generative", "onnx", "dialogue", "entity-linking", "slot-filling"] as const;
/** One of {@link READER_KINDS}. */
export type ReaderKind = (typeof READER_KINDS)[number];

/** What a reader is opened with (each kind reads what it needs). */
export interface OpenReaderOptions {
  /** extractive and slot-filling: a model file from `tartan reader train`; onnx: a local ONNX QA model directory; generative: the model name. */
  model?: string;
  /** generative: the OpenAI-compatible endpoint (else TARTAN_OPENAI_BASE_URL / OPENAI_BASE_URL). */
  baseUrl?: string;
}

/** Whether `name` is a reader kind. */
export function isReaderKind(name: string): name is ReaderKind {
  return (READER_KINDS as readonly string[]).includes(name);
}

/** `name` as a reader kind; throws naming the kinds when it is none. */
export function readerKind(name: string): ReaderKind {
  if (!isReaderKind(name)) throw new Error(`unknown reader ${JSON.stringify(name)}: one of ${READER_KINDS.join(", ")}`);
  return name;
}

/** Opens the reader called `kind`; throws naming the kinds for an unknown one and what is missing for a known one. */
export async function openReader(kind: string, options: OpenReaderOptions = {}): Promise<Reader> {
  const need = (what: string): never => {
    throw new Error(`--reader ${kind} needs --model (${what})`);
  };
  switch (readerKind(kind)) {
    case "extractive":
      return ExtractiveReader.load(options.model ?? need("a model file from tartan reader train"));
    case "slot-filling":
      return new SlotFillingReader(ExtractiveReader.load(options.model ?? need("an extractive model file")));
    case "generative":
      return new GenerativeReader({ baseUrl: options.baseUrl, model: options.model });
    case "onnx":
      return OnnxQaReader.load({ model: options.model ?? need("a local ONNX QA model directory") });
    case "dialogue":
      return new DialogueReader();
    case "entity-linking":
      return new EntityLinkingReader();
  }
}
