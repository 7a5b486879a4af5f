# tartan.Server: a client of a running `tartan serve` (its JSON API, docs/serve.md), with urllib only;
# Server.start() launches one (`tartan serve --port 0`) and stops it on close(). Answers are the API's
# JSON as dicts; an error answer raises TartanError with the server's message and HTTP status.

import json
import os
import re
import subprocess
import uuid
from typing import Any, Dict, List, Optional, Sequence
from urllib.error import HTTPError, URLError
from urllib.parse import quote, urlencode
from urllib.request import Request, urlopen

from ._cli import RecordsArg, TartanError, records_path, tartan_command

__all__ = ["Server"]


class Server:
    """A `tartan serve` at `url` (e.g. "http://127.0.0.1:8080"), with its bearer token if it has one
    (default: $TARTAN_SERVE_TOKEN)."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 600.0):
        self.url = url.rstrip("/")
        self.token = token if token is not None else os.environ.get("TARTAN_SERVE_TOKEN")
        self.timeout = timeout
        self._process: Optional[subprocess.Popen] = None

    @classmethod
    def start(
        cls,
        ks: Optional[str] = None,
        indexes: Optional[Sequence[str]] = None,
        runs: Optional[str] = None,
        data: Optional[str] = None,
        port: int = 0,
        token: Optional[str] = None,
    ) -> "Server":
        """Starts `tartan serve` on loopback (port 0: a free one) over these resources and returns a
        client of it; close() (or leaving a `with` block) stops it."""
        args = ["serve", "--host", "127.0.0.1", "--port", str(port)]
        if ks:
            args += ["--ks", os.fspath(ks)]
        if indexes:
            args += ["--index", *[os.fspath(i) for i in indexes]]
        if runs:
            args += ["--runs", os.fspath(runs)]
        if data:
            args += ["--data", os.fspath(data)]
        if token:
            args += ["--token", token]
        p = subprocess.Popen(tartan_command() + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, encoding="utf-8")
        lines: List[str] = []
        assert p.stderr is not None
        for line in p.stderr:
            lines.append(line)
            m = re.match(r"tartan serve: (http://\S+?)/ ", line)
            if m:
                server = cls(m.group(1), token=token)
                server._process = p
                return server
        p.wait()
        raise TartanError("".join(lines).strip() or f"tartan serve exited with status {p.returncode}", returncode=p.returncode or 2, stderr="".join(lines))

    def close(self) -> None:
        """Stops the server this client started (nothing for one it did not)."""
        if self._process is not None:
            self._process.terminate()
            self._process.wait()
            if self._process.stderr:
                self._process.stderr.close()
            self._process = None

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
        req = Request(self.url + path, data=body, method=method, headers=h)
        try:
            with urlopen(req, timeout=self.timeout) as res:
                return json.loads(res.read().decode("utf-8"))
        except HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                message = json.loads(text).get("error", text)
            except ValueError:
                message = text
            raise TartanError(message, returncode=e.code) from None
        except URLError as e:
            raise TartanError(f"cannot reach tartan serve at {self.url}: {e.reason}", returncode=503) from None

    def _get(self, path: str, params: Optional[Dict[str, Any]] = None) -> Any:
        q = {k: v for k, v in (params or {}).items() if v is not None}
        return self._request("GET", path + ("?" + urlencode(q) if q else ""))

    def health(self) -> Dict[str, Any]:
        """GET /api/health: what is loaded."""
        return self._get("/api/health")

    def search(self, query: str, k: int = 10, index: Optional[str] = None) -> Dict[str, Any]:
        """GET /api/search: {query, index, kind, unit, k, hits: [{rank, score, provenance, text, highlights}]}."""
        return self._get("/api/search", {"q": query, "k": k, "index": index})

    def search_batch(self, queries: Sequence[str], k: int = 10, index: Optional[str] = None) -> Dict[str, Any]:
        """POST /api/search: {index, kind, unit, k, results: [{query, hits}]}."""
        body: Dict[str, Any] = {"queries": list(queries), "k": k}
        if index is not None:
            body["index"] = index
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
            with records_path(records, name) as path, open(path, "rb") as f:
                data = f.read()
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
