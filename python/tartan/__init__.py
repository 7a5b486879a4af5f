# tartan from Python: the exact KILT evaluator, retrieval, run comparison and knowledge-source lookups,
# by calling the `tartan` command line (found via TARTAN_BIN, the PATH, or this repository's dist/), or a
# running `tartan serve` (tartan.Server). Results are what the CLI prints with --json, as plain dicts and
# lists; tables come as pandas DataFrames when pandas is installed (as_frame=False keeps lists). Every
# failure is a TartanError; no file name or value is read as an option (--flag=VALUE, paths after --).

import json
import os
import tempfile
import warnings
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ._cli import RecordsArg, TartanError, option, path_arg, records_path, run, run_json, tartan_command
from ._frames import frame_or_list, has_pandas, hits_table
from ._server import Server

__version__ = "0.1.0"
__all__ = ["evaluate", "per_query", "retrieve", "compare", "KnowledgeSource", "Server", "TartanError", "tartan_command", "version", "has_pandas"]


def version() -> str:
    """The version of the tartan command line this package calls (`tartan --version`)."""
    return run(["--version"]).stdout.strip()


def _temp_out(prefix: str) -> str:
    try:
        fd, out = tempfile.mkstemp(prefix=prefix, suffix=".jsonl")
    except OSError as e:
        raise TartanError(f"cannot make a temporary file: {e.strerror or e}") from None
    os.close(fd)
    return out


def _read_jsonl(path: str) -> List[Any]:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        raise TartanError(f"{path}: cannot read what tartan wrote ({e})") from None


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _eval_args(ks: Optional[Sequence[int]], rank_keys: Optional[Sequence[str]], mode: str, only_predicted: bool) -> List[str]:
    args: List[str] = []
    if ks is not None:
        args.append(option("--ks", ",".join(str(int(k)) for k in ks)))
    if rank_keys is not None:
        args.append(option("--rank-keys", ",".join(rank_keys)))
    if mode != "all":
        args.append(option("--mode", mode))
    if only_predicted:
        args.append("--only-predicted")
    return args


def evaluate(
    gold: RecordsArg,
    guess: RecordsArg,
    ks: Optional[Sequence[int]] = None,
    rank_keys: Optional[Sequence[str]] = None,
    mode: str = "all",
    only_predicted: bool = False,
    task: str = "kilt",
) -> Dict[str, Any]:
    """Scores predictions against gold records exactly as the official KILT evaluator: what
    `tartan eval GOLD GUESS --json` prints ({"eval_downstream": …, "eval_retrieval": …}, or one
    section's dict with mode="downstream"/"retrieval"). `gold` and `guess` are file paths (JSONL,
    .jsonl.gz, Hugging Face .parquet) or lists of record dicts. task="mintaka" or "wikireading" runs
    those tasks' evaluators. Raises TartanError (with file:line) when the inputs cannot be scored."""
    with records_path(gold, "gold") as g, records_path(guess, "guess") as p:
        args = ["eval", "--json"]
        if task != "kilt":
            args.append(option("--task", task))
        return run_json(args + _eval_args(ks, rank_keys, mode, only_predicted) + ["--", g, p])


def per_query(
    gold: RecordsArg,
    guess: RecordsArg,
    ks: Optional[Sequence[int]] = None,
    rank_keys: Optional[Sequence[str]] = None,
    mode: str = "all",
    only_predicted: bool = False,
    as_frame: Optional[bool] = None,
) -> Any:
    """One row of scores per gold record (`tartan eval --per-query FILE`): a DataFrame when pandas is
    installed (unless as_frame=False), else a list of dicts."""
    out = _temp_out("tartan-per-query-")
    try:
        with records_path(gold, "gold") as g, records_path(guess, "guess") as p:
            run(["eval", "--json", option("--per-query", out)] + _eval_args(ks, rank_keys, mode, only_predicted) + ["--", g, p])
        rows = _read_jsonl(out)
    finally:
        _remove(out)
    return frame_or_list(rows, as_frame)


def retrieve(
    index: Union[str, Sequence[str]],
    queries: Union[RecordsArg, Sequence[str]],
    k: int = 100,
    text: Optional[str] = None,
    as_frame: Optional[bool] = None,
    query_vectors: Optional[str] = None,
    nprobe: Optional[int] = None,
    refine: Optional[int] = None,
    threads: Optional[int] = None,
    query_terms: Optional[Union[str, Sequence[Mapping[str, float]]]] = None,
    rerank: Optional[int] = None,
) -> Any:
    """Retrieves the top `k` units for each query from one index directory (several: reciprocal-rank
    fusion), as `tartan retrieve --index … --input … --top-k k`. query_vectors names a .npy/.fvecs file
    whose row i is query i's vector (dense indexes search it; --query-vectors); nprobe and refine set a
    compressed dense index's depth (lists probed, candidates refined: --nprobe, --refine), threads the
    search threads. query_terms gives sparse query vectors for impact indexes (--query-terms): a JSONL
    {id, vector} or .tsv file matched to the queries by id, or a list of {term: weight} dicts, one per
    query in order (queries then a list). rerank is refine's old name, deprecated (a DeprecationWarning;
    "rerank" now names rerankers in tartan). `queries` is a list of strings (ids
    "0", "1", …), a list of KILT records, or a records file. Returns the KILT guesses the CLI writes
    (one record per query, its provenance ranked) as a list of dicts, or, when pandas is installed and
    as_frame is not False, a DataFrame with one row per hit (id, rank, provenance fields, score).
    text="full" or "none" sets the passage text (--text)."""
    if rerank is not None:
        warnings.warn("tartan.retrieve(rerank=…) is deprecated: the rescoring depth is refine=… (tartan retrieve --refine)", DeprecationWarning, stacklevel=2)
        if refine is not None:
            raise TypeError("give refine, not both refine and its deprecated name rerank")
        refine = rerank
    if isinstance(queries, (list, tuple)) and all(isinstance(q, str) for q in queries):
        queries = [{"id": str(i), "input": q} for i, q in enumerate(queries)]
    indexes = [index] if isinstance(index, (str, os.PathLike)) else list(index)
    terms_file: Optional[str] = None
    if query_terms is not None and not isinstance(query_terms, (str, os.PathLike)):
        vectors = list(query_terms)
        if not isinstance(queries, (list, tuple)):
            raise TartanError("query_terms as a list needs the queries as a list (strings or records), one vector per query")
        if len(vectors) != len(queries):
            raise TartanError(f"query_terms has {len(vectors)} vectors for {len(queries)} queries")
        terms_file = _temp_out("tartan-query-terms-")
        try:
            with open(terms_file, "w", encoding="utf-8") as f:
                for q, v in zip(queries, vectors):
                    f.write(json.dumps({"id": str(q["id"]) if isinstance(q, Mapping) else "", "vector": dict(v)}) + "\n")
        except (OSError, TypeError, ValueError, KeyError) as e:
            _remove(terms_file)
            raise TartanError(f"query_terms: cannot write them ({e})") from None
    out = _temp_out("tartan-retrieve-")
    try:
        with records_path(queries, "queries") as q:  # type: ignore[arg-type]
            args = ["retrieve", *[option("--index", path_arg(i)) for i in indexes], option("--input", q), option("--out", out), option("--top-k", int(k))]
            if text is not None:
                args.append(option("--text", text))
            if query_vectors is not None:
                args.append(option("--query-vectors", path_arg(query_vectors)))
            if terms_file is not None:
                args.append(option("--query-terms", terms_file))
            elif query_terms is not None:
                args.append(option("--query-terms", path_arg(query_terms)))  # type: ignore[arg-type]
            for flag, value in (("--nprobe", nprobe), ("--refine", refine), ("--threads", threads)):
                if value is not None:
                    args.append(option(flag, int(value)))
            run(args)
        guesses = _read_jsonl(out)
    finally:
        _remove(out)
        if terms_file is not None:
            _remove(terms_file)
    if has_pandas() and as_frame is not False:
        return hits_table(guesses)
    return guesses


def compare(
    gold: str,
    runs: Union[Sequence[str], Mapping[str, str]],
    metrics: Optional[Sequence[str]] = None,
    baseline: Optional[str] = None,
    test: str = "randomization",
    correction: str = "holm",
    samples: int = 10000,
    permutations: int = 10000,
    seed: int = 42,
    ks: Optional[Sequence[int]] = None,
    rank_keys: Optional[Sequence[str]] = None,
    dataset: Optional[str] = None,
) -> Dict[str, Any]:
    """Compares runs (prediction or per-query files) on the same gold file, as `tartan compare GOLD
    RUN… --json`: means with bootstrap intervals, differences to the baseline with p-values and
    win/tie/loss counts. `runs` is a list of paths or a {name: path} mapping."""
    if isinstance(runs, Mapping):
        names, paths = list(runs.keys()), [path_arg(p) for p in runs.values()]
    else:
        names, paths = [], [path_arg(p) for p in runs]
    args = ["compare", "--json", option("--test", test), option("--correction", correction), option("--samples", samples), option("--permutations", permutations), option("--seed", seed)]
    args += [option("--name", n) for n in names]
    if metrics is not None:
        args.append(option("--metrics", ",".join(metrics)))
    if baseline is not None:
        args.append(option("--baseline", baseline))
    if ks is not None:
        args.append(option("--ks", ",".join(str(int(x)) for x in ks)))
    if rank_keys is not None:
        args.append(option("--rank-keys", ",".join(rank_keys)))
    if dataset is not None:
        args.append(option("--dataset", dataset))
    return run_json(args + ["--", path_arg(gold), *paths])


class KnowledgeSource:
    """A knowledge-source store (`tartan ks ingest --out DIR`, or a clickhouse:// URL): pages by id,
    title or Wikipedia URL, and paragraph ranges, as `tartan ks get --json` prints them."""

    def __init__(self, path: str):
        self.path = os.fspath(path)

    def _get(self, args: List[str]) -> Optional[Dict[str, Any]]:
        p = run(["ks", "get", option("--ks", path_arg(self.path)), "--json", *args], ok=(0, 1))
        if p.returncode == 1:
            if p.stderr.startswith("tartan: no page"):
                return None
            raise TartanError(p.stderr.strip(), returncode=1, stderr=p.stderr)
        try:
            return json.loads(p.stdout)
        except ValueError:
            raise TartanError(f"tartan ks get printed no JSON: {p.stdout.strip()[:200]!r}", stderr=p.stderr) from None

    def page(self, wikipedia_id: str) -> Optional[Dict[str, Any]]:
        """The page with this wikipedia_id, or None."""
        return self._get([option("--id", wikipedia_id)])

    def page_by_title(self, title: str) -> Optional[Dict[str, Any]]:
        """The page with this title (exact, then ignoring case), or None."""
        return self._get([option("--title", title)])

    def page_by_url(self, url: str) -> Optional[Dict[str, Any]]:
        """The page a Wikipedia URL names (KILT's rules), or None."""
        return self._get([option("--url", url)])

    def paragraphs(self, wikipedia_id: str, start: int, end: Optional[int] = None) -> Optional[Dict[str, Any]]:
        """Paragraphs start..end (inclusive; end None: to the last) of a page: {wikipedia_id,
        wikipedia_title, paragraphs: [{paragraph_id, text}]}, or None when there is no such page."""
        spec = f"{start}-" if end is None else f"{start}-{end}"
        return self._get([option("--id", wikipedia_id), option("--paragraphs", spec)])

    def stats(self) -> Dict[str, Any]:
        """The store's meta data (`tartan ks stats --json`)."""
        return run_json(["ks", "stats", option("--ks", path_arg(self.path)), "--json"])

    def __repr__(self) -> str:
        return f"KnowledgeSource({self.path!r})"
