// What the LLM rerankers share: the endpoint (an OpenAI-compatible chat-completions server, through the
// client the generative reader uses, src/util/openai-client.ts: base URL, model and key from the spec or
// the environment, retries and timeouts), one chat call that returns the first choice, the options every
// LLM reranker takes, and the settings a run records (model, base URL, prompt; never the key).

import { postJson, resolveEndpoint, type ResolvedEndpoint, type RetryOptions } from "../../util/openai-client.js";
import { opt } from "./reranker.js";

/** A chat message. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** The options every LLM reranker reads from its spec. */
export const LLM_OPTIONS = ["model", "baseUrl", "temperature", "concurrency", "timeoutMs", "retries", "maxWords"] as const;

/** The endpoint and request settings of an LLM reranker. */
export interface LlmSetup {
  endpoint: ResolvedEndpoint;
  retry: RetryOptions;
  temperature: number;
  /** Requests (pointwise) or queries (listwise) in flight at once. */
  concurrency: number;
  /** Words of a passage put in a prompt (RankGPT's 300). */
  maxWords: number;
}

/** Reads the shared options (`model`, `baseUrl`, …; the key only from TARTAN_OPENAI_API_KEY or OPENAI_API_KEY). */
export function llmSetup(name: string, o: Record<string, unknown>, env: NodeJS.ProcessEnv = process.env): LlmSetup {
  const endpoint = resolveEndpoint({ model: opt.optionalString(name, o, "model"), baseUrl: opt.optionalString(name, o, "baseUrl") }, env);
  return {
    endpoint,
    retry: { timeoutMs: opt.int(name, o, "timeoutMs", 60_000), retries: opt.int(name, o, "retries", 3, 0) },
    temperature: opt.number(name, o, "temperature", 0),
    concurrency: opt.int(name, o, "concurrency", 4),
    maxWords: opt.int(name, o, "maxWords", 300),
  };
}

/** What a run records about the endpoint. */
export function llmSettings(s: LlmSetup): Record<string, unknown> {
  return { model: s.endpoint.model, baseUrl: s.endpoint.baseUrl, temperature: s.temperature, maxWords: s.maxWords };
}

/** The first `n` whitespace-separated words of `text`. */
export function firstWords(text: string, n: number): string {
  return text.trim().split(/\s+/u).slice(0, n).join(" ");
}

/** The first choice of a chat completion (`message.content` and, when the server sent them, `logprobs`); throws naming the URL when there is none. */
export async function chat(s: LlmSetup, messages: readonly ChatMessage[], extra: Record<string, unknown> = {}): Promise<{ content: string; logprobs?: unknown }> {
  const json = await postJson(s.endpoint, "/chat/completions", { model: s.endpoint.model, messages, temperature: s.temperature, ...extra }, s.retry);
  const choices = (json as { choices?: unknown })?.choices;
  const c = Array.isArray(choices) ? (choices[0] as { message?: { content?: unknown }; logprobs?: unknown } | undefined) : undefined;
  const content = c?.message?.content;
  if (typeof content !== "string") throw new Error(`${s.endpoint.baseUrl}/chat/completions: the response has no choices[0].message.content string: ${JSON.stringify(json).slice(0, 300)}`);
  return c?.logprobs === undefined || c.logprobs === null ? { content } : { content, logprobs: c.logprobs };
}
