// `tartan index build`: builds a retrieval index of any registered kind (src/retrieval/kinds/) from
// KILT pages, with progress lines on stderr and a summary at the end. The build itself, with its
// `.NAME.building` directory and atomic swap, is the library's (src/retrieval/build.ts), reached through
// the backend seam (src/backends/open.ts's buildIndexAt), so `--out` takes a directory or, for bm25 and dense (--from-index DIR), a
// clickhouse:// URL (as `--backend` does), and `--ks` a store directory or a clickhouse:// URL.

import type { VectorsInput } from "../../retrieval/build.js";
import { Command, InvalidArgumentError, Option } from "commander";
import { subcommand } from "../subcommand.js";
import { buildIndexAt } from "../../backends/open.js";
import { INDEX_KINDS } from "../../retrieval/kinds/index.js";
import { QUANTIZE_KINDS } from "../../retrieval/dense/index.js";
import type { RetrieverKind, UnitKind } from "../../retrieval/types.js";
import { localPath, log, positiveInt, renamedRerank } from "../options.js";
import { terminalProgress } from "../progress.js";

/** A size such as `3G`, `512M`, `3GiB`, `1.5g` or a number of bytes. */
export function byteSize(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(value);
  if (!m) throw new InvalidArgumentError("expected a size such as 3G, 512M or a number of bytes");
  const n = Number(m[1]) * 1024 ** " kmgt".indexOf((m[2] || " ").toLowerCase());
  if (!(n >= 1 << 20)) throw new InvalidArgumentError("expected at least 1M");
  return Math.floor(n);
}

function jsonObject(value: string): Record<string, unknown> {
  try {
    const v = JSON.parse(value) as unknown;
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new InvalidArgumentError("expected a JSON object");
}

/** The `index` command of `program`, created if no other module made it yet. */
export function indexCommand(program: Command): Command {
  return subcommand(program, "index", "retrieval indexes: build them from KILT pages");
}

/** Adds `index build`. */
export function registerIndexBuild(program: Command): void {
  indexCommand(program)
    .command("build")
    .description("build a retrieval index from KILT pages (units with KILT provenance, manifest.json, the kind's files)")
    .addOption(new Option("--kind <kind>", "retriever").choices(INDEX_KINDS.map((k) => k.name)).makeOptionMandatory())
    .option("--pages <pages.jsonl>", "KILT pages JSONL (.gz too), e.g. from tartan ks from-squad")
    .option("--ks <dir>", "knowledge-source directory or clickhouse:// URL")
    .option("--units <dir>", "a unit table from tartan ks passages --ks DIR --table UNITS (passages cut once, text read from the store)")
    .addOption(new Option("--unit <unit>", "what to retrieve (default: page for tfidf and entity, passage otherwise)").choices(["passage", "paragraph", "page"]))
    .option("--words <n>", "passage size in words (--unit passage)", positiveInt, 100)
    .option("--out <dir>", "index directory to write (default: index-<kind>-<unit>), or for bm25 and dense a clickhouse://host:port/db[/name]?cluster=C URL")
    .option("--backend <url>", "bm25, dense: write the index into ClickHouse (clickhouse://host:port/db[/name]?cluster=C), the same as --out URL")
    .option("--from-index <dir>", "dense --backend URL: copy this compressed dense index (binary codes) into ClickHouse, sharded by coarse list")
    .option("--ngram <n>", "tfidf: longest n-gram", positiveInt)
    .option("--hash-bits <n>", "tfidf: log2 of the hash buckets", positiveInt)
    .option("--no-title", "tfidf, bm25, dense: index the unit text without its title")
    .option("--title-count <n>", "entity: pseudo-links a title adds", Number)
    .option("--memory <size>", "bm25, entity, impact: memory budget of the build, e.g. 3G, 512M (default 3G)", byteSize)
    .option("--threads <n>", "bm25: analysis threads; impact --encoder: encoding threads (default: the number of cores)", positiveInt)
    .option("--params <json>", 'kind-specific parameters as a JSON object (dense: {"encoder": {"type": "use-lite"}}; encoder types use-lite, onnx, bert-onnx, openai: docs/retrieval.md)', jsonObject)
    .option("--vectors <file>", "dense: precomputed vectors (.npy float32/float16, .fvecs, or raw float32/float16 with --dim); row i is unit i of --ids, --units or --dpr-passages")
    .option("--ids <file>", "dense --vectors: one unit a line: wikipedia_id, or wikipedia_id<TAB>start_paragraph_id<TAB>end_paragraph_id")
    .option("--dpr-passages <tsv>", "dense --vectors: KILT's DPR passage file (kilt_w100_title.tsv), placed through the knowledge source --ks")
    .option("--dim <n>", "dense --vectors: dimensions of a raw vector file", positiveInt)
    .addOption(new Option("--dtype <type>", "dense --vectors: element type of a raw vector file (default: float16 for .f16, else float32)").choices(["float32", "float16"]))
    .addOption(new Option("--quantize <how>", "dense --vectors: binary codes, pq codes (8-bit), pq4 codes (4-bit, fast scan) or int8 vectors scanned in coarse lists and rescored from disk, or none (exact search in memory); default pq").choices([...QUANTIZE_KINDS, "none"]))
    .option("--lists <k>", "dense --vectors: coarse lists as k × k (default about 4·√n)", positiveInt)
    .option("--nprobe <n>", "dense --vectors: lists a query probes by default (search can override)", positiveInt)
    .option("--refine <n>", "dense --vectors: candidates refined (rescored) by default (search can override; was --rerank)", positiveInt)
    .addOption(renamedRerank("--refine N"))
    .option("--scale <s>", "impact --vectors: impacts = round(weight × s) (default: --bits 8 of the largest weight)", Number)
    .option("--bits <b>", "impact: impacts of b bits of the largest weight (default 8)", positiveInt)
    .option("--from-bm25 <index>", "impact: the BM25 index's scores quantized as impacts (with --bits or --scale)")
    .option("--encoder <dir>", 'impact: a SPLADE model directory (model.onnx or onnx/model.onnx, vocab.txt) run over the units; settings such as docTopK in --params \'{"encoder": {…}}\' (docs/retrieval.md)')
    .action(async (o: { encoder?: string; scale?: number; bits?: number; fromBm25?: string; kind: Exclude<RetrieverKind, "hybrid">; pages?: string; ks?: string; units?: string; unit?: UnitKind; words: number; out?: string; backend?: string; fromIndex?: string; ngram?: number; hashBits?: number; title: boolean; titleCount?: number; params?: Record<string, unknown>; memory?: number; threads?: number; vectors?: string; ids?: string; dprPassages?: string; dim?: number; dtype?: "float32" | "float16"; quantize?: string; lists?: number; nprobe?: number; refine?: number }) => {
      const params: Record<string, unknown> = { ...(o.params ?? {}) };
      if (o.ngram !== undefined) params.ngram = o.ngram;
      if (o.hashBits !== undefined) params.hashBits = o.hashBits;
      if (o.kind !== "entity" && o.title === false) params.title = false;
      if (o.titleCount !== undefined) params.titleCount = o.titleCount;
      const pages = o.pages === undefined ? undefined : localPath("--pages", o.pages, "a pages file", "a clickhouse:// knowledge source goes to --ks");
      const units = o.units === undefined ? undefined : localPath("--units", o.units);
      const vectorFlags = [o.ids, o.dprPassages, o.dim, o.dtype, o.quantize, o.lists, o.nprobe, o.refine].some((x) => x !== undefined);
      if (vectorFlags && o.vectors === undefined) throw new Error("--ids, --dpr-passages, --dim, --dtype, --quantize, --lists, --nprobe and --refine go with --vectors FILE");
      if ((o.scale !== undefined || o.bits !== undefined || o.fromBm25 !== undefined) && o.kind !== "impact") throw new Error("--scale, --bits and --from-bm25 build impact indexes (--kind impact)");
      if (o.encoder !== undefined) {
        if (o.kind !== "impact") throw new Error("--encoder DIR builds impact indexes (--kind impact); a dense index names its encoder in --params");
        const given = params.encoder;
        if (given !== undefined && (given === null || typeof given !== "object" || Array.isArray(given))) throw new Error("--encoder DIR: --params' encoder must then be an object of settings (docTopK, queryTopK, maxLength, …)");
        params.encoder = given === undefined ? localPath("--encoder", o.encoder) : { ...(given as Record<string, unknown>), dir: localPath("--encoder", o.encoder) };
      }
      if (o.scale !== undefined) params.scale = o.scale;
      if (o.bits !== undefined) params.bits = o.bits;
      let vectors: VectorsInput | undefined;
      if (o.fromBm25 !== undefined) {
        if (o.vectors !== undefined) throw new Error("give --vectors COLLECTION or --from-bm25 INDEX, not both");
        vectors = { file: localPath("--from-bm25", o.fromBm25), fromBm25: true };
      }
      if (o.vectors !== undefined) {
        vectors = { file: localPath("--vectors", o.vectors), ids: o.ids, dprPassages: o.dprPassages, dim: o.dim, dtype: o.dtype };
        if (o.quantize !== undefined) params.quantize = o.quantize;
        if (o.lists !== undefined) params.k1 = params.k2 = o.lists;
        if (o.nprobe !== undefined) params.nprobe = o.nprobe;
        if (o.refine !== undefined) params.refine = o.refine;
      }
      await buildIndexAt({ pages, ks: o.ks, units, kind: o.kind, unit: o.unit, words: o.words, out: o.out, backend: o.backend, fromIndex: o.fromIndex === undefined ? undefined : localPath("--from-index", o.fromIndex), params, memory: o.memory, threads: o.threads, vectors, onProgress: terminalProgress() }, log);
    });
}
