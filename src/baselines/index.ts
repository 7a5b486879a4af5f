// Public API of the baselines (`tartan/baselines`): WikiReading's bag-of-words and averaged-embedding
// answer classifiers (`tartan baseline wikireading`, docs/wikireading.md).
export {
  trainBaseline,
  predictAnswer,
  prepareForPrediction,
  saveBaseline,
  loadBaseline,
  featuresOf,
  DEFAULT_CONFIG,
  type Baseline,
  type BaselineConfig,
  type BaselineKind,
  type ExampleSource,
  type TrainStats,
} from "./wikireading/model.js";
export { baselineExamples, trainBaselineFromFile, predictBaselineToFile } from "./wikireading/files.js";
export type { WordVectors } from "./wikireading/glove.js";
export type { SoftmaxRegression, SparseVector } from "./wikireading/softmax.js";
