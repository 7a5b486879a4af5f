"""Runs the OFFICIAL KILT evaluators (unmodified, ../shared/tools/official-eval/vendor) on many cases in
one Python process, for bench/eval-diff/run.mjs. Reads case directories (gold.jsonl, guess.jsonl,
args.json) one per line on stdin; writes official.json in each, in the layout of
../shared/tools/official-eval/run ({"eval_downstream": dict or {"error": …}, "eval_retrieval": …}),
and prints the directory when done. Official output on stdout is discarded."""
import contextlib
import io
import json
import os
import sys
import traceback

import kilt.eval_downstream as ed
import kilt.eval_retrieval as er


def finite(v):
    """NaN and infinities as strings (JSON has no literal for them)."""
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")):
        return repr(v)
    return v


def main():
    for line in sys.stdin:
        case = line.rstrip("\n")
        if not case:
            continue
        with open(os.path.join(case, "args.json")) as f:
            args = json.load(f)
        gold = os.path.join(case, "gold.jsonl")
        guess = os.path.join(case, "guess.jsonl")
        ks, rank_keys = args["ks"], args["rank_keys"]
        out = {}
        for name, fn in (
            ("eval_downstream", lambda: ed.evaluate(gold, guess)),
            ("eval_retrieval", lambda: er.evaluate(gold, guess, ks, rank_keys)),
        ):
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    res = fn()
                out[name] = finite(json.loads(json.dumps(dict(res))))
            except BaseException as e:  # the official failure, verbatim
                out[name] = {
                    "error": "{}: {}".format(type(e).__name__, e)[:500],
                    "traceback_tail": traceback.format_exc().strip().splitlines()[-3:],
                }
        with open(os.path.join(case, "official.json"), "w") as f:
            json.dump(out, f, indent=1)
        print(case, flush=True)


if __name__ == "__main__":
    main()
