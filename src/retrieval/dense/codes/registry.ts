// The code types of a compressed dense index, registered in one place: `--quantize` takes their names,
// quantizer.bin and the manifest's `params.quantize` name one, and ../ivf-build.ts and ../ivf-search.ts
// find it here. A new code type is its file in this folder plus one line in CODE_TYPES.

import { Registry } from "../../../util/registry.js";
import { binaryCodes } from "./binary.js";
import { int8Codes } from "./int8.js";
import { pqCodes } from "./pq.js";
import { pq4Codes } from "./pq4.js";
import type { CodeType } from "./code-type.js";

/** The registered code types, in the order `--quantize` lists them. */
const CODE_TYPES = [binaryCodes, pqCodes, pq4Codes, int8Codes] as const;

/** How a compressed index's lists are scanned: the name of a registered code type. */
export type QuantizeKind = (typeof CODE_TYPES)[number]["name"];

/** The code types by name. */
export const codeTypes = new Registry<CodeType>("code type", CODE_TYPES);

/** The quantization kinds, as `--quantize` takes them. */
export const QUANTIZE_KINDS = codeTypes.names() as readonly QuantizeKind[];
