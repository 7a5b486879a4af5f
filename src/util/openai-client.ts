// A minimal client for OpenAI-compatible text generation servers (vLLM, llama.cpp server, Ollama,
// hosted APIs), used by the generative reader and the LLM rerankers: POST {baseUrl}/chat/completions or {baseUrl}/completions, with a per-attempt timeout,
// retries with exponential backoff and jitter on 429/5xx/network errors/timeouts honouring Retry-After,
// and errors that say what failed without ever showing the API key.

/** Where and how to reach the server. Unset fields come from the environment (see {@link resolveEndpoint}). */
export interface EndpointOptions {
  /** Base URL including the API prefix, e.g. `http://127.0.0.1:8000/v1` (requests go to `{baseUrl}/chat/completions`). */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer …`; local servers usually need none. */
  apiKey?: string;
  /** Model name sent with every request. */
  model?: string;
}

/** The endpoint a generative reader calls: base URL, key and model, after options and environment. */
export interface ResolvedEndpoint {
  baseUrl: string;
  apiKey?: string;
  model: string;
}

/** The base URL used when neither the options nor the environment give one. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

function firstSet(...values: (string | undefined)[]): string | undefined {
  for (const v of values) if (v !== undefined && v.trim() !== "") return v.trim();
  return undefined;
}

/**
 * Options first, then the environment: base URL from `TARTAN_OPENAI_BASE_URL`, then `OPENAI_BASE_URL`,
 * then {@link DEFAULT_BASE_URL}; key from `TARTAN_OPENAI_API_KEY`, then `OPENAI_API_KEY`; model from
 * `TARTAN_OPENAI_MODEL`, then `OPENAI_MODEL`. Throws when no model is given anywhere.
 */
export function resolveEndpoint(options: EndpointOptions = {}, env: NodeJS.ProcessEnv = process.env): ResolvedEndpoint {
  const baseUrl = (firstSet(options.baseUrl, env.TARTAN_OPENAI_BASE_URL, env.OPENAI_BASE_URL) ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  let protocol = "";
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    // reported below
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new Error(`invalid base URL ${JSON.stringify(baseUrl)}: expected an http(s) URL such as http://127.0.0.1:8000/v1`);
  }
  const model = firstSet(options.model, env.TARTAN_OPENAI_MODEL, env.OPENAI_MODEL);
  if (model === undefined) throw new Error("no model given: pass `model` or set TARTAN_OPENAI_MODEL (or OPENAI_MODEL)");
  const apiKey = firstSet(options.apiKey, env.TARTAN_OPENAI_API_KEY, env.OPENAI_API_KEY);
  return apiKey === undefined ? { baseUrl, model } : { baseUrl, apiKey, model };
}

/** Timeouts and retries of the calls to the endpoint. */
export interface RetryOptions {
  /** Milliseconds one attempt may take, body included, before it is aborted (default 60 000). */
  timeoutMs?: number;
  /** Attempts after the first one for retryable failures (default 3). */
  retries?: number;
  /** First backoff in ms; doubles each retry (default 500). */
  backoffMs?: number;
  /** Largest backoff in ms (default 20 000). */
  maxBackoffMs?: number;
  /** A `Retry-After` longer than this (ms) is not honoured; the backoff is used instead (default 60 000). */
  maxRetryAfterMs?: number;
  /** Random source for the jitter, in [0, 1) (default Math.random; tests pass a constant). */
  random?: () => number;
  /** Waits between attempts (default setTimeout; tests may record the delays). */
  sleep?: (ms: number) => Promise<void>;
}

/** Why a request failed after its retries: HTTP status (when one came back), attempts made, a body excerpt. */
export class OpenAIRequestError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly attempts: number,
    readonly status?: number,
    readonly body?: string,
    readonly retryable = false,
  ) {
    super(message);
    this.name = "OpenAIRequestError";
  }
}

const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

/** True for statuses worth retrying: 408, 409, 429 and 5xx. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status) || status >= 500;
}

/**
 * Milliseconds a response asks to wait: `retry-after-ms`, or `Retry-After` as seconds or an HTTP date
 * (relative to `now`); undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms);
  const ra = headers.get("retry-after");
  if (ra === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter for retry number `retry` (0-based): a uniform draw in [cap/2, cap). */
export function backoffDelay(retry: number, backoffMs: number, maxBackoffMs: number, random: () => number): number {
  const cap = Math.min(maxBackoffMs, backoffMs * 2 ** retry);
  return Math.round(cap / 2 + (cap / 2) * random());
}

function redact(text: string, key: string | undefined): string {
  return key ? text.split(key).join("[redacted]") : text;
}

function excerpt(text: string, n = 300): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > n ? `${flat.slice(0, n)}…` : flat;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POSTs `body` as JSON to `{endpoint.baseUrl}{path}` and returns the parsed JSON response. Retries
 * 408/409/429/5xx responses, network errors and timeouts; any other status, or a 2xx whose body is not
 * JSON, fails at once. Errors name the URL and the status and quote the body, never the key.
 */
export async function postJson(endpoint: ResolvedEndpoint, path: string, body: unknown, options: RetryOptions = {}): Promise<unknown> {
  const url = `${endpoint.baseUrl}${path}`;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const retries = options.retries ?? 3;
  const backoffMs = options.backoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 20_000;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  const payload = JSON.stringify(body);

  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let failure: OpenAIRequestError;
    let wait: number | undefined;
    try {
      const response = await fetch(url, { method: "POST", headers, body: payload, signal: controller.signal });
      const text = await response.text();
      if (response.ok) {
        try {
          return JSON.parse(text);
        } catch (err) {
          throw new OpenAIRequestError(
            `invalid JSON in the response from ${url} (status ${response.status}): ${err instanceof Error ? err.message : String(err)}; body: ${JSON.stringify(excerpt(redact(text, endpoint.apiKey)))}`,
            url,
            attempt,
            response.status,
            excerpt(redact(text, endpoint.apiKey)),
          );
        }
      }
      const retryable = isRetryableStatus(response.status);
      failure = new OpenAIRequestError(
        `HTTP ${response.status} from ${url}: ${excerpt(redact(text, endpoint.apiKey))}`,
        url,
        attempt,
        response.status,
        excerpt(redact(text, endpoint.apiKey)),
        retryable,
      );
      const ra = retryAfterMs(response.headers);
      if (ra !== undefined && ra <= maxRetryAfterMs) wait = ra;
    } catch (err) {
      if (err instanceof OpenAIRequestError) throw err;
      const timedOut = controller.signal.aborted;
      const cause = err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
      failure = new OpenAIRequestError(
        timedOut ? `no response from ${url} within ${timeoutMs} ms` : `cannot reach ${url}: ${redact(cause, endpoint.apiKey)}`,
        url,
        attempt,
        undefined,
        undefined,
        true,
      );
    } finally {
      clearTimeout(timer);
    }
    if (!failure.retryable || attempt > retries) {
      if (attempt > 1) failure.message += ` (after ${attempt} attempts)`;
      throw failure;
    }
    await sleep(wait ?? backoffDelay(attempt - 1, backoffMs, maxBackoffMs, random));
  }
}
