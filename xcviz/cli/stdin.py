"""GRAPH given as `-`: the graph read from stdin into a temporary file, and messages that call it <stdin>."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager

from ..errors import XcvizError
from ..pipeline import DEFAULT_MAX_FILE_BYTES

SHOWN = "<stdin>"
SUFFIX = {"yaml": ".yaml", "json": ".json", "xcir": ".xcir", "onnx": ".onnx"}
_temporary: dict[str, str] = {}  # temporary file -> the name messages use


def shown_name(path: str) -> str | None:
    return _temporary.get(path)


@contextmanager
def graph_argument(graph: str, fmt: str | None, max_bytes: int | None = None):
    """Yield the path to load: `graph` itself, or for `-` a temporary copy of stdin (removed afterwards), read
    up to `max_bytes` (--max-file-bytes; an endless pipe is refused, not held in memory)."""
    if graph != "-":
        if fmt is not None:
            raise XcvizError("--format is for a graph read from stdin", where=graph,
                             hint="a file's format follows its suffix (or its content); give - to read stdin")
        yield graph
        return
    if fmt is not None and fmt not in SUFFIX:
        from ..errors import did_you_mean

        raise XcvizError(f"--format {fmt!r}: not one of {', '.join(SUFFIX)}", hint=did_you_mean(fmt, SUFFIX))
    if sys.stdin is None or sys.stdin.isatty():
        raise XcvizError("GRAPH is -, but stdin is a terminal", hint="pipe a graph in: cat model.onnx | xcviz cluster -")
    limit = max_bytes if max_bytes is not None else DEFAULT_MAX_FILE_BYTES
    if hasattr(sys.stdin, "buffer"):
        from ..loaders import read_stream

        data = read_stream(sys.stdin.buffer, limit + 1)
    else:
        data = sys.stdin.read(limit + 1).encode("utf-8")
    if len(data) > limit:
        raise XcvizError(f"stdin holds over the limit of {limit} bytes", where=SHOWN, hint="raise it with --max-file-bytes")
    if fmt is None:
        from ..loaders import detect_format

        fmt = detect_format("", data)
    folder = tempfile.mkdtemp(prefix="xcviz-stdin-")
    path = os.path.join(folder, "stdin" + SUFFIX[fmt])
    try:
        with open(path, "wb") as f:
            f.write(data)
        del data
        _temporary[path] = SHOWN
        try:
            yield path
        except XcvizError as e:
            for field in ("message", "where", "hint"):
                value = getattr(e, field)
                if isinstance(value, str):
                    setattr(e, field, value.replace(path, SHOWN))
            raise
    finally:
        _temporary.pop(path, None)
        shutil.rmtree(folder, ignore_errors=True)
