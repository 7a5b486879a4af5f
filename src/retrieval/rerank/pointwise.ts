// The `llm-pointwise` reranker: each (query, passage) pair is one chat request asking whether the passage
// answers the query (Yes or No, one token, temperature 0). The score is the probability of Yes from the
// log-probabilities the server returns (`logprobs` with `top_logprobs`): P(yes) / (P(yes) + P(no)) over
// the top tokens that read as yes or no (case and surrounding spaces and punctuation ignored); with only
// the chosen token's log-probability, exp(lp) for a yes and 1 − exp(lp) for a no; without log-probabilities
// (or when none of the top tokens is a yes or a no) the answer's text: 1 for yes, 0 for no, 0.5 for an answer
// that is neither. Every answer (its text and log-probabilities) is kept for the run's settings.

import { mapLimit } from "../../util/limit.js";
import { chat, firstWords, llmSettings, llmSetup, LLM_OPTIONS, type ChatMessage, type LlmSetup } from "./llm.js";
import { checkOutput, opt, type Reranker, type RerankerDescriptor, type RerankItem, type RerankOutput, type RerankPassage } from "./reranker.js";

const NAME = "llm-pointwise";

/** The system prompt of the pointwise reranker. */
export const POINTWISE_SYSTEM = "You judge whether a passage answers a search query. Reply with one word: Yes or No.";

/** The user message for one pair. */
export function pointwisePrompt(query: string, passage: RerankPassage, maxWords: number): string {
  return `Query: ${query}\nPassage: ${passage.title === "" ? "" : `${passage.title}: `}${firstWords(passage.text, maxWords)}\nDoes the passage answer the query? Answer Yes or No.`;
}

const verdict = (token: unknown): "yes" | "no" | null => {
  if (typeof token !== "string") return null;
  const t = token.trim().toLowerCase().replace(/^[\W_]+|[\W_]+$/gu, "");
  return t === "yes" ? "yes" : t === "no" ? "no" : null;
};

/** The score of one answer (see the module comment). */
export function pointwiseScore(content: string, logprobs: unknown): number {
  const first = (logprobs as { content?: { token?: unknown; logprob?: unknown; top_logprobs?: { token?: unknown; logprob?: unknown }[] }[] } | undefined)?.content?.[0];
  if (first) {
    let yes = 0;
    let no = 0;
    for (const t of Array.isArray(first.top_logprobs) ? first.top_logprobs : []) {
      if (typeof t?.logprob !== "number" || !Number.isFinite(t.logprob)) continue;
      const v = verdict(t.token);
      if (v === "yes") yes += Math.exp(t.logprob);
      else if (v === "no") no += Math.exp(t.logprob);
    }
    if (yes + no > 0) return yes / (yes + no);
    const v = verdict(first.token);
    if (v !== null && typeof first.logprob === "number" && Number.isFinite(first.logprob)) return v === "yes" ? Math.exp(first.logprob) : 1 - Math.exp(first.logprob);
  }
  const v = verdict(content.trim().split(/\s+/u)[0] ?? "");
  return v === "yes" ? 1 : v === "no" ? 0 : 0.5;
}

/** The pointwise LLM reranker; see the module comment. */
export class PointwiseReranker implements Reranker {
  readonly name = NAME;
  readonly settings: Record<string, unknown>;

  constructor(
    private readonly s: LlmSetup,
    private readonly logprobs: boolean,
    private readonly topLogprobs: number,
  ) {
    this.settings = {
      reranker: NAME,
      ...llmSettings(s),
      logprobs,
      ...(logprobs ? { topLogprobs } : {}),
      prompt: { system: POINTWISE_SYSTEM, user: pointwisePrompt("{query}", { title: "{title}", text: "{text}" }, s.maxWords) },
    };
  }

  /** The messages of one pair. */
  messages(query: string, passage: RerankPassage): ChatMessage[] {
    return [
      { role: "system", content: POINTWISE_SYSTEM },
      { role: "user", content: pointwisePrompt(query, passage, this.s.maxWords) },
    ];
  }

  async rerank(items: readonly RerankItem[]): Promise<RerankOutput[]> {
    const pairs = items.flatMap((it) => it.passages.map((p) => ({ query: it.query, p })));
    const extra = { max_tokens: 1, ...(this.logprobs ? { logprobs: true, top_logprobs: this.topLogprobs } : {}) };
    const answers = await mapLimit(pairs, this.s.concurrency, ({ query, p }) => chat(this.s, this.messages(query, p), extra));
    let at = 0;
    return items.map((it) => {
      const mine = answers.slice(at, (at += it.passages.length));
      return checkOutput(NAME, it, { scores: mine.map((a) => pointwiseScore(a.content, a.logprobs)), answers: mine });
    });
  }

  async close(): Promise<void> {}
}

/** The pointwise LLM reranker's descriptor. */
export const pointwiseReranker: RerankerDescriptor = {
  name: NAME,
  version: 1,
  summary: "an OpenAI-compatible chat model asked Yes/No per passage, scored by the log-probability of Yes (model=, base-url=)",
  needs: ["model"],
  async open(options) {
    opt.known(NAME, options, [...LLM_OPTIONS, "logprobs", "topLogprobs"]);
    return new PointwiseReranker(llmSetup(NAME, options), opt.bool(NAME, options, "logprobs", true), opt.int(NAME, options, "topLogprobs", 5));
  },
};
