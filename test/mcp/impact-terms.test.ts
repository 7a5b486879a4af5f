// `tartan mcp`'s search tool with `terms` (a sparse query vector) over stdio (the built CLI) against an
// impact index (BM25's scores as 24-bit impacts over SQuAD's paragraphs) and a BM25 index: hits equal
// the library's search of the same vector; a bad weight and terms for a BM25 index are refused.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { openRetriever } from "../../src/backends/open.js";
import { impactFixture, type ImpactFixture } from "../server/impact-fixture.js";

const CLI = new URL("../../dist/src/cli/main.js", import.meta.url).pathname;
let f: ImpactFixture;
let client: Client;

beforeAll(async () => {
  f = await impactFixture(4);
  client = new Client({ name: "tartan-test", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, "mcp", "--index", f.bm25, f.impact], stderr: "pipe" }));
}, 300_000);
afterAll(async () => {
  await client?.close();
});

async function search(args: Record<string, unknown>): Promise<{ isError?: boolean; text: string; structured: any }> {
  const r = (await client.callTool({ name: "search", arguments: args })) as { content: { text: string }[]; structuredContent?: unknown; isError?: boolean };
  return { isError: r.isError, text: r.content[0].text, structured: r.structuredContent };
}

describe("tartan mcp: search with terms", () => {
  it("searches the impact index with the vector given, equal to the library", async () => {
    const r = await openRetriever(f.impact);
    try {
      for (let i = 0; i < f.questions.length; i++) {
        const got = await search({ query: f.questions[i], k: 5, index: "impact", terms: f.terms[i] });
        expect(got.isError).toBeFalsy();
        const want = await r.search({ text: f.questions[i], terms: f.terms[i] }, 5);
        expect(got.structured.hits.map((h: any) => [h.provenance.wikipedia_id, h.provenance.start_paragraph_id, h.score])).toEqual(
          want.map((h) => [r.units.get(h.unit).wikipedia_id, r.units.get(h.unit).start_paragraph_id, h.score]),
        );
      }
    } finally {
      await r.close();
    }
  });

  it("refuses a negative weight and terms for a BM25 index", async () => {
    const neg = await search({ query: "x", index: "impact", terms: { bowl: -1 } });
    expect(neg.isError).toBe(true);
    expect(neg.text).toContain("terms");
    const bm25 = await search({ query: "x", index: "bm25", terms: { bowl: 1 } });
    expect(bm25.isError).toBe(true);
    expect(bm25.text).toBe("terms are searched by an impact index; bm25 is bm25");
  });
});
