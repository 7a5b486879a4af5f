// The dense names tartan/retrieval exports as its `dense` namespace: the retriever, the encoders and
// their specs, vector files and the IVF index over them, and query vectors computed elsewhere.
// buildDenseIndex, openDense and buildDenseFromVectors are at the top level; the SIMD kernels, k-means,
// quantizers and worker pools stay internal.
export {
  DenseRetriever,
  createEncoder,
  normalizeRows,
  unitText,
  type DenseOpenOptions,
  type DenseBuildParams,
  type DenseBuildOptions,
  type DenseProgress,
  type Encoder,
  type EncoderSpec,
  type UseLiteSpec,
  type OnnxSpec,
  type BertOnnxSpec,
  type OpenAISpec,
  openVectorFile,
  arraySource,
  buildIvfIndex,
  IvfIndex,
  type VectorSource,
  type VectorFileOptions,
  type VectorDtype,
  type IvfBuildParams,
  type IvfBuildOptions,
  type IvfProgress,
  type IvfSearchOptions,
  type IvfOpenOptions,
  type IvfShare,
  type HammingShare,
  type FastScanShare,
  type WasmMemory,
  type QuantizeKind,
} from "./index.js";
export { QueryVectorFile, queryMatrix } from "./query-vectors.js";
export type { DprStats } from "./dpr-passages.js";
export type { Int8RowShare } from "./int8-kernel.js";
export { UseLiteEncoder } from "./use-lite.js";
export { OnnxEncoder } from "./onnx.js";
export { BertOnnxEncoder } from "./bert.js";
export { WordPieceTokenizer, type WordPieceOptions, type Encoded as WordPieceEncoded } from "./wordpiece.js";
export { OpenAIEncoder, type OpenAIOptions } from "./openai.js";
export type { HnswIndex, HnswParams } from "./ann.js";
export type { ExactIndex } from "./exact.js";
