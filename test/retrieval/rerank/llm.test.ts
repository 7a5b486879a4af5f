// The LLM rerankers against a chat-completions server on 127.0.0.1 started by the test (./llm-model.ts: a
// deterministic judge of query-word overlap), on real SQuAD questions and paragraphs of their article:
// pointwise scores are P(yes) from the returned log-probabilities (and from the answer's text without
// them); listwise (RankGPT) sends the windows a sliding window with a stride gives, end to front, and reads
// malformed, repeated, missing and out-of-range ids as RankGPT does; prompts, model and answers are in the
// settings and outputs; server errors fail naming the URL.

import { afterEach, describe, expect, it } from "vitest";
import { openReranker } from "../../../src/retrieval/rerank/index.js";
import { LISTWISE_SYSTEM, parsePermutation, slidingWindows } from "../../../src/retrieval/rerank/listwise.js";
import { pointwiseScore, POINTWISE_SYSTEM } from "../../../src/retrieval/rerank/pointwise.js";
import { rerankOrder, type RerankItem } from "../../../src/retrieval/rerank/reranker.js";
import type { TestServer } from "../../fixtures/readers/openai-server.js";
import { squadPassage, squadRecord } from "../../fixtures/readers/squad.js";
import { hits, pYes, startModel } from "./llm-model.js";

const AFC = "56be4db0acb8001400a502ec"; // Which NFL team represented the AFC at Super Bowl 50?
const passages = (title: string, n: number) => Array.from({ length: n }, (_, i) => squadPassage(title, i + 1)).map((p) => ({ title: p.provenance.title as string, text: p.text }));
const item = (n = 10): RerankItem => ({ query: squadRecord(AFC).input!, passages: passages("Super_Bowl_50", n) });

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The passage as the prompts give it to the model (title and text). */
const shown = (p: { title: string; text: string }) => `${p.title}: ${p.text}`;

describe("llm-pointwise", () => {
  it("scores each passage by P(yes) from the log-probabilities, and records prompt, model and answers", async () => {
    server = await startModel();
    const r = await openReranker(`llm-pointwise:model=judge-1,base-url=${server.baseUrl}`);
    const it0 = item();
    const [out] = await r.rerank([it0]);
    // 10 requests, each Yes/No in one token with the top 5 log-probabilities, temperature 0
    expect(server.requests.length).toBe(10);
    const body = server.requests[0].body;
    expect(body).toMatchObject({ model: "judge-1", temperature: 0, max_tokens: 1, logprobs: true, top_logprobs: 5 });
    expect(body.messages[0]).toEqual({ role: "system", content: POINTWISE_SYSTEM });
    expect(body.messages[1].content).toBe(`Query: ${it0.query}\nPassage: ${shown(it0.passages[0])}\nDoes the passage answer the query? Answer Yes or No.`);
    out.scores.forEach((s, i) => expect(s).toBeCloseTo(pYes(it0.query, shown(it0.passages[i])), 12));
    // the overlap judge puts a paragraph naming the AFC and its champion first
    const best = rerankOrder(out.scores)[0];
    expect(hits(it0.query, it0.passages[best].text)).toBe(Math.max(...it0.passages.map((p) => hits(it0.query, p.text))));
    expect(out.answers).toHaveLength(10);
    expect((out.answers![0] as { content: string; logprobs: unknown }).logprobs).toBeDefined();
    expect(r.settings).toMatchObject({ reranker: "llm-pointwise", model: "judge-1", baseUrl: server.baseUrl, logprobs: true, topLogprobs: 5, prompt: { system: POINTWISE_SYSTEM } });
    expect((r.settings.prompt as { user: string }).user).toBe("Query: {query}\nPassage: {title}: {text}\nDoes the passage answer the query? Answer Yes or No.");
  });

  it("without log-probabilities scores the answer's text: yes 1, no 0, anything else 0.5", async () => {
    const answers = ["Yes", " no.", "Maybe", "YES, it does", "", "Nope"];
    server = await startModel((n) => answers[n - 1]);
    const r = await openReranker(`llm-pointwise:model=judge-1,base-url=${server.baseUrl},logprobs=false,concurrency=1`);
    const [out] = await r.rerank([item(6)]);
    expect(server.requests[0].body.logprobs).toBeUndefined();
    expect(out.scores).toEqual([1, 0, 0.5, 1, 0.5, 0.5]);
    expect(out.answers).toEqual(answers.map((content) => ({ content })));
  });

  it("reads log-probabilities as servers send them", () => {
    const lp = (top: { token: string; logprob: number }[], token = "Yes", logprob = -0.1) => ({ content: [{ token, logprob, top_logprobs: top }] });
    // yes-like tokens are summed (" yes", "Yes", "YES."), others ignored
    expect(pointwiseScore("Yes", lp([{ token: " yes", logprob: Math.log(0.3) }, { token: "Yes", logprob: Math.log(0.2) }, { token: "YES.", logprob: Math.log(0.1) }, { token: "No", logprob: Math.log(0.2) }, { token: "Maybe", logprob: Math.log(0.2) }]))).toBeCloseTo(0.6 / 0.8, 12);
    // only the chosen token: exp(lp) for a yes, 1 − exp(lp) for a no
    expect(pointwiseScore("Yes", lp([], "Yes", Math.log(0.9)))).toBeCloseTo(0.9, 12);
    expect(pointwiseScore("No", lp([], "No", Math.log(0.9)))).toBeCloseTo(0.1, 12);
    // neither yes nor no among them, or unreadable log-probabilities: the text
    expect(pointwiseScore("No", lp([{ token: "Perhaps", logprob: -0.1 }], "Perhaps"))).toBe(0);
    expect(pointwiseScore("yes", { content: "garbage" })).toBe(1);
    expect(pointwiseScore("hmm", null)).toBe(0.5);
  });

  it("fails naming the URL when the server refuses, and wants a model", async () => {
    server = await startModel(() => ({ status: 400, body: { error: { message: "model judge-9 does not exist" } } }));
    const r = await openReranker(`llm-pointwise:model=judge-9,base-url=${server.baseUrl}`);
    await expect(r.rerank([item(2)])).rejects.toThrow(`HTTP 400 from ${server.baseUrl}/chat/completions: {"error":{"message":"model judge-9 does not exist"}}`);
    await expect(openReranker({ name: "llm-pointwise", options: { baseUrl: server.baseUrl } })).rejects.toThrow(/no model given/);
    await expect(openReranker(`llm-pointwise:model=m,api-key=sk-1`)).rejects.toThrow('reranker llm-pointwise: unknown option "apiKey"');
  });
});

describe("llm-listwise (RankGPT)", () => {
  it("slides windows from the end to the front by the stride", () => {
    expect(slidingWindows(100, 20, 10)).toEqual([[80, 100], [70, 90], [60, 80], [50, 70], [40, 60], [30, 50], [20, 40], [10, 30], [0, 20]]);
    expect(slidingWindows(10, 4, 2)).toEqual([[6, 10], [4, 8], [2, 6], [0, 4]]);
    expect(slidingWindows(25, 20, 10)).toEqual([[5, 25], [0, 15]]);
    expect(slidingWindows(5, 20, 10)).toEqual([[0, 5]]);
    expect(slidingWindows(0, 20, 10)).toEqual([]);
  });

  it("reads answers as RankGPT does: repeated ids once, unknown ids dropped, missing ids after in order", () => {
    expect(parsePermutation("[3] > [1] > [2]", 3)).toEqual([2, 0, 1]);
    expect(parsePermutation("[2] > [2] > [1] > [2]", 4)).toEqual([1, 0, 2, 3]);
    expect(parsePermutation("[9] > [0] > [3]", 4)).toEqual([2, 0, 1, 3]);
    expect(parsePermutation("I cannot rank these passages.", 3)).toEqual([0, 1, 2]);
    expect(parsePermutation("The ranking: 4, 2,3 and finally [1]", 4)).toEqual([3, 1, 2, 0]);
    expect(parsePermutation("[10] > [1]", 10)).toEqual([9, 0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parsePermutation("", 0)).toEqual([]);
  });

  it("with one window, gives the model's full order in RankGPT's prompt", async () => {
    server = await startModel();
    const r = await openReranker(`llm-listwise:model=ranker-1,base-url=${server.baseUrl}`);
    const it0 = item(10);
    const [out] = await r.rerank([it0]);
    expect(server.requests.length).toBe(1);
    const m = server.requests[0].body.messages;
    expect(m[0]).toEqual({ role: "system", content: LISTWISE_SYSTEM });
    expect(m[1].content).toBe(`I will provide you with 10 passages, each indicated by number identifier []. \nRank the passages based on their relevance to query: ${it0.query}.`);
    expect(m[3]).toEqual({ role: "user", content: `[1] Title: Super Bowl 50 Content: ${it0.passages[0].text.split(/\s+/u).slice(0, 295).join(" ")}` });
    expect(m[4]).toEqual({ role: "assistant", content: "Received passage [1]." });
    expect(m).toHaveLength(3 + 2 * 10 + 1);
    // the model judges what it was shown: title and text, the first 300 words
    const seen = it0.passages.map((p) => `Title: ${p.title} Content: ${p.text}`.split(/\s+/u).slice(0, 300).join(" "));
    const want = seen.map((_, i) => i).sort((a, b) => hits(it0.query, seen[b]) - hits(it0.query, seen[a]) || a - b);
    expect(rerankOrder(out.scores)).toEqual(want);
    expect(out.scores[want[0]]).toBe(10);
    expect(out.answers).toEqual([want.map((i) => `[${i + 1}]`).join(" > ")]);
    expect(r.settings).toMatchObject({ reranker: "llm-listwise", model: "ranker-1", window: 20, stride: 10 });
    expect((r.settings.prompt as { content: string }[])[3].content).toBe("[1] Title: {title} Content: {text}");
  });

  it("with a sliding window, sends each window's passages in the current order and bubbles the best up", async () => {
    server = await startModel();
    const r = await openReranker(`llm-listwise:model=ranker-1,base-url=${server.baseUrl},window=4,stride=2`);
    const it0 = item(10);
    const [out] = await r.rerank([it0]);
    expect(server.requests.length).toBe(4);
    const windowTexts = (n: number) => (server!.requests[n].body.messages as { role: string; content: string }[]).filter((x) => /^\[\d+\] /u.test(x.content)).map((x) => x.content);
    // the first window is passages 7–10 as the first stage ranked them
    expect(windowTexts(0).map((t) => it0.passages.findIndex((p) => t.includes(p.text.split(/\s+/u).slice(0, 20).join(" "))))).toEqual([6, 7, 8, 9]);
    // the best two (overlap window − stride = 2 carries them) end first
    const score = (i: number) => hits(it0.query, `Title: ${it0.passages[i].title} Content: ${it0.passages[i].text}`.split(/\s+/u).slice(0, 300).join(" "));
    const order = rerankOrder(out.scores);
    const best = it0.passages.map((_, i) => i).sort((a, b) => score(b) - score(a) || a - b);
    expect(order.slice(0, 2).map(score)).toEqual(best.slice(0, 2).map(score));
    expect([...order].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(out.answers).toHaveLength(4);
  });

  it("survives malformed answers: no ids, repeated ids, missing ids, ids out of range", async () => {
    const answers = ["[3] > [3] > [5]", "nothing useful here", "[2] > [9] > [1] > [2]"];
    server = await startModel((n) => answers[n - 1]);
    const r = await openReranker(`llm-listwise:model=ranker-1,base-url=${server.baseUrl},window=5,stride=3`);
    const [out] = await r.rerank([item(10)]);
    // windows [5,10), [2,7), [0,4):
    //   [5,10) "[3] > [3] > [5]": 7, 9, then 5, 6, 8 → 0 1 2 3 4 7 9 5 6 8
    //   [2,7)  no ids: unchanged
    //   [0,4)  "[2] > [9] > [1] > [2]": 1, 0, then 2, 3 → 1 0 2 3 4 7 9 5 6 8
    expect(rerankOrder(out.scores)).toEqual([1, 0, 2, 3, 4, 7, 9, 5, 6, 8]);
    expect(out.answers).toEqual(answers);
    await expect(openReranker(`llm-listwise:model=m,base-url=${server.baseUrl},window=4,stride=4`)).rejects.toThrow("reranker llm-listwise: stride (4) must be smaller than the window (4), or passages would be skipped");
  });
});
