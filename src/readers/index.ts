// The readers' public API: the Reader interface, the trained extractive span ranker and its SQuAD
// training data, and the task readers (fact checking, entity linking, slot filling, dialogue).

export { answerRecord, type Reader, type ReaderAnswer, type ReaderPassage } from "./types.js";
export { analyze, analyzeCached, idfWeights, stemSet, type Analysis, type Token } from "./extractive/text.js";
export { citedProvenance } from "./extractive/cite.js";
export { analyzeQuestion, questionType, QUESTION_TYPES, type QuestionInfo, type QuestionType } from "./extractive/question.js";
export { generateCandidates, candidateText, type Candidate, type CandidateSet, type CandidateOptions } from "./extractive/candidates.js";
export { FEATURE_NAMES, FEATURE_COUNT, featureMatrix, spanType } from "./extractive/features.js";
export { SpanModel, trainSpanModel, packRows, unpackRows, seededRandom, type SpanModelJson, type SparseRows, type TrainingGroup, type TrainOptions } from "./extractive/model.js";
export { trainReader, trainingGroup, goldAnswers, type ReaderTrainOptions, type TrainStats } from "./extractive/train.js";
export { ExtractiveReader, type ScoredSpan } from "./extractive/reader.js";
export { retrievedPassages } from "./extractive/retrieved.js";
export { loadSquad, splitByArticle, articleIndex, pageParagraphPassages, rankPassages, ArticlePassages, type SquadData } from "./extractive/squad-data.js";
export { rankSentences, type ScoredSentence } from "./tasks/overlap.js";
export { DialogueReader, dialogueTurns, type DialogueOptions } from "./tasks/dialogue.js";
export { EntityLinkingReader, markedMention } from "./tasks/entity-linking.js";
export { SlotFillingReader, slotQuestion, parseSlotInput, RELATION_TEMPLATES } from "./tasks/slot-filling.js";
export {
  FactCheckReader,
  FactModel,
  factEvidence,
  ruleVerdict,
  trainFactModel,
  FACT_FEATURES,
  type FactEvidence,
  type FactModelJson,
  type Verdict,
} from "./tasks/fact-check.js";
export { GenerativeReader, GenerativeReaderError, type GenerativeReaderOptions, type UncitedPolicy } from "./generative/reader.js";
export { GENERATIVE_TASKS, buildMessages, inferTask, taskFor, type ChatMessage, type GenerativeTask } from "./generative/prompts.js";
export { resolveEndpoint, OpenAIRequestError, DEFAULT_BASE_URL, type EndpointOptions, type ResolvedEndpoint, type RetryOptions } from "./generative/client.js";
export { OnnxQaReader, type OnnxQaReaderOptions, type OnnxAnswerMeta, type PreparedPassage } from "./onnx/reader.js";
export type { SentenceContext } from "./extractive/candidates.js";
export type { TokenScheme, TokenSpan } from "./onnx/align.js";
export type { LayoutItem, QaWindow } from "./onnx/windows.js";
export { Registry, type Descriptor } from "../util/registry.js";
export { openReader, isReaderKind, readerKind, READERS, READER_KINDS, type ReaderKind, type OpenReaderOptions, type ReaderDescriptor, type ReaderNeed } from "./open.js";
export { readerData, trainReaderOn, evalReaderOn, articleRange, type ReaderData, type ReaderDataOptions } from "./extractive/experiment.js";
