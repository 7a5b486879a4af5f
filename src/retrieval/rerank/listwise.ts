// The `llm-listwise` reranker, RankGPT's (Sun et al., 2023): a window of passages numbered [1]…[n] is
// put to a chat model in RankGPT's prompt, which answers a permutation such as `[2] > [1] > [3]`; the
// window slides from the end of the list to its front by `stride` (default window 20, stride 10), so the
// best passages bubble up. The answer is read as RankGPT reads it, so a malformed one cannot break the
// ranking: every non-digit is a separator, ids are taken in order, repeated ids keep their first place,
// ids outside the window are dropped, and the window's missing ids follow in their previous order (an
// answer without any id leaves the window as it was). The final position gives the score (n − position).
// Every answer is kept for the run's settings.

import { mapLimit } from "../../util/limit.js";
import { chat, firstWords, llmSettings, llmSetup, LLM_OPTIONS, type ChatMessage, type LlmSetup } from "./llm.js";
import { checkOutput, opt, type Reranker, type RerankerDescriptor, type RerankItem, type RerankOutput, type RerankPassage } from "./reranker.js";

const NAME = "llm-listwise";

/** RankGPT's system message. */
export const LISTWISE_SYSTEM = "You are RankGPT, an intelligent assistant that can rank passages based on their relevancy to the query.";

/** RankGPT's messages for a window of passages. */
export function listwiseMessages(query: string, passages: readonly RerankPassage[], maxWords: number): ChatMessage[] {
  const n = passages.length;
  const m: ChatMessage[] = [
    { role: "system", content: LISTWISE_SYSTEM },
    { role: "user", content: `I will provide you with ${n} passages, each indicated by number identifier []. \nRank the passages based on their relevance to query: ${query}.` },
    { role: "assistant", content: "Okay, please provide the passages." },
  ];
  passages.forEach((p, i) => {
    m.push({ role: "user", content: `[${i + 1}] ${firstWords(`Title: ${p.title} Content: ${p.text}`, maxWords)}` });
    m.push({ role: "assistant", content: `Received passage [${i + 1}].` });
  });
  m.push({
    role: "user",
    content: `Search Query: ${query}. \nRank the ${n} passages above based on their relevance to the search query. The passages should be listed in descending order using identifiers. The most relevant passages should be listed first. The output format should be [] > [], e.g., [1] > [2]. Only response the ranking results, do not say any word or explain.`,
  });
  return m;
}

/** A window's new order (indexes 0…n−1) from an answer, read as RankGPT's receive_permutation does. */
export function parsePermutation(answer: string, n: number): number[] {
  const out: number[] = [];
  for (const d of answer.replace(/\D+/gu, " ").trim().split(" ")) {
    if (d === "") continue;
    const i = Number(d) - 1;
    if (i >= 0 && i < n && !out.includes(i)) out.push(i);
  }
  for (let i = 0; i < n; i++) if (!out.includes(i)) out.push(i);
  return out;
}

/** The windows [start, end) a list of `n` is reranked in, in order: from the end to the front by `stride`. */
export function slidingWindows(n: number, window: number, stride: number): [number, number][] {
  const out: [number, number][] = [];
  if (n === 0) return out;
  let end = n;
  for (;;) {
    const start = Math.max(0, end - window);
    out.push([start, end]);
    if (start === 0) return out;
    end -= stride;
  }
}

/** The listwise LLM reranker; see the module comment. */
export class ListwiseReranker implements Reranker {
  readonly name = NAME;
  readonly settings: Record<string, unknown>;

  constructor(
    private readonly s: LlmSetup,
    readonly window: number,
    readonly stride: number,
  ) {
    const template = listwiseMessages("{query}", [{ title: "{title}", text: "{text}" }], s.maxWords);
    this.settings = { reranker: NAME, ...llmSettings(s), window, stride, prompt: template };
  }

  /** One query's passages through every window; the order and the answers. */
  private async one(item: RerankItem): Promise<RerankOutput> {
    let order = item.passages.map((_, i) => i);
    const answers: string[] = [];
    for (const [start, end] of slidingWindows(order.length, this.window, this.stride)) {
      const slice = order.slice(start, end);
      const { content } = await chat(this.s, listwiseMessages(item.query, slice.map((i) => item.passages[i]), this.s.maxWords));
      answers.push(content);
      const perm = parsePermutation(content, slice.length);
      order = [...order.slice(0, start), ...perm.map((j) => slice[j]), ...order.slice(end)];
    }
    const scores = new Array<number>(order.length);
    order.forEach((p, rank) => (scores[p] = order.length - rank));
    return checkOutput(NAME, item, { scores, answers });
  }

  rerank(items: readonly RerankItem[]): Promise<RerankOutput[]> {
    return mapLimit(items, this.s.concurrency, (it) => this.one(it));
  }

  async close(): Promise<void> {}
}

/** The listwise LLM reranker's descriptor. */
export const listwiseReranker: RerankerDescriptor = {
  name: NAME,
  version: 1,
  summary: "RankGPT: an OpenAI-compatible chat model ranks a sliding window of passages (model=, base-url=, window=20, stride=10)",
  needs: ["model"],
  async open(options) {
    opt.known(NAME, options, [...LLM_OPTIONS, "window", "stride"]);
    const window = opt.int(NAME, options, "window", 20, 2);
    const stride = opt.int(NAME, options, "stride", 10);
    if (stride >= window) throw new Error(`reranker ${NAME}: stride (${stride}) must be smaller than the window (${window}), or passages would be skipped`);
    return new ListwiseReranker(llmSetup(NAME, options), window, stride);
  },
};
