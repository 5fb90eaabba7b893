"""DOT text to SVG/PNG bytes with the system `dot` when on PATH, else the `graphviz-pure` command (a dependency)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from ..errors import XcvizError

FORMATS = ("svg", "png")
TIMEOUT_S = 600


def find_engine(prefer: str | None = None) -> str:
    """Path of the layout program: `prefer` ("dot" or "graphviz-pure") if given, else dot, else graphviz-pure."""
    names = [prefer] if prefer else ["dot", "graphviz-pure"]
    for name in names:
        path = shutil.which(name)
        if path is None:  # a venv's console scripts sit beside its python even when the venv is not activated
            candidate = os.path.join(os.path.dirname(sys.executable), name)
            path = candidate if os.access(candidate, os.X_OK) else None
        if path:
            return path
    raise XcvizError("no Graphviz layout program found", hint="pip install graphviz-pure (or install Graphviz's dot), "
                     "or write DOT with --dot")


def layout(dot_source: str, fmt: str = "svg", engine: str | None = None) -> bytes:
    """Run the layout; SVG output gets each node's and edge's tooltip as its <title>."""
    if fmt not in FORMATS:
        raise XcvizError(f"unknown image format {fmt!r}", hint="use svg or png (or --dot for DOT text)")
    exe = find_engine(engine)
    try:
        proc = subprocess.run([exe, f"-T{fmt}", "-q"], input=dot_source.encode("utf-8"), capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise XcvizError(f"layout took longer than {TIMEOUT_S} s", hint="use --collapse to draw one node per cluster") from None
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise XcvizError(f"{os.path.basename(exe)} failed: {err[-1] if err else 'exit code ' + str(proc.returncode)}",
                         hint="write the DOT with --dot and report it", code=1)
    if fmt == "svg":
        return svg_titles(proc.stdout.decode("utf-8")).encode("utf-8")
    return proc.stdout


_TITLED = re.compile(r'(<g id="[^"]*" class="(?:node|edge|cluster)[^"]*">\n<title>)[^<]*(</title>\n'
                     r'<g id="a_[^"]*"><a xlink:title="([^"]*)")')


def svg_titles(svg: str) -> str:
    """Graphviz titles groups with internal ids (n3, n3->n4); use the tooltip, already XML-escaped, instead."""
    return _TITLED.sub(lambda m: m.group(1) + m.group(3) + m.group(2), svg)
