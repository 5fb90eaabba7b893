"""Default output names: the input file's stem (not the graph's internal name) plus the view, made safe."""
from __future__ import annotations

import os
import re


def file_stem(source: str | None, fallback: str = "graph") -> str:
    """`models/bert.v2.onnx` -> `bert.v2`; unsafe characters become '_'; at most 100 characters."""
    base = os.path.basename(str(source or "").rstrip("/\\"))
    stem = os.path.splitext(base)[0] if not base.startswith(".") else base
    stem = re.sub(r"[^\w.-]", "_", stem).strip("._")
    if not stem:
        stem = re.sub(r"[^\w.-]", "_", fallback).strip("._") or "graph"
    return stem[:100]


def output_name(source: str | None, ext: str, view: str = "", fallback: str = "graph") -> str:
    """`<stem>[.<view>].<ext>`: two models, or two views of one model, never share a name
    (every torch export is called main_graph inside)."""
    tail = re.sub(r"[^\w.-]", "_", view)[:100]
    return f"{file_stem(source, fallback)}{'.' + tail if tail else ''}.{ext}"
