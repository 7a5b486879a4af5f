// Sliding windows for extractive QA: the question (truncated) and a window of the passage's tokens
// laid out as the tokenizer lays out a pair (e.g. `[CLS] q [SEP] c [SEP]` for BERT, `<s> q </s></s> c </s>`
// for RoBERTa), consecutive windows overlapping by `stride` tokens. Only the passage is cut.

/** One element of a question/context pair as the model reads it. */
export type LayoutItem = { kind: "special"; id: number; type: number } | { kind: "question"; type: number } | { kind: "context"; type: number };

/** What a tokenizer's post-processor returns for a pair of token lists. */
export interface PostProcessed {
  tokens: string[];
  tokens_pair?: string[] | null;
  token_type_ids?: number[];
}

const Q = "\u0000tartan:question\u0000";
const C = "\u0000tartan:context\u0000";

/**
 * The pair layout of a tokenizer, found by running its post-processor on one marker token per side.
 * `tokenToId` turns the special tokens it adds into ids; a post-processor that leaves the pair apart
 * (GPT-2's ByteLevel) gives question then context with no special token.
 */
export function pairLayout(postProcess: ((a: string[], b: string[]) => PostProcessed) | null, tokenToId: (t: string) => number | undefined): LayoutItem[] {
  if (postProcess === null) return [{ kind: "question", type: 0 }, { kind: "context", type: 0 }];
  const out = postProcess([Q], [C]);
  const items: LayoutItem[] = [];
  out.tokens.forEach((t, i) => {
    const type = out.token_type_ids?.[i] ?? 0;
    if (t === Q) items.push({ kind: "question", type });
    else if (t === C) items.push({ kind: "context", type });
    else {
      const id = tokenToId(t);
      if (id === undefined) throw new Error(`the tokenizer's post-processor adds ${JSON.stringify(t)}, which has no id`);
      items.push({ kind: "special", id, type });
    }
  });
  if (!items.some((i) => i.kind === "context") && out.tokens_pair?.includes(C)) items.push({ kind: "context", type: 0 });
  if (items.filter((i) => i.kind === "question").length !== 1 || items.filter((i) => i.kind === "context").length !== 1) {
    throw new Error(`cannot read the tokenizer's pair layout: ${JSON.stringify(out.tokens)}`);
  }
  return items;
}

export interface WindowOptions {
  /** Tokens per window, special tokens and question included (default 384). */
  maxLength?: number;
  /** Passage tokens shared by consecutive windows (default 128). */
  stride?: number;
  /** The question is cut to this many tokens (default 64). */
  maxQuestionTokens?: number;
}

/** One model input: the question and passage tokens [contextStart, contextStart + contextLength). */
export interface QaWindow {
  inputIds: number[];
  tokenTypeIds: number[];
  /** Position in `inputIds` of the window's first passage token. */
  contextOffset: number;
  /** Index among the passage's tokens of the window's first token. */
  contextStart: number;
  contextLength: number;
}

/**
 * The windows covering all `contextIds` (none when there are none). Each holds as many passage tokens
 * as fit in `maxLength`; the next starts `capacity - stride` tokens later; the last ends at the passage end.
 */
export function makeWindows(layout: readonly LayoutItem[], questionIds: readonly number[], contextIds: readonly number[], options: WindowOptions = {}): QaWindow[] {
  const maxLength = options.maxLength ?? 384;
  const stride = options.stride ?? 128;
  const question = questionIds.slice(0, options.maxQuestionTokens ?? 64);
  const specials = layout.filter((i) => i.kind === "special").length;
  const capacity = maxLength - specials - question.length;
  if (!Number.isInteger(stride) || stride < 0) throw new Error(`stride must be a non-negative integer, got ${stride}`);
  if (capacity <= stride) {
    throw new Error(`maxLength ${maxLength} leaves ${capacity} passage tokens per window (question ${question.length}, special ${specials}): not more than the stride ${stride}`);
  }
  const windows: QaWindow[] = [];
  for (let start = 0; start < contextIds.length; start += capacity - stride) {
    const length = Math.min(capacity, contextIds.length - start);
    const inputIds: number[] = [];
    const tokenTypeIds: number[] = [];
    let contextOffset = -1;
    for (const item of layout) {
      if (item.kind === "special") {
        inputIds.push(item.id);
        tokenTypeIds.push(item.type);
      } else if (item.kind === "question") {
        for (const id of question) {
          inputIds.push(id);
          tokenTypeIds.push(item.type);
        }
      } else {
        contextOffset = inputIds.length;
        for (let k = start; k < start + length; k++) {
          inputIds.push(contextIds[k]);
          tokenTypeIds.push(item.type);
        }
      }
    }
    windows.push({ inputIds, tokenTypeIds, contextOffset, contextStart: start, contextLength: length });
    if (start + length >= contextIds.length) break;
  }
  return windows;
}
