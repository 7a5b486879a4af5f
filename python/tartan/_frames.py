# pandas when it is installed: lists of row dicts become DataFrames, and KILT guesses a table of hits
# (one row per retrieved unit). Nothing here needs pandas unless a DataFrame is asked for.

import importlib.util
from typing import Any, Dict, List, Optional, Sequence

__all__ = ["has_pandas", "frame_or_list", "hits_table", "hit_rows"]


def has_pandas() -> bool:
    """Whether pandas can be imported."""
    return importlib.util.find_spec("pandas") is not None


def frame_or_list(rows: List[Dict[str, Any]], as_frame: Optional[bool]) -> Any:
    """`rows` as a DataFrame when pandas is installed and as_frame is not False (True without pandas
    is an error), else as they are."""
    if as_frame is True and not has_pandas():
        raise ImportError("as_frame=True needs pandas: pip install pandas")
    if as_frame is False or not has_pandas():
        return rows
    import pandas

    return pandas.DataFrame(rows)


def hit_rows(guesses: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One dict per retrieved unit of KILT guesses: the record's id, the rank (1-based), then the
    provenance's fields (wikipedia_id, title, start_paragraph_id, …, score, text when present)."""
    rows: List[Dict[str, Any]] = []
    for g in guesses:
        output = (g.get("output") or [{}])[0]
        for rank, p in enumerate(output.get("provenance") or [], start=1):
            rows.append({"id": g.get("id"), "rank": rank, **p})
    return rows


def hits_table(guesses: Sequence[Dict[str, Any]]) -> Any:
    """The hits of KILT guesses as a DataFrame (pandas must be installed)."""
    import pandas

    return pandas.DataFrame(hit_rows(guesses))
