// `tartan serve`: the HTTP API and web explorer over a knowledge source, indexes, runs and gold files
// (src/server). Binds to 127.0.0.1 unless told otherwise; other addresses need a bearer token.

import { Command, InvalidArgumentError, Option } from "commander";
import { startServer } from "../../server/listen.js";
import { collect, log, port, positiveInt, renamedRerank, RUNS_HELP } from "../options.js";
import { splitRerankerFlags } from "../../server/rerankers.js";

function megabytes(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a positive number of megabytes");
  return Math.floor(n * 1024 * 1024);
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("HTTP API (/api, described at /api/openapi.json) and web explorer (/) over a knowledge source, indexes, runs and gold files")
    .option("--ks <dir>", "knowledge-source store directory (tartan ks ingest --out) or clickhouse:// URL")
    .option("--index <dirs...>", "index directories (tartan index build --out) or clickhouse:// BM25 index URLs; selected by directory (or index) name")
    .option("--runs <location>", RUNS_HELP)
    .option("--data <dir>", "KILT gold files (released names) that POST /api/eval may name by dataset")
    .option("--host <host>", "address to listen on; anything but loopback needs --token", "127.0.0.1")
    .option("--port <port>", "port (0: any free one)", port, 8080)
    .option("--token <token>", "bearer token every API request must carry (or TARTAN_SERVE_TOKEN)")
    .option("--allow-host <names...>", "more host names the server answers to without a token (it refuses other Host headers: DNS rebinding)")
    // The value is kept in bytes; the help shows the default in the flag's unit.
    .addOption(new Option("--max-upload <MB>", "largest request body in megabytes (413 beyond)").argParser(megabytes).default(256 * 1024 * 1024, "256"))
    .option("--timeout <s>", "deadline of a search or lookup in seconds", positiveInt, 30)
    .option("--reranker <spec>", "repeatable: NAME=SPEC registers a reranker a search may choose by name (reranker, rerank_depth); a bare SPEC (NAME:key=value,…) reranks every search (docs/retrieval.md#reranking, docs/serve.md)", collect)
    .option("--rerank-depth <n>", "with a bare --reranker SPEC: hits reranked per query (default: the k asked for)", positiveInt)
    .option("--max-rerank-depth <n>", "the deepest rerank a search may ask of a named reranker (default 100; beyond: 400)", positiveInt)
    .addOption(renamedRerank("a search request's refine field"))
    .option("--search-threads <n>", "threads a POST /api/search batch is spread over (default: every core; each worker holds its own copy of the index, so 1 keeps one)", positiveInt)
    .action(async (o: { ks?: string; index?: string[]; runs?: string; data?: string; host: string; port: number; token?: string; allowHost?: string[]; maxUpload: number; timeout: number; searchThreads?: number; reranker?: string[]; rerankDepth?: number; maxRerankDepth?: number }) => {
      const { reranker, rerankers } = splitRerankerFlags(o.reranker);
      if (o.rerankDepth !== undefined && reranker === undefined) throw new Error("--rerank-depth goes with a bare --reranker SPEC (the default reranker); a search chooses a named one's depth (rerank_depth)");
      const s = await startServer({
        ks: o.ks,
        indexes: o.index,
        runs: o.runs,
        data: o.data,
        searchThreads: o.searchThreads,
        reranker,
        rerankDepth: o.rerankDepth,
        rerankers,
        maxRerankDepth: o.maxRerankDepth,
        host: o.host,
        port: o.port,
        token: o.token ?? process.env.TARTAN_SERVE_TOKEN,
        allowHosts: o.allowHost,
        maxUpload: o.maxUpload,
        requestTimeoutMs: o.timeout * 1000,
        log,
      });
      const r = s.resources;
      const what = [r.ks ? `${(await r.ks.count()).toLocaleString("en-US")} pages` : null, ...r.indexes.map((i) => `index ${i.name} (${i.manifest.kind}, ${i.manifest.units.toLocaleString("en-US")} ${i.manifest.unit} units)`)].filter(Boolean);
      log(`tartan serve: ${s.url}/ (${what.join("; ") || "nothing loaded"}); API at ${s.url}/api, described at ${s.url}/api/openapi.json; Ctrl-C stops`);
      // A stray rejection is logged; the server keeps serving.
      process.on("unhandledRejection", (e) => log(`tartan serve: ${e instanceof Error ? e.message : String(e)}`));
      const stop = () => {
        s.close().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
