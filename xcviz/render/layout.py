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
# the largest picture written, in pixels at Graphviz's 96 dpi (a side of MAX_PX / 96 inches); a larger layout
# is scaled down to fit (Graphviz's `size`), and capped() tells the caller so
MAX_PX = 16000
SIZE_INCHES = f"{MAX_PX / 96:.2f},{MAX_PX / 96:.2f}"


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
        proc = subprocess.run([exe, f"-T{fmt}", "-q", f"-Gsize={SIZE_INCHES}"], input=dot_source.encode("utf-8"),
                              capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise XcvizError(f"layout took longer than {TIMEOUT_S} s", hint="use --collapse to draw one node per cluster") from None
    if proc.returncode != 0 or not proc.stdout:
        raise XcvizError(f"{os.path.basename(exe)} failed: {failure_cause(proc.stderr, proc.returncode)}",
                         hint="write the DOT with --dot and report it, or draw less (--scope PATH, --collapse)",
                         code=1)
    if fmt == "svg":
        return svg_titles(proc.stdout.decode("utf-8")).encode("utf-8")
    return proc.stdout


def failure_cause(stderr: bytes, returncode: int) -> str:
    """The line of a layout program's error output that says why: a Rust panic's message (graphviz-pure ends with
    'note: run with RUST_BACKTRACE=1 ...', which says nothing), an error line, else the last line."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    for k, ln in enumerate(lines):
        if "panicked at" in ln:
            head = ln.partition("panicked at")[2].strip().rstrip(":")
            msg = lines[k + 1] if k + 1 < len(lines) and not lines[k + 1].startswith("note:") else ""
            return f"crashed ({msg or 'panic'}, at {head})" if head else f"crashed ({msg or 'panic'})"
    useful = [ln for ln in lines if not ln.lower().startswith("note:")]
    if useful:
        return useful[-1][:300]
    if returncode < 0:
        return f"killed by signal {-returncode}"
    return f"crashed with exit code {returncode} and no cause given" + (f" ({lines[-1][:120]})" if lines else "")


_SCALE = re.compile(rb'class="graph" transform="scale\(([0-9.]+)')


def capped(data: bytes, fmt: str) -> str | None:
    """'scaled to 12 %' where the layout was larger than MAX_PX and Graphviz scaled it down to fit, else None."""
    if fmt == "svg":
        m = _SCALE.search(data[:4096])
        scale = float(m.group(1)) if m else 1.0
        return f"scaled to {scale:.0%} to stay within {MAX_PX:,} px" if scale < 0.999 else None
    if fmt == "png" and data[:8] == b"\x89PNG\r\n\x1a\n":
        w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        return f"capped at {w:,} × {h:,} px" if max(w, h) >= MAX_PX * 0.98 else None
    return None


_TITLED = re.compile(r'(<g id="[^"]*" class="(?:node|edge|cluster)[^"]*">\n<title>)[^<]*(</title>\n'
                     r'<g id="a_[^"]*"><a xlink:title="([^"]*)")')


def svg_titles(svg: str) -> str:
    """Graphviz titles groups with internal ids (n3, n3->n4); use the tooltip, already XML-escaped, instead."""
    return _TITLED.sub(lambda m: m.group(1) + m.group(3) + m.group(2), svg)
