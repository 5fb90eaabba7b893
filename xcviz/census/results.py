"""The census results file: JSON Lines, one row per model, appended as each finishes, read back to resume."""
from __future__ import annotations

import json
import os

from ..errors import XcvizError

RETRIED = ("crashed",)   # rows a resumed census runs again (the worker died: the model may not be at fault)
TIMING_KEYS = ("timings", "measured_speedup")   # what varies between two runs of the same census


def read_rows(path: str) -> list[dict]:
    """The complete rows of a results file; a last line cut short (the census was killed while writing it)
    is dropped, any other unreadable line is an error."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            if n >= len(lines) - 1:   # the last line, not ended by a newline: cut short
                continue
            raise XcvizError(f"line {n} is not JSON", where=path, hint="a census results file holds one JSON object per line") from None
        if not isinstance(row, dict) or "source" not in row or "model" not in row:
            raise XcvizError(f"line {n} is not a census row (no source and model)", where=path)
        rows.append(row)
    return rows


class ResultsFile:
    """Appends rows, one line each, flushed at once, so that an interrupted census loses at most the
    models in flight. Opened for a fresh census (the file must not exist) or to resume one (`retry_failed`:
    the failed rows are dropped and their models run again)."""

    def __init__(self, path: str, resume: bool, retry_failed: bool = False):
        from ..fileio import check_target

        self.path = path
        if os.path.exists(path) and not resume:
            raise XcvizError("the results file exists", where=path,
                             hint="add --resume to continue that census, or choose another -o")
        check_target(path)
        again = (lambda r: r.get("status") != "ok") if retry_failed else (lambda r: r.get("status") in RETRIED)
        kept = [r for r in read_rows(path) if not again(r)] if resume else []
        self.done = {(r["source"], r["model"]) for r in kept}
        self.rows = kept
        # rewrite what is kept (drops a cut-short last line and crashed rows), then append
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(line(r) for r in kept)
        os.replace(tmp, path)
        self._f = open(path, "a", encoding="utf-8")

    def write(self, row: dict) -> None:
        self._f.write(line(row))
        self._f.flush()
        self.rows.append(row)
        self.done.add((row["source"], row["model"]))

    def close(self) -> None:
        self._f.close()


def line(row: dict) -> str:
    return json.dumps(row, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def comparable(row: dict) -> dict:
    """A row without what varies between runs (timings, measured speed): two runs of one census agree on it."""
    return {k: v for k, v in row.items() if k not in TIMING_KEYS}


def sort_rows(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["source"], r["model"]))
