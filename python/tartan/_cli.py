# Finding and running the `tartan` command line: TARTAN_BIN, then `tartan` on the PATH, then the dist/
# build of the repository this package sits in. A failed command raises TartanError carrying tartan's
# own messages (file:line for problems in input files) and its exit status; so does a CLI that is
# missing or cannot be executed (never a bare OSError). Arguments are built so that no file name or
# value is ever read as an option: options as --flag=VALUE, positional paths after `--`.

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Iterable, List, Optional, Sequence, Union

__all__ = ["TartanError", "tartan_command", "run", "run_json", "RecordsArg", "records_path", "option", "path_arg", "cannot_run"]


class TartanError(Exception):
    """A tartan command (or server request) failed. ``str(e)`` is tartan's message (with file:line
    where it points into an input file); ``returncode`` is the exit status (HTTP status for a server),
    ``stderr`` everything tartan printed there, ``result`` what it printed on stdout, parsed, if any."""

    def __init__(self, message: str, returncode: int = 2, stderr: str = "", command: Optional[List[str]] = None, result: Any = None):
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr
        self.command = command or []
        self.result = result


def _repo_dist() -> Optional[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (os.path.join(here, "..", ".."), os.path.join(here, "..", "..", "..")):
        main = os.path.normpath(os.path.join(up, "dist", "src", "cli", "main.js"))
        if os.path.isfile(main):
            return main
    return None


def path_arg(path: Union[str, "os.PathLike[str]"]) -> str:
    """A path as a command-line argument that cannot be read as an option: one starting with `-`
    gets `./` in front (the same file)."""
    s = os.fspath(path)
    return os.path.join(os.curdir, s) if s.startswith("-") else s


def option(flag: str, value: object) -> str:
    """`--flag=VALUE`: the value stays the option's even when it starts with `-`."""
    return f"{flag}={value}"


def _node() -> str:
    node = shutil.which("node")
    if not node:
        raise TartanError("node is not on the PATH: tartan's command line needs Node.js 20 or later", returncode=127)
    return node


def tartan_command() -> List[str]:
    """The argv prefix that runs tartan: $TARTAN_BIN (a path; a .js file runs with node), else
    `tartan` on the PATH, else the repository's dist/src/cli/main.js beside this package. Raises
    TartanError when TARTAN_BIN names no file or one that cannot be executed, or nothing is found."""
    env = os.environ.get("TARTAN_BIN")
    if env:
        if not os.path.isfile(env):
            raise TartanError(f"TARTAN_BIN={env}: no such file (set it to the tartan command, or to dist/src/cli/main.js)", returncode=127)
        if env.endswith(".js"):
            return [_node(), env]
        if not os.access(env, os.X_OK):
            raise TartanError(f"TARTAN_BIN={env}: not executable (chmod +x it, or name dist/src/cli/main.js)", returncode=126)
        return [env]
    on_path = shutil.which("tartan")
    if on_path:
        return [on_path]
    dist = _repo_dist()
    if dist:
        return [_node(), dist]
    raise TartanError("tartan is not installed: put it on the PATH (README.md, \"Install\") or set TARTAN_BIN to its path", returncode=127)


def cannot_run(cmd: Sequence[str], e: OSError) -> str:
    """The message for a command that could not be started (naming the directory when that was the fault)."""
    where = f" ({e.filename})" if e.filename and e.filename != cmd[0] else ""
    return f"cannot run {cmd[0]}: {e.strerror or e}{where}"


def run(args: Sequence[str], cwd: Optional[str] = None, ok: Iterable[int] = (0,)) -> subprocess.CompletedProcess:
    """Runs `tartan ARGS`; raises TartanError with its stderr when the exit status is not in `ok`."""
    cmd = tartan_command() + [str(a) for a in args]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, encoding="utf-8", errors="replace")
    except OSError as e:
        raise TartanError(cannot_run(cmd, e), returncode=126 if isinstance(e, PermissionError) else 127, command=cmd) from None
    if p.returncode not in tuple(ok):
        message = p.stderr.strip() or f"tartan {' '.join(args)} exited with status {p.returncode}"
        result = None
        if p.stdout.strip():
            try:
                result = json.loads(p.stdout)
            except ValueError:
                result = p.stdout
        raise TartanError(message, returncode=p.returncode, stderr=p.stderr, command=cmd, result=result)
    return p


def run_json(args: Sequence[str], cwd: Optional[str] = None) -> Any:
    """Runs `tartan ARGS` and parses what it prints as JSON (TartanError when it is not JSON)."""
    p = run(args, cwd=cwd)
    try:
        return json.loads(p.stdout)
    except ValueError:
        raise TartanError(f"tartan {args[0] if args else ''} printed no JSON: {p.stdout.strip()[:200]!r}", returncode=p.returncode, stderr=p.stderr, command=list(p.args)) from None


RecordsArg = Union[str, "os.PathLike[str]", Sequence[dict]]


class records_path:
    """A context giving a file path for records: a path (`./` in front when it starts with `-`), or a
    list of dicts written to a temporary JSONL file (removed on exit)."""

    def __init__(self, records: RecordsArg, name: str):
        self.records = records
        self.name = name
        self.tmp: Optional[str] = None

    def __enter__(self) -> str:
        if isinstance(self.records, (str, os.PathLike)):
            return path_arg(self.records)
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=f"tartan-{self.name}-", suffix=".jsonl")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                for r in self.records:
                    f.write(json.dumps(r, ensure_ascii=False))
                    f.write("\n")
        except OSError as e:
            self.__exit__()
            raise TartanError(f"cannot write the {self.name} records to a temporary file: {e.strerror or e}") from None
        except (TypeError, ValueError) as e:
            self.__exit__()
            raise TartanError(f"{self.name}: records must be dicts that JSON can write ({e})") from None
        return self.tmp

    def __exit__(self, *exc: object) -> None:
        if self.tmp:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None
