// The code types of a compressed dense index, registered in one place: `--quantize` takes their names,
// quantizer.bin and the manifest's `params.quantize` name one, and ../ivf-build.ts and ../ivf-search.ts
// find it here. A new code type is its file in this folder plus its entry in CODE_TYPES and its name in
// QuantizeKind (the type check below fails when the two disagree).

import { Registry } from "../../../util/registry.js";
import { binaryCodes } from "./binary.js";
import { int8Codes } from "./int8.js";
import { pqCodes } from "./pq.js";
import { pq4Codes } from "./pq4.js";
import { rabitqCodes } from "./rabitq.js";
import type { CodeType } from "./code-type.js";

/** How a compressed index's lists are scanned: the name of a registered code type. */
export type QuantizeKind = "binary" | "pq" | "pq4" | "int8" | "rabitq";

/** The registered code types, in the order `--quantize` lists them. */
const CODE_TYPES = [binaryCodes, pqCodes, pq4Codes, int8Codes, rabitqCodes] as const;

/** `true` only when QuantizeKind names exactly the code types of CODE_TYPES. */
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const namesAgree: Exactly<QuantizeKind, (typeof CODE_TYPES)[number]["name"]> = true;
void namesAgree;

/** The code types by name. */
export const codeTypes = new Registry<CodeType>("code type", CODE_TYPES);

/** The quantization kinds, as `--quantize` takes them. */
export const QUANTIZE_KINDS = codeTypes.names() as readonly QuantizeKind[];
