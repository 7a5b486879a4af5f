// A deterministic "model" behind the loopback chat-completions server (test/fixtures/readers/openai-server.ts)
// for the LLM reranker tests: it judges a passage by how many of the query's words (4+ letters,
// lowercased) it contains. Pointwise requests get Yes or No with log-probabilities P(yes) = (1 + hits) /
// (2 + query words); listwise (RankGPT) requests get the window's ids by hits, most first, ties by id.
// A test can replace any answer (malformed ones) through `override`.

import { chatReply, json, startServer, type TestServer } from "../../fixtures/readers/openai-server.js";

/** The query words the model looks for. */
export function words(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[a-z0-9]+/gu) ?? []).filter((w) => w.length >= 4));
}

/** How many of the query's words the passage has. */
export function hits(query: string, passage: string): number {
  const p = words(passage);
  let n = 0;
  for (const w of words(query)) if (p.has(w)) n++;
  return n;
}

/** The model's P(yes) for a pair. */
export function pYes(query: string, passage: string): number {
  return (1 + hits(query, passage)) / (2 + words(query).size);
}

interface Message {
  role: string;
  content: string;
}

/** The listwise answer for a request's window: `[i] > [j] > …`. */
function listwise(messages: Message[]): string {
  const query = /relevance to query: ([\s\S]*)\.$/u.exec(messages[1].content)![1];
  const passages = messages.filter((m) => m.role === "user" && /^\[\d+\] /u.test(m.content)).map((m) => m.content.replace(/^\[\d+\] /u, ""));
  const order = passages.map((_, i) => i).sort((a, b) => hits(query, passages[b]) - hits(query, passages[a]) || a - b);
  return order.map((i) => `[${i + 1}]`).join(" > ");
}

/** Starts the server; `override(n, body)` may answer request n (1-based) itself (a string: the content; null: the model's). */
export async function startModel(override: (n: number, body: any) => string | null | { status: number; body: unknown } = () => null): Promise<TestServer> {
  return startServer((req, res, n) => {
    const body = req.body;
    const o = override(n, body);
    if (o !== null && typeof o === "object") return json(res, o.body, o.status);
    const messages = body.messages as Message[];
    if (messages[0].content.startsWith("You are RankGPT")) return json(res, chatReply(o ?? listwise(messages), body.model));
    const user = messages[1].content;
    const query = /^Query: (.*)\n/u.exec(user)![1];
    const passage = /\nPassage: ([\s\S]*)\nDoes the passage/u.exec(user)![1];
    const p = pYes(query, passage);
    const reply = chatReply(o ?? (p >= 0.5 ? "Yes" : "No"), body.model) as { choices: Record<string, unknown>[] };
    if (body.logprobs === true) {
      const top = [
        { token: "Yes", logprob: Math.log(p) },
        { token: "No", logprob: Math.log(1 - p) },
      ];
      reply.choices[0].logprobs = { content: [{ token: p >= 0.5 ? "Yes" : "No", logprob: Math.log(Math.max(p, 1 - p)), top_logprobs: top.slice(0, body.top_logprobs) }] };
    }
    json(res, reply);
  });
}
