// The best answer span of one window from the model's start and end logits: passage tokens i ≤ j
// with j - i < maxAnswerTokens, both placed in the text, maximising start[i] + end[j]. Ties go to the
// earlier start, then the shorter span.

import type { QaWindow } from "./windows.js";

/** A span of passage tokens [start, end] (inclusive, indexes among the passage's tokens) and its score. */
export interface SpanCandidate {
  start: number;
  end: number;
  /** start logit + end logit. */
  score: number;
}

/**
 * The best span in `window`, reading the logits at the window's passage positions; `usable(k)` says
 * whether passage token k may start or end an answer (tokens with a place in the text). Undefined when
 * no token is usable.
 */
export function bestSpan(
  startLogits: ArrayLike<number>,
  endLogits: ArrayLike<number>,
  window: QaWindow,
  usable: (token: number) => boolean,
  maxAnswerTokens = 30,
): SpanCandidate | undefined {
  if (!Number.isInteger(maxAnswerTokens) || maxAnswerTokens < 1) throw new Error(`maxAnswerTokens must be a positive integer, got ${maxAnswerTokens}`);
  let best: SpanCandidate | undefined;
  const last = window.contextStart + window.contextLength - 1;
  for (let i = window.contextStart; i <= last; i++) {
    if (!usable(i)) continue;
    const s = Number(startLogits[window.contextOffset + i - window.contextStart]);
    const jEnd = Math.min(last, i + maxAnswerTokens - 1);
    for (let j = i; j <= jEnd; j++) {
      if (!usable(j)) continue;
      const score = s + Number(endLogits[window.contextOffset + j - window.contextStart]);
      if (best === undefined || score > best.score) best = { start: i, end: j, score };
    }
  }
  return best;
}
