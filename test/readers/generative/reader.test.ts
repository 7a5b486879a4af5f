import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { GenerativeReader, GenerativeReaderError } from "../../../src/readers/generative/reader.js";
import { answerRecord } from "../../../src/readers/types.js";
import { type SeenRequest, type TestServer, chatReply, json, startServer, textReply } from "../../fixtures/readers/openai-server.js";
import { squadPassage, squadRecord } from "../../fixtures/readers/squad.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// Real SQuAD v1.1 dev questions about Super Bowl 50, and passages from three articles, the answering
// one second, so citations and the uncited fallback pick different pages.
const AFC = "56be4db0acb8001400a502ec"; // Which NFL team represented the AFC at Super Bowl 50?
const NFC = "56be4db0acb8001400a502ed"; // Which NFL team represented the NFC at Super Bowl 50?
const WHERE = "56be4db0acb8001400a502ee"; // Where did Super Bowl 50 take place?
const WON = "56be4db0acb8001400a502ef"; // Which NFL team won Super Bowl 50?
const passages = () => [squadPassage("Warsaw", 1, 12.5), squadPassage("Super_Bowl_50", 1, 11.0), squadPassage("Normans", 1, 9.75)];

/** Canned replies by question, as a model that cites would write them. */
const REPLIES: Record<string, string> = {
  "Which NFL team represented the AFC at Super Bowl 50?": 'Answer: "Denver Broncos" [2]',
  "Which NFL team represented the NFC at Super Bowl 50?": "Carolina Panthers [2][9]",
  "Where did Super Bowl 50 take place?": "Santa Clara, California [2], at Levi's Stadium [1]",
  "Which NFL team won Super Bowl 50?": "The Denver Broncos.",
};

/** A protocol-speaking model: checks the request like a strict server, answers from REPLIES. */
function model(expectedModel: string) {
  return (req: SeenRequest, res: ServerResponse) => {
    const body = req.body;
    const problems: string[] = [];
    if (req.path !== "/v1/chat/completions") problems.push(`path ${req.path}`);
    if (body.model !== expectedModel) problems.push(`model ${body.model}`);
    if (body.temperature !== 0) problems.push(`temperature ${body.temperature}`);
    if (body.max_tokens !== 64) problems.push(`max_tokens ${body.max_tokens}`);
    if (!Array.isArray(body.messages) || body.messages.length !== 2) return json(res, { error: "messages" }, 400);
    const [system, user] = body.messages;
    if (system.role !== "system" || user.role !== "user") problems.push("roles");
    const question = /^Question: (.*)$/m.exec(user.content)?.[1] ?? "";
    const withPassages = user.content.startsWith("Passages:\n[1] Warsaw: One of the most famous people born in Warsaw");
    if (withPassages && !user.content.includes("\n[2] Super Bowl 50: Super Bowl 50 was an American football game")) problems.push("passage 2");
    if (withPassages && !user.content.includes("\n[3] Normans: The Normans (Norman: Nourmands; French: Normands; Latin: Normanni)")) problems.push("passage 3");
    if (withPassages !== system.content.includes("Cite the passages")) problems.push("citation instruction");
    if (problems.length > 0) return json(res, { error: problems.join(", ") }, 400);
    json(res, chatReply(REPLIES[question] ?? "I don't know", expectedModel));
  };
}

const ids = (a: { provenance: { wikipedia_id: unknown }[] }) => a.provenance.map((p) => p.wikipedia_id);

describe("GenerativeReader against a local OpenAI-compatible server", () => {
  it("answers real SQuAD questions from numbered passages; cited passages become provenance in citation order", async () => {
    server = await startServer(model("tiny-qa"));
    const reader = new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", env: {} });
    expect(reader.name).toBe("generative:tiny-qa");

    const afc = await reader.read(squadRecord(AFC), passages());
    expect(afc.answer).toBe("Denver Broncos");
    expect(afc.provenance).toEqual([
      { wikipedia_id: "squad:Super_Bowl_50", title: "Super Bowl 50", start_paragraph_id: 1, start_character: 0, end_paragraph_id: 1, end_character: 775 },
    ]);
    expect(afc.score).toBeUndefined();
    expect(afc.meta).toEqual({
      task: "qa",
      cited: [2],
      provenance_from: "cited",
      raw: 'Answer: "Denver Broncos" [2]',
      model: "tiny-qa",
      finish_reason: "stop",
      usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
    });

    const where = await reader.read(squadRecord(WHERE), passages());
    expect(where.answer).toBe("Santa Clara, California, at Levi's Stadium");
    expect(ids(where)).toEqual(["squad:Super_Bowl_50", "squad:Warsaw"]);
    expect(where.meta?.cited).toEqual([2, 1]);

    const nfc = await reader.read(squadRecord(NFC), passages());
    expect(nfc.answer).toBe("Carolina Panthers");
    expect(ids(nfc)).toEqual(["squad:Super_Bowl_50"]);
    expect(nfc.meta?.invalid_citations).toEqual([9]);
    expect(server.requests.length).toBe(3);
  });

  it("falls back to the top-ranked passage when nothing is cited (or to none, or all, as asked)", async () => {
    server = await startServer(model("tiny-qa"));
    const first = await new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", env: {} }).read(squadRecord(WON), passages());
    expect(first.answer).toBe("The Denver Broncos");
    expect(ids(first)).toEqual(["squad:Warsaw"]);
    expect(first.meta?.provenance_from).toBe("uncited:first");
    const none = await new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", uncited: "none", env: {} }).read(squadRecord(WON), passages());
    expect(none.provenance).toEqual([]);
    const all = await new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", uncited: "all", env: {} }).read(squadRecord(WON), passages());
    expect(ids(all)).toEqual(["squad:Warsaw", "squad:Super_Bowl_50", "squad:Normans"]);
    const two = await new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", uncited: "all", maxPassages: 2, env: {} });
    const user = (two.request(squadRecord(WON), passages()).messages as { content: string }[])[1].content;
    expect(user.includes("\n[2] Super Bowl 50: ")).toBe(true);
    expect(user.includes("[3]")).toBe(false);
  });

  it("answers closed-book with empty provenance, whatever the model cites", async () => {
    server = await startServer((req, res) => {
      const user = req.body.messages[1].content as string;
      json(res, chatReply(user.includes("Passages:") ? "wrong prompt" : "Denver Broncos [1]"));
    });
    const reader = new GenerativeReader({ baseUrl: server.baseUrl, model: "tiny-qa", env: {} });
    const a = await reader.read(squadRecord(AFC), []);
    expect(a).toEqual({
      answer: "Denver Broncos",
      provenance: [],
      meta: {
        task: "qa",
        cited: [],
        invalid_citations: [1],
        provenance_from: "closed-book",
        raw: "Denver Broncos [1]",
        model: "test-model",
        finish_reason: "stop",
        usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
      },
    });
    expect(answerRecord(squadRecord(AFC), a)).toEqual({
      id: AFC,
      input: "Which NFL team represented the AFC at Super Bowl 50?",
      output: [{ answer: "Denver Broncos", provenance: [], meta: a.meta }],
    });
  });

  it("labels a real FEVER claim SUPPORTS/REFUTES, with the task given by dataset name", async () => {
    server = await startServer((req, res) => {
      const user = req.body.messages[1].content as string;
      json(res, chatReply(user === "Claim: Telemundo is a English-language television network.\n\nVerdict:" ? "Refuted." : "It is supported"));
    });
    const reader = new GenerativeReader({ baseUrl: server.baseUrl, model: "m", task: "fever", env: {} });
    const refuted = await reader.read({ id: "111897", input: "Telemundo is a English-language television network.", output: [] }, []);
    expect([refuted.answer, refuted.meta?.task]).toEqual(["REFUTES", "fact-checking"]);
    const supported = await reader.read({ id: "137334", input: "Fox 2000 Pictures released the film Soul Food.", output: [] }, []);
    expect(supported.answer).toBe("SUPPORTS");
  });

  it("speaks /completions with the prompt as text", async () => {
    server = await startServer((req, res) => {
      if (req.path !== "/v1/completions" || typeof req.body.prompt !== "string" || req.body.messages !== undefined) return json(res, { error: "bad" }, 400);
      json(res, textReply(req.body.prompt.endsWith("Which NFL team won Super Bowl 50?\n\nAnswer:") ? " Denver Broncos [2]\n" : "?"));
    });
    const reader = new GenerativeReader({ baseUrl: server.baseUrl, model: "m", api: "completions", env: {} });
    const a = await reader.read(squadRecord(WON), passages());
    expect([a.answer, ids(a)]).toEqual(["Denver Broncos", ["squad:Super_Bowl_50"]]);
  });

  it("takes base URL, key and model from the environment, and passes extra body fields", async () => {
    server = await startServer((req, res) => json(res, chatReply(`${req.headers.authorization} ${req.body.model} ${req.body.seed} ${req.body.max_tokens} ${req.body.temperature}`)));
    const reader = new GenerativeReader({
      env: { TARTAN_OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: "sk-env", TARTAN_OPENAI_MODEL: "env-model" },
      extraBody: { seed: 7 },
      maxTokens: 16,
      temperature: 0.5,
    });
    const a = await reader.read(squadRecord(WON), []);
    expect(a.answer).toBe("Bearer sk-env env-model 7 16 0.5");
  });

  it("uses the task's answer length: 256 tokens for dialogue, 512 for long answers", () => {
    const r = (task: string) => new GenerativeReader({ baseUrl: "http://127.0.0.1:1/v1", model: "m", task, env: {} });
    expect(r("wow").request({ id: 1, input: "hi", output: [] }, []).max_tokens).toBe(256);
    expect(r("eli5").request({ id: 1, input: "why?", output: [] }, []).max_tokens).toBe(512);
    expect(r("auto").request({ id: 1, input: "Cirith Ungol [SEP] genre", output: [] }, []).max_tokens).toBe(64);
  });

  it("reads a batch in input order with at most `concurrency` requests in flight", async () => {
    server = await startServer(async (req, res) => {
      await new Promise((r) => setTimeout(r, 60));
      model("m")(req, res);
    });
    const items = [AFC, NFC, WHERE, WON, AFC, NFC].map((id) => ({ record: squadRecord(id), passages: passages() }));
    const two = await new GenerativeReader({ baseUrl: server.baseUrl, model: "m", concurrency: 2, env: {} }).readBatch(items);
    expect(two.map((a) => a.answer)).toEqual([
      "Denver Broncos",
      "Carolina Panthers",
      "Santa Clara, California, at Levi's Stadium",
      "The Denver Broncos",
      "Denver Broncos",
      "Carolina Panthers",
    ]);
    expect(server.maxInFlight).toBe(2);
    expect(server.requests.length).toBe(6);
    await server.close();
    server = await startServer(async (req, res) => {
      await new Promise((r) => setTimeout(r, 60));
      model("m")(req, res);
    });
    await new GenerativeReader({ baseUrl: server.baseUrl, model: "m", env: {} }).readBatch(items);
    expect(server.maxInFlight).toBe(4);
    expect(() => new GenerativeReader({ baseUrl: server!.baseUrl, model: "m", concurrency: 0, env: {} })).toThrow("concurrency must be a positive integer, got 0");
  });

  it("names the record in errors: HTTP failures, replies without content, failures inside a batch", async () => {
    server = await startServer((req, res) => {
      const q = /^Question: (.*)$/m.exec(req.body.messages[1].content)?.[1];
      if (q === "Where did Super Bowl 50 take place?") return json(res, { error: { message: "context length exceeded" } }, 400);
      if (q === "Which NFL team won Super Bowl 50?") return json(res, { choices: [{ message: { role: "assistant", content: null }, finish_reason: "length" }] });
      json(res, chatReply("Denver Broncos [2]"));
    });
    const reader = new GenerativeReader({ baseUrl: server.baseUrl, model: "m", env: {} });
    const http = await reader.read(squadRecord(WHERE), passages()).catch((e) => e);
    expect(http).toBeInstanceOf(GenerativeReaderError);
    expect(http.recordId).toBe(WHERE);
    expect(http.message).toBe(`record "${WHERE}": HTTP 400 from ${server.baseUrl}/chat/completions: {"error":{"message":"context length exceeded"}}`);
    expect(http.cause.status).toBe(400);
    const empty = await reader.read(squadRecord(WON), passages()).catch((e) => e);
    expect(empty.message).toBe(
      `record "${WON}": the response has no choices[0].message.content string: {"message":{"role":"assistant","content":null},"finish_reason":"length"}`,
    );
    const batch = await reader
      .readBatch([AFC, NFC, WHERE, AFC].map((id) => ({ record: squadRecord(id), passages: passages() })))
      .catch((e) => e);
    expect(batch.message).toBe(`record "${WHERE}": HTTP 400 from ${server.baseUrl}/chat/completions: {"error":{"message":"context length exceeded"}}`);
  });

  it("refuses a record without input before sending anything (TriviaQA's released files)", async () => {
    server = await startServer((_req, res) => json(res, chatReply("x")));
    const err = await new GenerativeReader({ baseUrl: server.baseUrl, model: "m", env: {} }).read({ id: "sfq_17752", output: [] }, []).catch((e) => e);
    expect(err).toBeInstanceOf(GenerativeReaderError);
    expect(err.message).toBe('record "sfq_17752": the record has no input');
    expect(server.requests.length).toBe(0);
  });

  it("retries a 429 inside read and still answers", async () => {
    let calls = 0;
    server = await startServer((req, res) => {
      calls++;
      if (calls === 1) return json(res, { error: "rate limited" }, 429, { "retry-after-ms": "20" });
      model("m")(req, res);
    });
    const a = await new GenerativeReader({ baseUrl: server.baseUrl, model: "m", env: {} }).read(squadRecord(AFC), passages());
    expect([a.answer, ids(a), server.requests.length]).toEqual(["Denver Broncos", ["squad:Super_Bowl_50"], 2]);
  });
});
