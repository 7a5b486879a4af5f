# The Python package against the command line it calls: a SQuAD knowledge source, BM25 paragraph index,
# 60 questions and two retrieval runs built here with the CLI; every Python result must equal what the
# CLI prints with --json (or writes) exactly, and errors must carry tartan's messages.
# Run: python3 -m unittest discover -s python/tests (TARTAN_BIN may name the CLI; SQuAD comes from
# TARTAN_SQUAD or ../shared/data/squad beside the repository; test/python/python.test.ts runs it in CI).

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, HTTPServer
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
# The package as installed (pip install ./python) when TARTAN_TEST_INSTALLED is set, else this checkout's.
if not os.environ.get("TARTAN_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(REPO, "python"))

import tartan  # noqa: E402
from tartan import TartanError  # noqa: E402

SQUAD = os.environ.get("TARTAN_SQUAD", os.path.join(REPO, "..", "shared", "data", "squad", "dev-v1.1.reconstructed.json"))


def cli(*args):
    """Runs the CLI the package uses; returns stdout."""
    p = subprocess.run(tartan.tartan_command() + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8")
    if p.returncode != 0:
        raise AssertionError(f"tartan {' '.join(map(str, args))}: {p.stderr}")
    return p.stdout


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Fixture:
    dir = ""


def setUpModule():
    d = tempfile.mkdtemp(prefix="tartan-python-")
    Fixture.dir = d
    Fixture.pages = os.path.join(d, "pages.jsonl")
    Fixture.ks = os.path.join(d, "ks")
    Fixture.index = os.path.join(d, "bm25")
    Fixture.gold = os.path.join(d, "squad-gold.jsonl")
    Fixture.top20 = os.path.join(d, "top20.jsonl")
    Fixture.top1 = os.path.join(d, "top1.jsonl")
    cli("ks", "from-squad", SQUAD, "--out", Fixture.pages)
    cli("ks", "ingest", Fixture.pages, "--out", Fixture.ks)
    cli("index", "build", "--kind", "bm25", "--ks", Fixture.ks, "--unit", "paragraph", "--out", Fixture.index)
    questions = os.path.join(d, "questions.jsonl")
    cli("datasets", "convert", "squad", SQUAD, "--out", questions)
    with open(questions, encoding="utf-8") as f, open(Fixture.gold, "w", encoding="utf-8") as out:
        for i, line in enumerate(f):
            if i % 170 == 0:
                out.write(line)
    cli("retrieve", "--index", Fixture.index, "--input", Fixture.gold, "--out", Fixture.top20, "--top-k", "20")
    cli("retrieve", "--index", Fixture.index, "--input", Fixture.gold, "--out", Fixture.top1, "--top-k", "1")


def tearDownModule():
    shutil.rmtree(Fixture.dir, ignore_errors=True)


class EvaluateTest(unittest.TestCase):
    def test_equals_the_cli_json(self):
        r = tartan.evaluate(Fixture.gold, Fixture.top20)
        self.assertEqual(r, json.loads(cli("eval", Fixture.gold, Fixture.top20, "--json")))
        self.assertEqual(sorted(r), ["eval_downstream", "eval_retrieval"])
        self.assertEqual(r["eval_retrieval"]["Rprec"], json.loads(cli("eval", Fixture.gold, Fixture.top20, "--json"))["eval_retrieval"]["Rprec"])

    def test_options(self):
        r = tartan.evaluate(Fixture.gold, Fixture.top20, ks=[1, 3], rank_keys=["wikipedia_id", "start_paragraph_id"], mode="retrieval")
        self.assertEqual(r, json.loads(cli("eval", Fixture.gold, Fixture.top20, "--json", "--ks", "1,3", "--rank-keys", "wikipedia_id,start_paragraph_id", "--mode", "retrieval")))
        self.assertEqual(list(r)[:4], ["Rprec", "entity_in_input", "precision@1", "answer_in_context@1"])

    def test_records_as_lists(self):
        gold, guess = read_jsonl(Fixture.gold), read_jsonl(Fixture.top1)
        self.assertEqual(len(gold), 63)
        self.assertEqual(tartan.evaluate(gold, guess), json.loads(cli("eval", Fixture.gold, Fixture.top1, "--json")))

    def test_per_query_rows(self):
        rows = tartan.per_query(Fixture.gold, Fixture.top1, as_frame=False)
        out = os.path.join(Fixture.dir, "pq.jsonl")
        cli("eval", Fixture.gold, Fixture.top1, "--json", "--per-query", out)
        self.assertEqual(rows, read_jsonl(out))
        self.assertEqual(len(rows), 63)

    def test_errors_carry_tartans_message(self):
        missing = os.path.join(Fixture.dir, "missing.jsonl")
        with self.assertRaises(TartanError) as e:
            tartan.evaluate(Fixture.gold, missing)
        self.assertEqual(e.exception.returncode, 2)
        self.assertIn(missing, str(e.exception))
        bad = os.path.join(Fixture.dir, "bad.jsonl")
        with open(bad, "w", encoding="utf-8") as f:
            f.write('{"id": "1", "output": [{"answer": "x"}]}\n{not json\n')
        with self.assertRaises(TartanError) as e:
            tartan.evaluate(Fixture.gold, bad)
        self.assertIn(f"{bad}:2", str(e.exception))


class RetrieveTest(unittest.TestCase):
    def test_equals_the_cli_output(self):
        got = tartan.retrieve(Fixture.index, Fixture.gold, k=20, as_frame=False)
        self.assertEqual(got, read_jsonl(Fixture.top20))

    def test_strings_as_queries(self):
        got = tartan.retrieve(Fixture.index, ["Which NFL team represented the AFC at Super Bowl 50?"], k=3, as_frame=False)
        self.assertEqual([g["id"] for g in got], ["0"])
        prov = got[0]["output"][0]["provenance"]
        self.assertEqual(len(prov), 3)
        self.assertEqual(prov[0]["wikipedia_id"], "squad:Super_Bowl_50")
        rows = tartan._frames.hit_rows(got)
        self.assertEqual([(r["id"], r["rank"]) for r in rows], [("0", 1), ("0", 2), ("0", 3)])


    def test_dense_options_reach_the_cli(self):
        # nprobe goes to `tartan retrieve --nprobe`, which refuses it on a BM25 index, naming the kind
        with self.assertRaises(TartanError) as e:
            tartan.retrieve(Fixture.index, ["Super Bowl 50"], k=3, nprobe=8, threads=2, as_frame=False)
        self.assertIn("no index given is one (bm25)", str(e.exception))
        # refine goes to --refine (the rescoring depth once called --rerank); rerank= still works, with a warning
        with self.assertRaises(TartanError) as e:
            tartan.retrieve(Fixture.index, ["Super Bowl 50"], k=3, refine=40, as_frame=False)
        self.assertIn("--nprobe and --refine set the search of a compressed dense index, and no index given is one (bm25)", str(e.exception))
        with self.assertWarns(DeprecationWarning), self.assertRaises(TartanError) as e:
            tartan.retrieve(Fixture.index, ["Super Bowl 50"], k=3, rerank=40, as_frame=False)
        self.assertIn("--nprobe and --refine set the search", str(e.exception))


class CompareTest(unittest.TestCase):
    def test_equals_the_cli_json(self):
        got = tartan.compare(Fixture.gold, {"top20": Fixture.top20, "top1": Fixture.top1}, samples=1000, permutations=1000)
        want = json.loads(cli("compare", Fixture.gold, Fixture.top20, Fixture.top1, "--json", "--name", "top20", "top1", "--samples", "1000", "--permutations", "1000"))
        self.assertEqual(got, want)
        self.assertEqual([r["name"] for r in got["runs"]], ["top20", "top1"])


class KnowledgeSourceTest(unittest.TestCase):
    def test_pages_equal_ks_get(self):
        ks = tartan.KnowledgeSource(Fixture.ks)
        page = ks.page("squad:Super_Bowl_50")
        self.assertEqual(page, json.loads(cli("ks", "get", "--ks", Fixture.ks, "--id", "squad:Super_Bowl_50", "--json")))
        self.assertEqual(page["wikipedia_title"], "Super Bowl 50")
        self.assertEqual(ks.page_by_title("super bowl 50"), page)
        self.assertIsNone(ks.page("no-such-page"))
        p = ks.paragraphs("squad:Super_Bowl_50", 1, 2)
        self.assertEqual([x["paragraph_id"] for x in p["paragraphs"]], [1, 2])
        self.assertEqual(p["paragraphs"][0]["text"], page["text"][1])
        self.assertEqual(ks.stats(), json.loads(cli("ks", "stats", "--ks", Fixture.ks, "--json")))


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = tartan.Server.start(ks=Fixture.ks, indexes=[Fixture.index])

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_search_and_pages(self):
        r = self.server.search("Which NFL team represented the AFC at Super Bowl 50?", k=3)
        cli_hits = tartan.retrieve(Fixture.index, ["Which NFL team represented the AFC at Super Bowl 50?"], k=3, text="full", as_frame=False)[0]["output"][0]["provenance"]
        self.assertEqual([h["provenance"]["wikipedia_id"] for h in r["hits"]], [p["wikipedia_id"] for p in cli_hits])
        self.assertEqual([h["text"] for h in r["hits"]], [p["text"] for p in cli_hits])
        page = self.server.page("squad:Super_Bowl_50")
        self.assertEqual(page["text"], tartan.KnowledgeSource(Fixture.ks).page("squad:Super_Bowl_50")["text"])
        span = self.server.span("squad:Super_Bowl_50", 1, 1, 0, 12)
        self.assertEqual(span["text"], page["text"][1][:12])

    def test_evaluate_equals_the_cli_json(self):
        r = self.server.evaluate(Fixture.top20, gold=Fixture.gold)
        self.assertEqual(r["result"], json.loads(cli("eval", Fixture.gold, Fixture.top20, "--json")))
        self.assertIsNone(r["per_query"])

    def test_errors_carry_the_servers_message(self):
        with self.assertRaises(TartanError) as e:
            self.server.page("no-such-page")
        self.assertEqual(e.exception.returncode, 404)
        self.assertEqual(str(e.exception), 'no page with wikipedia_id "no-such-page"')
        with self.assertRaises(TartanError) as e:
            self.server.runs()
        self.assertEqual(str(e.exception), "no runs database is loaded (start the server with --runs DIR)")


class ImpactTermsTest(unittest.TestCase):
    """Sparse query vectors (query_terms, search_batch's terms) for an impact index: BM25's scores as 24-bit impacts."""

    @classmethod
    def setUpClass(cls):
        cls.impact = os.path.join(Fixture.dir, "impact")
        cli("index", "build", "--kind", "impact", "--from-bm25", Fixture.index, "--bits", "24", "--out", cls.impact)
        cls.records = read_jsonl(Fixture.gold)
        # each question's first words (lower case) weighted 1, 2, 3, …: terms the index has or not
        cls.terms = [{w: float(i + 1) for i, w in enumerate(r["input"].lower().replace("?", " ").split()[:4])} for r in cls.records]
        cls.file = os.path.join(Fixture.dir, "terms.jsonl")
        with open(cls.file, "w", encoding="utf-8") as f:
            for r, t in zip(cls.records, cls.terms):
                f.write(json.dumps({"id": r["id"], "vector": t}) + "\n")

    def test_retrieve_with_query_terms_equals_the_cli(self):
        for indexes in ([self.impact], [Fixture.index, self.impact]):
            got = tartan.retrieve(indexes, self.records, k=5, query_terms=self.terms, as_frame=False)
            out = os.path.join(Fixture.dir, "terms-run.jsonl")
            cli("retrieve", *[a for i in indexes for a in ("--index", i)], "--input", Fixture.gold, "--query-terms", self.file, "--out", out, "--top-k", "5")
            self.assertEqual(got, read_jsonl(out))
            self.assertEqual(tartan.retrieve(indexes, Fixture.gold, k=5, query_terms=self.file, as_frame=False), got)
        with self.assertRaises(TartanError) as e:
            tartan.retrieve(self.impact, self.records, k=5, query_terms=self.terms[:2])
        self.assertEqual(str(e.exception), f"query_terms has 2 vectors for {len(self.records)} queries")

    def test_server_search_batch_with_terms(self):
        server = tartan.Server.start(ks=Fixture.ks, indexes=[Fixture.index, self.impact])
        try:
            texts = [r["input"] for r in self.records[:5]]
            r = server.search_batch(texts, k=3, index="impact", terms=self.terms[:5])
            want = tartan.retrieve(self.impact, self.records[:5], k=3, query_terms=self.terms[:5], as_frame=False)
            self.assertEqual([[h["provenance"]["wikipedia_id"] for h in x["hits"]] for x in r["results"]], [[p["wikipedia_id"] for p in g["output"][0]["provenance"]] for g in want])
            self.assertEqual([[h["score"] for h in x["hits"]] for x in r["results"]], [[p["score"] for p in g["output"][0]["provenance"]] for g in want])
            with self.assertRaises(TartanError) as e:
                server.search_batch(texts[:1], k=3, index="impact", terms=[{"bowl": -1}])
            self.assertEqual((e.exception.returncode, str(e.exception)), (400, 'terms[0]["bowl"]: bad weight -1 (expected a finite number ≥ 0)'))
        finally:
            server.close()


class DashNamesTest(unittest.TestCase):
    """A file whose name starts with `-` is a file, never an option (here a run is even named --json)."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dash-", dir=Fixture.dir)
        self.cwd = os.getcwd()
        os.chdir(self.dir)
        shutil.copy(Fixture.gold, "-gold.jsonl")
        shutil.copy(Fixture.top1, "-top1.jsonl")
        shutil.copy(Fixture.top20, "--json")
        shutil.copytree(Fixture.index, "-bm25")
        shutil.copytree(Fixture.ks, "-ks")

    def tearDown(self):
        os.chdir(self.cwd)

    def test_evaluate_and_per_query(self):
        self.assertEqual(tartan.evaluate("-gold.jsonl", "-top1.jsonl"), json.loads(cli("eval", Fixture.gold, Fixture.top1, "--json")))
        self.assertEqual(tartan.evaluate("-gold.jsonl", "--json", mode="retrieval"), json.loads(cli("eval", Fixture.gold, Fixture.top20, "--json", "--mode", "retrieval")))
        self.assertEqual(tartan.per_query("-gold.jsonl", "-top1.jsonl", as_frame=False), tartan.per_query(Fixture.gold, Fixture.top1, as_frame=False))

    def test_compare_retrieve_and_pages(self):
        got = tartan.compare("-gold.jsonl", {"-a": "--json", "-b": "-top1.jsonl"}, samples=1000, permutations=1000)
        want = json.loads(cli("compare", Fixture.gold, Fixture.top20, Fixture.top1, "--json", "--name=-a", "--name=-b", "--samples", "1000", "--permutations", "1000"))
        self.assertEqual(got, want)
        self.assertEqual([r["name"] for r in got["runs"]], ["-a", "-b"])
        fused = tartan.retrieve([Fixture.index, "-bm25"], "-gold.jsonl", k=5, as_frame=False)
        out = os.path.join(self.dir, "fused.jsonl")
        cli("retrieve", "--index", Fixture.index, os.path.join(self.dir, "-bm25"), "--input", Fixture.gold, "--out", out, "--top-k", "5")
        self.assertEqual(fused, read_jsonl(out))
        self.assertEqual(len(fused), 63)
        ks = tartan.KnowledgeSource("-ks")
        self.assertEqual(ks.page("squad:Super_Bowl_50")["wikipedia_title"], "Super Bowl 50")
        self.assertIsNone(ks.page_by_title("-Super Bowl 50"))


class FailuresTest(unittest.TestCase):
    """Every failure reaching the caller is a TartanError with the message, never a bare OSError."""

    def program(self, text, mode):
        path = os.path.join(tempfile.mkdtemp(prefix="bin-", dir=Fixture.dir), "tartan")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(path, mode)
        return path

    def test_a_missing_or_non_executable_cli(self):
        missing = os.path.join(Fixture.dir, "no-such-tartan")
        plain = self.program("#!/bin/sh\necho 0.1.0\n", 0o644)
        garbage = self.program("\x7fnot a program\n", 0o755)
        cases = [
            (missing, 127, f"TARTAN_BIN={missing}: no such file (set it to the tartan command, or to dist/src/cli/main.js)"),
            (plain, 126, f"TARTAN_BIN={plain}: not executable (chmod +x it, or name dist/src/cli/main.js)"),
            (garbage, 127, f"cannot run {garbage}: Exec format error"),
        ]
        for binary, status, message in cases:
            with mock.patch.dict(os.environ, {"TARTAN_BIN": binary}):
                for call in (tartan.version, lambda: tartan.evaluate(Fixture.gold, Fixture.top1), tartan.Server.start):
                    with self.assertRaises(TartanError) as e:
                        call()
                    self.assertEqual((str(e.exception), e.exception.returncode), (message, status))

    def test_a_server_that_will_not_start(self):
        hangs = self.program("#!/bin/sh\necho 'loading the index' >&2\nexec sleep 60\n", 0o755)
        with mock.patch.dict(os.environ, {"TARTAN_BIN": hangs}):
            t0 = time.monotonic()
            with self.assertRaises(TartanError) as e:
                tartan.Server.start(start_timeout=1)
            self.assertEqual((str(e.exception), e.exception.returncode), ("tartan serve did not start within 1 s: loading the index", 124))
            self.assertLess(time.monotonic() - t0, 15)
        missing = os.path.join(Fixture.dir, "no-such-ks")
        with self.assertRaises(TartanError) as e:
            tartan.Server.start(ks=missing)
        self.assertIn("no-such-ks", str(e.exception))

    def test_a_server_that_answers_badly(self):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path.startswith("/api/health"):
                    body = b"not json"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:
                    self.close_connection = True  # no answer at all

            def log_message(self, *args):
                pass

        httpd = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            s = tartan.Server(f"http://127.0.0.1:{httpd.server_address[1]}", token="")
            with self.assertRaises(TartanError) as e:
                s.health()
            self.assertEqual((str(e.exception), e.exception.returncode), (f"tartan serve at {s.url} answered GET /api/health with something that is not JSON: 'not json'", 502))
            with self.assertRaises(TartanError) as e:
                s.runs()
            self.assertEqual((str(e.exception), e.exception.returncode), (f"tartan serve at {s.url} gave no answer: RemoteDisconnected: Remote end closed connection without response", 503))
            missing = os.path.join(Fixture.dir, "missing-predictions.jsonl")
            with self.assertRaises(TartanError) as e:
                s.evaluate(missing, gold=Fixture.gold)
            self.assertEqual((str(e.exception), e.exception.returncode), (f"{missing}: No such file or directory", 2))
        finally:
            httpd.shutdown()
            httpd.server_close()


if __name__ == "__main__":
    unittest.main()
