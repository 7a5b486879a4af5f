// `tartan retrieve` (KILT task records in, KILT guesses or a TREC run out: src/pipeline/retrieve.ts does
// the work) and `tartan search` (one query, titles, scores and highlighted passages on the terminal).

import { existsSync } from "node:fs";
import { join } from "node:path";
import { Command, Option } from "commander";
import { openRetriever } from "../../backends/open.js";
import { retrieve, type RetrieveText, type RunFormat } from "../../pipeline/retrieve.js";
import { describeKind, MANIFEST_FILE, memberManifests } from "../../retrieval/manifest.js";
import { parseQueryTerms } from "../../retrieval/impact/queries.js";
import { highlight } from "../../retrieval/highlight.js";
import type { Unit } from "../../retrieval/units/unit.js";
import { keyList, log, positiveInt, renamedRerank } from "../options.js";
import { trecRunToGuesses } from "../../trec/guesses.js";
import { terminalProgress } from "../progress.js";
import { fusionStage, parseWeights } from "../../retrieval/fusion.js";
import type { StageSpec } from "../../retrieval/stages/stage.js";
import { parseBm25Params, type Bm25SearchParams } from "../../retrieval/bm25/search-params.js";
import { parseFeedback } from "../../retrieval/feedback/params.js";
import { TOPIC_FORMATS, type TopicsFormat, type TopicsOptions } from "../../records/topics.js";

export { highlight };

function where(u: Unit): string {
  if (u.start_paragraph_id === undefined) return "";
  const span = u.end_paragraph_id !== undefined && u.end_paragraph_id !== u.start_paragraph_id ? `¶${u.start_paragraph_id}–${u.end_paragraph_id}` : `¶${u.start_paragraph_id}`;
  return `${u.section ? `${u.section} ` : ""}${span}`;
}

/** `tartan search`: the lines it prints. */
export async function searchLines(indexes: string[], query: string, k: number, color: boolean, options: { rrfK?: number; depth?: number; terms?: Record<string, number> } = {}): Promise<string[]> {
  const r = await openRetriever(indexes, { k0: options.rrfK, depth: options.depth });
  try {
    if (options.terms !== undefined && !memberManifests(r.manifest).some((m) => m.kind === "impact")) throw new Error(`--terms: sparse query terms are searched by an impact index; ${describeKind(r.manifest)} is not one`);
    const hits = await r.search(options.terms === undefined ? query : { text: query, terms: options.terms }, k);
    if (hits.length === 0) return ["no results"];
    const mark = color ? (w: string) => `\x1b[1;33m${w}\x1b[0m` : (w: string) => `**${w}**`;
    const lines: string[] = [];
    hits.forEach((h, i) => {
      const u = r.units.get(h.unit);
      const title = color ? `\x1b[1m${u.wikipedia_title}\x1b[0m` : u.wikipedia_title;
      lines.push(`${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${title}  [${u.wikipedia_id}${where(u) ? ` ${where(u)}` : ""}]`);
      lines.push(`     ${highlight(u.text, query, mark)}`);
    });
    return lines;
  } finally {
    await r.close();
  }
}

/**
 * `tartan search --index A B "query"`: the words after `--index` that are index directories (they hold
 * a manifest) are more indexes, fused as `retrieve` does, not query words. At least one word stays the query.
 */
export function indexesAndQuery(indexes: readonly string[], words: readonly string[]): { indexes: string[]; query: string } {
  const all = [...indexes];
  let i = 0;
  while (i < words.length - 1 && existsSync(join(words[i], MANIFEST_FILE))) all.push(words[i++]);
  const query = words.slice(i).join(" ").trim();
  if (query === "") throw new Error("search: no query words after the index directories");
  return { indexes: all, query };
}

// ---- issue 37 (fusion families, topic formats, BM25 at search time): retrieve's flags of its own ----

/** What `--fusion`, `--norm`, `--weights` and `--alpha` give. */
interface FusionFlags {
  fusion?: string;
  norm?: string;
  weights?: number[];
  alpha?: number;
  rrfK?: number;
  depth?: number;
}

/** Adds `--fusion`, `--norm`, `--weights`, `--alpha` to `cmd`. */
function fusionFlags(cmd: Command): Command {
  return cmd
    .option("--fusion <name>", "how several indexes are fused: rrf (default), wsum, combsum, combmnz, combmax, combanz (ranx's formulas; docs/retrieval.md#fusion)")
    .option("--norm <name>", "score fusions: each index's scores normalised first: min-max (default), max, sum, z-score, rank, none")
    .option("--weights <w,…>", "one weight per index, in order (rrf and wsum)", (v: string) => parseWeights(v))
    .option("--alpha <a>", "Pyserini's hybrid form for two indexes: wsum α·first + second (norm none unless --norm; a missing score is that index's lowest)", Number);
}

/** The fusion stage the flags name (undefined: rrf with --rrf-k and --depth, as before). */
function fusionFrom(o: FusionFlags): StageSpec | undefined {
  if (o.fusion === undefined && o.norm === undefined && o.weights === undefined && o.alpha === undefined) return undefined;
  return fusionStage({ fusion: o.fusion, norm: o.norm, weights: o.weights, alpha: o.alpha, k0: o.rrfK, depth: o.depth });
}

/** What `--topics`, `--topics-format` and `--topics-field` give. */
interface TopicFlags {
  topics?: string;
  topicsFormat?: TopicsFormat;
  topicsField?: string;
}

/** Adds `--topics`, `--topics-format`, `--topics-field` to `cmd`. */
function topicFlags(cmd: Command): Command {
  return cmd
    .option("--topics <file>", "queries from a topic file instead of --input's KILT records; each topic's id names its query in the run")
    .addOption(new Option("--topics-format <format>", "tsv: qid<TAB>text (Pyserini); trec: <top><num>…<title>…; jsonl: one object per line (id, qid or _id, and --topics-field)").choices([...TOPIC_FORMATS]).default("tsv"))
    .option("--topics-field <field>", "trec: title (default), desc or narr; jsonl: the text field (default text)");
}

/** The input file and how to read it, from --input or --topics (not both). */
function inputFrom(o: TopicFlags & { input?: string }): { input?: string; topics?: TopicsOptions } {
  if (o.topics === undefined) {
    if (o.topicsField !== undefined) throw new Error("--topics-field goes with --topics");
    return { input: o.input };
  }
  if (o.input !== undefined) throw new Error("give --input (KILT records) or --topics (a topic file), not both");
  return { input: o.topics, topics: { format: o.topicsFormat ?? "tsv", field: o.topicsField } };
}

/** What `--tune-on`, `--tune-metric`, `--tune-keys` and `--tune-alpha` give. */
interface TuneFlags {
  tuneOn?: string;
  tuneMetric?: string;
  tuneKeys?: string[];
  tuneAlpha?: boolean;
}

/** Adds the fusion tuning flags. */
function tuneFlags(cmd: Command): Command {
  return cmd
    .option("--tune-on <records.jsonl>", "choose the fusion's weights on these training records first (a grid; printed and written to OUT.settings.json; docs/retrieval.md#tuning-the-weights)")
    .option("--tune-metric <name>", "with --tune-on: the retrieval metric maximised (Rprec, recall@K, precision@K, success_rate@K)", "Rprec")
    .option("--tune-keys <keys>", "with --tune-on: the metric's rank keys (default: wikipedia_id for pages, wikipedia_id,start_paragraph_id otherwise)", keyList)
    .option("--tune-alpha", "with --tune-on: tune Pyserini's alpha (wsum over two indexes) instead of the weights");
}

/** The tuning the flags ask for. */
function tuneFrom(o: TuneFlags): { records: string; metric?: string; keys?: string[]; alpha?: boolean } | undefined {
  if (o.tuneOn === undefined) {
    if (o.tuneKeys !== undefined || o.tuneAlpha) throw new Error("--tune-keys and --tune-alpha go with --tune-on");
    return undefined;
  }
  return { records: o.tuneOn, metric: o.tuneMetric, keys: o.tuneKeys, alpha: o.tuneAlpha };
}

/** Adds `--bm25 k1=N,b=N`, `--rm3 [key=value,…]` and `--rocchio [key=value,…]`. */
function bm25Flag(cmd: Command): Command {
  return cmd
    .option("--bm25 <k1=N,b=N>", "BM25 indexes: k1 and b at search time (rankings equal an index built with them; either may be left out)", (v: string) => parseBm25Params(v))
    .option("--rm3 [fbDocs=N,fbTerms=N,originalQueryWeight=W]", "BM25: RM3 query expansion as Anserini's (defaults 10, 10, 0.5; also filterTerms=false); docs/retrieval.md#query-feedback")
    .option("--rocchio [topFbDocs=N,topFbTerms=N,alpha=A,beta=B,…]", "BM25: Rocchio query expansion as Anserini's (defaults topFbDocs/topFbTerms 10, alpha 1, beta 0.75; useNegative with bottomFbDocs, bottomFbTerms, gamma 0.15, depth 1000)");
}

/** The feedback stage `--rm3` or `--rocchio` asks for (not both). */
function feedbackFrom(o: { rm3?: string | true; rocchio?: string | true }): StageSpec | undefined {
  if (o.rm3 !== undefined && o.rocchio !== undefined) throw new Error("give --rm3 or --rocchio, not both");
  const method = o.rm3 !== undefined ? "rm3" : o.rocchio !== undefined ? "rocchio" : undefined;
  if (method === undefined) return undefined;
  const { method: _, ...options } = parseFeedback(method, (method === "rm3" ? o.rm3 : o.rocchio)!);
  return { name: method, options };
}

// ---- end of issue 37's block ----

/** Adds `retrieve` and `search`. */
export function registerRetrieve(program: Command): void {
  const retrieveCmd = program
    .command("retrieve")
    .description("retrieve for every record of a KILT file: KILT guesses (one output, the ranked provenance) for tartan eval, or a TREC run")
    .option("--index <dirs...>", "index directories (several: reciprocal-rank fusion), or a clickhouse:// BM25 index URL; required unless --from-trec")
    .option("--input <records.jsonl>", "KILT task records (their input is the query); with --from-trec: the guesses follow their ids and order")
    .option("--from-trec <run>", "no retrieval: turn this TREC run (Pyserini, Anserini, ranx, …) into KILT guesses, docids split by --trec-keys (docs/compare.md)")
    .requiredOption("--out <file>", "guesses (.jsonl/.jsonl.gz) or TREC run to write")
    .option("--top-k <k>", "units per query", positiveInt, 100)
    .addOption(new Option("--format <format>", "kilt: KILT guesses; trec: qid Q0 docid rank score tag").choices(["kilt", "trec"]).default("kilt"))
    // Compact runs by default, as Pyserini's: passage text only when asked (SQuAD top-20 with text: 235 MB).
    .addOption(new Option("--text <mode>", "passage text in the provenance: none (default), full, or auto (not for whole pages); the context metrics of tartan eval (answer_in_context@k) need it").choices(["auto", "full", "none"]).default("none"))
    .option("--threads <n>", "threads (default: the number of cores)", positiveInt)
    .option("--rrf-k <n>", "RRF constant for several indexes", Number, 60)
    .option("--depth <n>", "hits taken from each fused index (default max(top-k, 100))", positiveInt)
    .option("--trec-keys <keys>", "TREC docid = these unit fields joined by + (default: wikipedia_id for pages, wikipedia_id,start_paragraph_id otherwise)", keyList)
    .option("--qrels <file>", "with --format trec: also write qrels from the records' gold provenance")
    .option("--tag <tag>", "TREC run tag")
    .option("--query-terms <file>", "impact: sparse query vectors encoded elsewhere (JSONL {id, vector}, or .tsv of id and tokens, repetition = weight), matched to --input's records by id (other indexes of a fusion search the text)")
    .option("--query-vectors <file>", "dense: query vectors encoded elsewhere (.npy, .fvecs): row i is the query of record i of --input (other indexes of a fusion search the text)")
    .option("--nprobe <n>", "compressed dense indexes: coarse lists probed per query (default: the index's)", positiveInt)
    .option("--refine <n>", "compressed dense indexes: candidates refined (rescored with int8 vectors) per query (default: the index's; was --rerank)", positiveInt)
    .addOption(renamedRerank("--refine N"))
    .option("--reranker <spec>", "rerank each query's hits with a reranker (NAME:key=value,…: cross-encoder, llm-pointwise, llm-listwise, learned:MODEL.json; docs/retrieval.md#reranking)")
    .option("--rerank-depth <n>", "with --reranker: hits reranked per query (default: --top-k)", positiveInt);
  tuneFlags(bm25Flag(topicFlags(fusionFlags(retrieveCmd)))) // issue 37's block
    .action(async (o: { index?: string[]; input?: string; out: string; topK: number; format: RunFormat; text: RetrieveText; threads?: number; rrfK: number; depth?: number; trecKeys?: string[]; qrels?: string; tag?: string; fromTrec?: string; queryVectors?: string; queryTerms?: string; nprobe?: number; refine?: number; reranker?: string; rerankDepth?: number } & FusionFlags & TopicFlags & TuneFlags & { bm25?: Bm25SearchParams; rm3?: string | true; rocchio?: string | true }) => {
      if (o.fromTrec) return void (await trecRunToGuesses(o.fromTrec, o.out, { keys: o.trecKeys, gold: o.input, topK: o.topK }, log));
      const { input, topics } = inputFrom(o); // issue 37
      if (!o.index || !input) throw new Error("--index and --input (or --topics) are required (or --from-trec RUN)");
      if (o.qrels && o.format !== "trec") throw new Error("--qrels goes with --format trec");
      if (o.rerankDepth !== undefined && o.reranker === undefined) throw new Error("--rerank-depth goes with --reranker");
      // feedback over the first stage, then the reranker over the expanded search's hits
      const feedback = feedbackFrom(o);
      const stages = [...(feedback ? [feedback] : []), ...(o.reranker === undefined ? [] : [{ name: "rerank", options: { reranker: o.reranker, depth: o.rerankDepth } }])];
      await retrieve({ indexes: o.index, input, topics, out: o.out, topK: o.topK, format: o.format, text: o.text, threads: o.threads, rrfK: o.rrfK, depth: o.depth, trecKeys: o.trecKeys, qrels: o.qrels, tag: o.tag, queryVectors: o.queryVectors, queryTerms: o.queryTerms, denseSearch: { nprobe: o.nprobe, refine: o.refine }, stages: stages.length ? stages : undefined, tune: tuneFrom(o), fusion: fusionFrom(o), bm25: o.bm25, onProgress: terminalProgress() }, log);
    });

  program
    .command("search")
    .description("search one or more indexes for a query: titles, scores and highlighted passages")
    .requiredOption("--index <dir>", "index directory (or clickhouse:// BM25 index URL); repeat for reciprocal-rank fusion", (v: string, prev: string[] = []) => [...prev, v])
    .option("-k, --top-k <k>", "results", positiveInt, 10)
    .option("--rrf-k <n>", "RRF constant for several indexes", Number, 60)
    .option("--terms <json>", 'impact: the query\'s sparse vector as a JSON object {"term": weight, …} (e.g. from a SPLADE query encoder), searched instead of the text (the words still highlight, and other fused indexes search them)')
    .argument("<query...>", "the query")
    .action(async (words: string[], o: { index: string[]; topK: number; rrfK: number; terms?: string }) => {
      const { indexes, query } = indexesAndQuery(o.index, words);
      let terms: Record<string, number> | undefined;
      if (o.terms !== undefined) {
        let v: unknown;
        try {
          v = JSON.parse(o.terms);
        } catch (e) {
          throw new Error(`--terms: not JSON (${(e as Error).message})`);
        }
        terms = parseQueryTerms(v, "--terms");
      }
      const lines = await searchLines(indexes, query, o.topK, process.stdout.isTTY === true, { rrfK: o.rrfK, terms });
      process.stdout.write(`${lines.join("\n")}\n`);
    });
}
