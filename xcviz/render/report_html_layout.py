"""Positions for the HTML report: Graphviz lays the drawn items out once (`-Tplain`), the page's own script draws them.

An item is an op node `n<i>`, a graph input `i<k>`, a graph output `o<k>` or, collapsed, a cluster `g<k>`. Only
these ids reach Graphviz, so nothing a user wrote can break the layout's syntax; labels are there for sizes only."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from ..errors import XcvizError
from .layout import TIMEOUT_S, find_engine

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
PT = 72.0    # Graphviz's plain output is in inches; the page draws in points


@dataclass
class Layout:
    """Boxes `id -> [cx, cy, w, h]` and edge splines `(src, dst) -> [x0, y0, x1, y1, ...]` (cubic Bézier
    control points), y pointing down, origin at the top left; `width`/`height` of the whole drawing."""

    width: float = 0.0
    height: float = 0.0
    boxes: dict[str, list[float]] = field(default_factory=dict)
    splines: dict[tuple[str, str], list[float]] = field(default_factory=dict)


def quote(s: str) -> str:
    """A DOT string literal: quotes, backslashes and control characters defused."""
    s = _CONTROL.sub(" ", s).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def dot_text(items: list[tuple[str, str, str]], edges: list[tuple[str, str]], clusters: dict[str, list[str]],
             big: bool = False) -> str:
    """DOT for the layout: `items` as (id, label lines joined by \\n, shape), `clusters` as id -> member ids."""
    head = ["digraph L {", 'graph [rankdir=TB nodesep=0.3 ranksep=0.4 fontname=Helvetica fontsize=12];',
            'node [shape=box fontname=Helvetica fontsize=10 margin="0.08,0.04"];', "edge [arrowsize=0.6];"]
    if big:   # the same bounds as render/dot.py's, for the same reason (x-coordinate network simplex)
        head.append("graph [nslimit=2 nslimit1=2 mclimit=0.3 searchsize=10];")
    shape = {i: s for i, _, s in items}
    label = {i: lab for i, lab, _ in items}
    inside = set()
    body = []
    for cid, members in clusters.items():
        body.append(f"subgraph cluster_{cid} {{ label={quote(cid)};")
        body += [f"  {m} [label={quote(label[m])} shape={shape[m]}];" for m in members]
        body.append("}")
        inside.update(members)
    body += [f"{i} [label={quote(lab)} shape={s}];" for i, lab, s in items if i not in inside]
    body += [f"{a} -> {b};" for a, b in edges]
    return "\n".join(head + body + ["}"]) + "\n"


def run_layout(dot: str, engine: str | None = None) -> Layout:
    """Run Graphviz once and read back every box and spline."""
    exe = find_engine(engine)
    try:
        proc = subprocess.run([exe, "-Tplain", "-q"], input=dot.encode("utf-8"), capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise XcvizError(f"layout took longer than {TIMEOUT_S} s", hint="use --collapse to draw one node per cluster") from None
    if proc.returncode != 0 or not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise XcvizError(f"layout failed: {err[-1] if err else 'exit code ' + str(proc.returncode)}", code=1)
    return parse_plain(proc.stdout.decode("utf-8", "replace"))


def parse_plain(text: str) -> Layout:
    """Graphviz's `plain` format; only the leading fields are read (ids are ours, labels may hold anything)."""
    out = Layout()
    height = 0.0
    rows = [line.split() for line in text.splitlines()]
    for f in rows:
        if f and f[0] == "graph":
            out.width, height = float(f[2]) * PT, float(f[3]) * PT
            out.height = height
    for f in rows:
        if not f:
            continue
        if f[0] == "node":
            x, y, w, h = (float(v) * PT for v in f[2:6])
            out.boxes[f[1]] = [round(x, 1), round(height - y, 1), round(w, 1), round(h, 1)]
        elif f[0] == "edge":
            n = int(f[3])
            pts = [float(v) * PT for v in f[4:4 + 2 * n]]
            out.splines.setdefault((f[1], f[2]), [round(v if k % 2 == 0 else height - v, 1) for k, v in enumerate(pts)])
    return out
