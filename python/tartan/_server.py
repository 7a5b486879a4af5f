# tartan.Server: a client of a running `tartan serve` (its JSON API, docs/serve.md), with urllib only;
# Server.start() launches one (`tartan serve --port 0`) and stops it on close(). Answers are the API's
# JSON as dicts; an error answer raises TartanError with the server's message and HTTP status, and so
# does everything else that can fail (a server that cannot be run, exits, or does not start in time; a
# connection refused, reset or timed out; an answer that is not JSON; a file that cannot be read).

import http.client
import json
import os
import queue
import re
import subprocess
import threading
import time
import uuid
from collections import deque
from typing import Any, Deque, Dict, List, Mapping, Optional, Sequence, Union
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode
from urllib.request import Request, urlopen

from ._cli import RecordsArg, TartanError, cannot_run, option, path_arg, records_path, tartan_command

__all__ = ["Server"]


class Server:
    """A `tartan serve` at `url` (e.g. "http://127.0.0.1:8080"), with its bearer token if it has one
    (default: $TARTAN_SERVE_TOKEN)."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 600.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("TARTAN_SERVE_TOKEN")
        self.timeout = timeout
        self._process: Optional[subprocess.Popen] = None
        # the last lines the started server wrote on stderr (drained by a thread, so it never blocks)
        self._log: Deque[str] = deque(maxlen=200)
        self._drain: Optional[threading.Thread] = None

    @classmethod
    def start(
        cls,
        ks: Optional[str] = None,
        indexes: Optional[Sequence[str]] = None,
        runs: Optional[str] = None,
        data: Optional[str] = None,
        port: int = 0,
        token: Optional[str] = None,
        start_timeout: float = 120.0,
    ) -> "Server":
        """Starts `tartan serve` on loopback (port 0: a free one) over these resources and returns a
        client of it; close() (or leaving a `with` block) stops it. Raises TartanError with what the
        server said when it cannot be run, exits, or is not listening within `start_timeout` seconds."""
        args = ["serve", option("--host", "127.0.0.1"), option("--port", int(port))]
        if ks:
            args.append(option("--ks", path_arg(ks)))
        for i in indexes or []:
            args.append(option("--index", path_arg(i)))
        if runs:
            args.append(option("--runs", path_arg(runs)))
        if data:
            args.append(option("--data", path_arg(data)))
        if token:
            args.append(option("--token", token))
        cmd = tartan_command() + args
        try:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, encoding="utf-8", errors="replace")
        except OSError as e:
            raise TartanError(cannot_run(cmd, e), returncode=126 if isinstance(e, PermissionError) else 127, command=cmd) from None
        server = cls("http://127.0.0.1", token=token)
        lines: "queue.Queue[Optional[str]]" = queue.Queue()
        started = threading.Event()

        def drain() -> None:
            assert p.stderr is not None
            for line in p.stderr:
                server._log.append(line)
                if not started.is_set():
                    lines.put(line)
            p.stderr.close()
            lines.put(None)

        server._drain = threading.Thread(target=drain, name="tartan-serve-stderr", daemon=True)
        server._drain.start()
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                server._process = p
                server.close()
                said = "".join(server._log).strip()
                raise TartanError(f"tartan serve did not start within {start_timeout:g} s{': ' + said if said else ''}", returncode=124, stderr=said, command=cmd) from None
            if line is None:
                p.wait()
                said = "".join(server._log).strip()
                raise TartanError(said or f"tartan serve exited with status {p.returncode}", returncode=p.returncode or 2, stderr=said, command=cmd)
            m = re.match(r"tartan serve: (http://\S+?)/ ", line)
            if m:
                started.set()
                server.url = m.group(1)
                server._process = p
                return server

    def close(self) -> None:
        """Stops the server this client started (nothing for one it did not)."""
        if self._process is not None:
            p, self._process = self._process, None
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            if self._drain is not None:
                self._drain.join(timeout=10)  # it closes the pipe at its end

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Server({self.url!r})"

    def _request(self, method: str, path: str, body: Optional[bytes] = None, headers: Optional[Dict[str, str]] = None) -> Any:
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        try:
            req = Request(self.url + path, data=body, method=method, headers=h)
        except ValueError as e:
            raise TartanError(f"{self.url}: not a server URL ({e})", returncode=400) from None
        try:
            with urlopen(req, timeout=self.timeout) as res:
                text = res.read().decode("utf-8", "replace")
        except HTTPError as e:
            try:
                text = e.read().decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            try:
                answer = json.loads(text)
                message = answer.get("error", text) if isinstance(answer, dict) else text
            except ValueError:
                message = text
            raise TartanError(message or f"HTTP {e.code} from tartan serve at {self.url}", returncode=e.code) from None
        except URLError as e:
            raise TartanError(f"cannot reach tartan serve at {self.url}: {e.reason}", returncode=503) from None
        except (OSError, http.client.HTTPException) as e:
            # reset, closed without an answer, timed out: urllib lets these through unwrapped
            raise TartanError(f"tartan serve at {self.url} gave no answer: {e.__class__.__name__}: {e}", returncode=503) from None
        try:
            return json.loads(text)
        except ValueError:
            raise TartanError(f"tartan serve at {self.url} answered {method} {path.split('?')[0]} with something that is not JSON: {text[:200]!r}", returncode=502) from None

    def _get(self, path: str, params: Optional[Dict[str, Any]] = None) -> Any:
        q = {k: v for k, v in (params or {}).items() if v is not None}
        return self._request("GET", path + ("?" + urlencode(q) if q else ""))

    def health(self) -> Dict[str, Any]:
        """GET /api/health: what is loaded."""
        return self._get("/api/health")

    def search(self, query: str, k: int = 10, index: Optional[str] = None) -> Dict[str, Any]:
        """GET /api/search: {query, index, kind, unit, k, hits: [{rank, score, provenance, text, highlights}]}."""
        return self._get("/api/search", {"q": query, "k": k, "index": index})

    def search_batch(self, queries: Sequence[str], k: int = 10, index: Optional[Union[str, Sequence[str]]] = None, terms: Optional[Sequence[Mapping[str, float]]] = None, vectors: Optional[Sequence[Sequence[float]]] = None) -> Dict[str, Any]:
        """POST /api/search: {index, kind, unit, k, results: [{query, hits}]}. `index` may list several
        indexes to fuse; `terms` gives an impact index one sparse query vector {term: weight} per query,
        `vectors` a dense index one query vector per query (each searched instead of the text)."""
        body: Dict[str, Any] = {"queries": list(queries), "k": k}
        if index is not None:
            body["index"] = index if isinstance(index, str) else list(index)
        if terms is not None:
            body["terms"] = [dict(t) for t in terms]
        if vectors is not None:
            body["vectors"] = [list(v) for v in vectors]
        return self._request("POST", "/api/search", json.dumps(body).encode("utf-8"), {"Content-Type": "application/json"})

    def page(self, wikipedia_id: str) -> Dict[str, Any]:
        """GET /api/pages/:id."""
        return self._get("/api/pages/" + quote(str(wikipedia_id), safe=""))

    def page_by_title(self, title: str) -> Dict[str, Any]:
        """GET /api/pages?title=."""
        return self._get("/api/pages", {"title": title})

    def span(self, wikipedia_id: str, start_paragraph_id: int, end_paragraph_id: Optional[int] = None, start_character: Optional[int] = None, end_character: Optional[int] = None) -> Dict[str, Any]:
        """GET /api/provenance: the text of a provenance span."""
        return self._get(
            "/api/provenance",
            {"wikipedia_id": wikipedia_id, "start_paragraph_id": start_paragraph_id, "end_paragraph_id": end_paragraph_id, "start_character": start_character, "end_character": end_character},
        )

    def evaluate(
        self,
        predictions: RecordsArg,
        gold: Optional[RecordsArg] = None,
        dataset: Optional[str] = None,
        split: str = "dev",
        ks: Optional[Sequence[int]] = None,
        rank_keys: Optional[Sequence[str]] = None,
        mode: str = "all",
        per_query: bool = False,
    ) -> Dict[str, Any]:
        """POST /api/eval: {result (as `tartan eval --json`), counts, options, problems, per_query}.
        Give gold records (a path or a list of dicts) or a dataset of the server's --data directory."""
        fields: Dict[str, str] = {"mode": mode, "per_query": "true" if per_query else "false"}
        if dataset is not None:
            fields["dataset"] = dataset
            fields["split"] = split
        if ks is not None:
            fields["ks"] = ",".join(str(int(k)) for k in ks)
        if rank_keys is not None:
            fields["rank_keys"] = ",".join(rank_keys)
        boundary = "tartan-" + uuid.uuid4().hex
        parts: List[bytes] = []
        for name, value in fields.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode("utf-8"))
        files = {"predictions": predictions} if gold is None else {"gold": gold, "predictions": predictions}
        for name, records in files.items():
            with records_path(records, name) as path:
                try:
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError as e:
                    raise TartanError(f"{path}: {e.strerror or e}", returncode=2) from None
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.jsonl"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode("utf-8") + data + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode("utf-8"))
        return self._request("POST", "/api/eval", b"".join(parts), {"Content-Type": f"multipart/form-data; boundary={boundary}"})

    def runs(self, dataset: Optional[str] = None) -> List[Dict[str, Any]]:
        """GET /api/runs: the recorded runs."""
        return self._get("/api/runs", {"dataset": dataset})["runs"]

    def run(self, name: str) -> Dict[str, Any]:
        """GET /api/runs/:name."""
        return self._get("/api/runs/" + quote(name, safe=""))["run"]

    def compare(self, a: str, b: str, metric: Optional[str] = None) -> Dict[str, Any]:
        """GET /api/compare: run b against run a on their per-query scores."""
        return self._get("/api/compare", {"runs": f"{a},{b}", "metric": metric})

    def leaderboard(self, dataset: Optional[str] = None) -> Dict[str, Any]:
        """GET /api/leaderboard."""
        return self._get("/api/leaderboard", {"dataset": dataset})
