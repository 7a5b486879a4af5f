// `tartan mcp`: the Model Context Protocol server for agents (src/mcp) over stdio, or over streamable
// HTTP with --port (loopback unless --token is given, as `tartan serve`); the tools read files only
// inside --files and --data.

import type { Command } from "commander";
import { Resources } from "../../server/resources.js";
import { serveMcpStdio } from "../../mcp/stdio.js";
import { startMcpHttp } from "../../mcp/http.js";
import { collect, log, port, positiveInt, renamedRerank } from "../options.js";
import { splitRerankerFlags } from "../../server/rerankers.js";

interface McpFlags {
  ks?: string;
  index?: string[];
  runs?: string;
  data?: string;
  files?: string[];
  host: string;
  port?: number;
  token?: string;
  reranker?: string[];
  rerankDepth?: number;
  maxRerankDepth?: number;
}

export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .description("MCP server for agents (tools search, get_page, get_span, evaluate, compare_runs, list_runs): stdio, or streamable HTTP at /mcp with --port")
    .option("--ks <dir>", "knowledge-source store directory (tartan ks ingest --out) or clickhouse:// URL")
    .option("--index <dirs...>", "index directories (tartan index build --out) or clickhouse:// BM25 index URLs; selected by directory (or index) name")
    .option("--runs <location>", "runs database: a directory or a clickhouse:// URL")
    .option("--data <dir>", "KILT gold files (released names) that evaluate may name by dataset")
    .option("--files <dirs...>", "directories whose files evaluate may read by path (predictions, gold); any other path, -, /dev and /proc are refused")
    .option("--reranker <spec>", "repeatable: NAME=SPEC registers a reranker a search may choose by name (reranker, rerank_depth); a bare SPEC (NAME:key=value,…) reranks every search (docs/retrieval.md#reranking, docs/mcp.md)", collect)
    .option("--rerank-depth <n>", "with a bare --reranker SPEC: hits reranked per query (default: the k asked for)", positiveInt)
    .option("--max-rerank-depth <n>", "the deepest rerank a search may ask of a named reranker (default 100; beyond: 400)", positiveInt)
    .addOption(renamedRerank("the search tool's refine argument"))
    .option("--port <port>", "serve streamable HTTP on this port instead of stdio (0: any free one)", port)
    .option("--host <host>", "address to listen on with --port; anything but loopback needs --token", "127.0.0.1")
    .option("--token <token>", "bearer token every HTTP request must carry (or TARTAN_SERVE_TOKEN)")
    .action(async (o: McpFlags) => {
      const token = o.token ?? process.env.TARTAN_SERVE_TOKEN;
      const { reranker, rerankers } = splitRerankerFlags(o.reranker);
      if (o.rerankDepth !== undefined && reranker === undefined) throw new Error("--rerank-depth goes with a bare --reranker SPEC (the default reranker); a search chooses a named one's depth (rerank_depth)");
      const resources = await Resources.open({ ks: o.ks, indexes: o.index, runs: o.runs, data: o.data, reranker, rerankDepth: o.rerankDepth, rerankers, maxRerankDepth: o.maxRerankDepth });
      if (o.port === undefined) {
        await serveMcpStdio(resources, { files: o.files }).catch(async (e: unknown) => {
          await resources.close();
          throw e;
        });
        await resources.close();
        return;
      }
      const s = await startMcpHttp(resources, { host: o.host, port: o.port, token, files: o.files }).catch(async (e: unknown) => {
        await resources.close();
        throw e;
      });
      log(`tartan mcp: streamable HTTP at ${s.url}; Ctrl-C stops`);
      const stop = () => {
        s.close()
          .then(() => resources.close())
          .then(
            () => process.exit(0),
            () => process.exit(1),
          );
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
