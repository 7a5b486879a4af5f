// TREC interop: qrels and runs as trec_eval reads them, trec_eval 10.0's measures, conversions to and from KILT.
export * from "./files.js";
export * from "./measures.js";
export * from "./convert.js";
export { trecRunToGuesses } from "./guesses.js";
