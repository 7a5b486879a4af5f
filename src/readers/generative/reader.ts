// The generative reader: asks an OpenAI-compatible server (vLLM, llama.cpp server, Ollama, hosted
// APIs) to answer a KILT record, closed-book or from retrieved passages numbered in the prompt. The
// passages it cites become the answer's provenance, in citation order.

import type { KiltRecord, Provenance } from "../../records/types.js";
import type { Reader, ReaderAnswer, ReaderDescriptor, ReaderPassage } from "../types.js";
import { type EndpointOptions, type ResolvedEndpoint, type RetryOptions, postJson, resolveEndpoint } from "./client.js";
import { mapLimit } from "./limit.js";
import { cleanAnswer, parseCitations } from "./parse.js";
import { type ChatMessage, type GenerativeTask, buildMessages, inferTask, isShortAnswerTask, messagesToPrompt, taskFor } from "./prompts.js";

/** What becomes provenance when the model cites no passage (it had some). */
export type UncitedPolicy = "first" | "none" | "all";

export interface GenerativeReaderOptions extends EndpointOptions, RetryOptions {
  /** A task (`qa`, `fact-checking`, …), a dataset name (`fever`, `eli5`, …) or `auto` (default: {@link inferTask}). */
  task?: string;
  /** `chat` → `/chat/completions` (default); `completions` → `/completions` with the messages as one prompt. */
  api?: "chat" | "completions";
  /** Sampling temperature (default 0). */
  temperature?: number;
  /** `max_tokens` (default 64 for short answers, 256 for dialogue, 512 for long answers). */
  maxTokens?: number;
  /** Requests in flight at once in `readBatch` (default 4). */
  concurrency?: number;
  /** Passages put in the prompt, best first (default: all given). */
  maxPassages?: number;
  /**
   * Provenance when passages were given but none is cited: `first` (default) the top-ranked passage,
   * the one a retrieve-then-read pipeline would report; `none` nothing; `all` every passage in the prompt.
   */
  uncited?: UncitedPolicy;
  /** Other request fields (`seed`, `top_p`, `stop`, …), merged into every request body. */
  extraBody?: Record<string, unknown>;
  /** Replaces the built-in prompts. */
  messages?: (task: GenerativeTask, record: KiltRecord, passages: readonly ReaderPassage[]) => ChatMessage[];
  /** Environment to read endpoint settings from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** A record the reader could not answer: names the record; the cause says why. */
export class GenerativeReaderError extends Error {
  constructor(
    readonly recordId: KiltRecord["id"],
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`record ${JSON.stringify(recordId)}: ${message}`, options);
    this.name = "GenerativeReaderError";
  }
}

interface Completion {
  content: string;
  model?: string;
  finishReason?: string;
  usage?: unknown;
}

function readCompletion(json: unknown, api: "chat" | "completions"): Completion {
  const choice = (json as { choices?: unknown })?.choices;
  if (!Array.isArray(choice) || choice.length === 0 || choice[0] === null || typeof choice[0] !== "object") {
    throw new Error(`the response has no choices: ${JSON.stringify(json).slice(0, 300)}`);
  }
  const c = choice[0] as { message?: { content?: unknown }; text?: unknown; finish_reason?: unknown };
  const content = api === "chat" ? c.message?.content : c.text;
  if (typeof content !== "string") {
    throw new Error(`the response has no ${api === "chat" ? "choices[0].message.content" : "choices[0].text"} string: ${JSON.stringify(c).slice(0, 300)}`);
  }
  const out: Completion = { content };
  const j = json as { model?: unknown; usage?: unknown };
  if (typeof j.model === "string") out.model = j.model;
  if (typeof c.finish_reason === "string") out.finishReason = c.finish_reason;
  if (j.usage !== undefined) out.usage = j.usage;
  return out;
}

/** A reader that asks an OpenAI-compatible chat-completions endpoint, with a prompt per task, and maps the answer to provenance. */
export class GenerativeReader implements Reader {
  readonly name: string;
  readonly endpoint: ResolvedEndpoint;
  private readonly options: GenerativeReaderOptions;
  private readonly fixedTask: GenerativeTask | undefined;

  constructor(options: GenerativeReaderOptions = {}) {
    this.endpoint = resolveEndpoint(options, options.env);
    this.options = options;
    this.fixedTask = options.task === undefined || options.task === "auto" ? undefined : taskFor(options.task);
    this.name = `generative:${this.endpoint.model}`;
    const c = options.concurrency ?? 4;
    if (!Number.isInteger(c) || c < 1) throw new Error(`concurrency must be a positive integer, got ${c}`);
  }

  /** The task a record is answered as. */
  taskOf(record: KiltRecord): GenerativeTask {
    return this.fixedTask ?? inferTask(record);
  }

  /** The request body for a record (what {@link read} sends). */
  request(record: KiltRecord, passages: readonly ReaderPassage[]): Record<string, unknown> {
    const task = this.taskOf(record);
    const used = passages.slice(0, this.options.maxPassages ?? passages.length);
    const messages = (this.options.messages ?? buildMessages)(task, record, used);
    const maxTokens = this.options.maxTokens ?? (isShortAnswerTask(task) ? 64 : task === "dialogue" ? 256 : 512);
    const body: Record<string, unknown> = { model: this.endpoint.model };
    if ((this.options.api ?? "chat") === "chat") body.messages = messages;
    else body.prompt = messagesToPrompt(messages);
    body.temperature = this.options.temperature ?? 0;
    body.max_tokens = maxTokens;
    return { ...body, ...this.options.extraBody };
  }

  async read(record: KiltRecord, passages: readonly ReaderPassage[]): Promise<ReaderAnswer> {
    if (record.input === undefined) throw new GenerativeReaderError(record.id, "the record has no input");
    const api = this.options.api ?? "chat";
    const task = this.taskOf(record);
    const used = passages.slice(0, this.options.maxPassages ?? passages.length);
    let completion: Completion;
    try {
      const body = this.request(record, passages);
      const json = await postJson(this.endpoint, api === "chat" ? "/chat/completions" : "/completions", body, this.options);
      completion = readCompletion(json, api);
    } catch (err) {
      throw new GenerativeReaderError(record.id, err instanceof Error ? err.message : String(err), { cause: err });
    }
    const { cited, invalid } = parseCitations(completion.content, used.length);
    const { answer, labelled } = cleanAnswer(completion.content, task);
    let provenance: Provenance[] = cited.map((n) => ({ ...used[n - 1].provenance }));
    let source: string = used.length === 0 ? "closed-book" : "cited";
    if (cited.length === 0 && used.length > 0) {
      const policy = this.options.uncited ?? "first";
      source = `uncited:${policy}`;
      provenance = policy === "first" ? [{ ...used[0].provenance }] : policy === "all" ? used.map((p) => ({ ...p.provenance })) : [];
    }
    const meta: Record<string, unknown> = { task, cited, provenance_from: source, raw: completion.content };
    if (invalid.length > 0) meta.invalid_citations = invalid;
    if (labelled === false) meta.unlabelled = true;
    if (completion.model !== undefined) meta.model = completion.model;
    if (completion.finishReason !== undefined) meta.finish_reason = completion.finishReason;
    if (completion.usage !== undefined) meta.usage = completion.usage;
    return { answer, provenance, meta };
  }

  /** Reads every item with at most `concurrency` requests in flight; answers in input order. */
  async readBatch(items: readonly { record: KiltRecord; passages: readonly ReaderPassage[] }[]): Promise<ReaderAnswer[]> {
    return mapLimit(items, this.options.concurrency ?? 4, (item) => this.read(item.record, item.passages));
  }
}

/** `--reader generative`: an OpenAI-compatible chat model (`--model`, `--base-url`, else the environment's). */
export const generativeReaderKind: ReaderDescriptor = {
  name: "generative",
  version: 1,
  summary: "an OpenAI-compatible chat model that cites its passages",
  open: (o) => new GenerativeReader({ baseUrl: o.baseUrl, model: o.model }),
};
