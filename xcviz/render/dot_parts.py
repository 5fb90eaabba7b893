"""DOT building blocks both views share (expanded and collapsed): escaped user text, styles, edge weights,
node and graph input/output statements. User strings pass through `text()` so no name can break the DOT
syntax or inject markup."""
from __future__ import annotations

import math
import re

from ..ir import Graph, TensorType
from .params import StoredParams
from .tables import FALLBACK
from .units import fmt_bytes
from .view import View

FALLBACK_FILL = "#FDE3E3"
QUIET = "#8A8A8A"
IO_FILL = "#EEEEEE"
SHARED_FANOUT = 3        # inputs read more often are drawn once per use (layout time, see add_inputs_outputs)
REASON_WIDTH = 34        # characters per line of a fallback's reason in its label
REASON_LINES = 2
# Graphviz sizes text with Helvetica's metrics; browsers without Helvetica draw DejaVu Sans or similar, up to
# ~15 % wider, so text whose box we size ourselves (titles, the legend) gets this width per character (em).
CHAR_EM = 0.58
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def text(*lines: str):
    """Lines of user text as one DOT escString: backslashes, quotes, entities and control characters defused."""
    import graphviz

    out = []
    for line in lines:
        s = _CONTROL.sub("\ufffd", str(line)).replace("&", "&amp;").replace("\\", "\\\\")
        out.append(s.replace("\r\n", "\n").replace("\n", "\\n"))
    return graphviz.nohtml("\\n".join(out))


def html_title(title: str, fontsize: float = 12) -> str:
    """A title (user text, several lines) as an HTML-like label sized by text_width, so the picture is wide
    enough for it in any sans-serif font and the title is not clipped at the right edge."""
    import html

    lines = _CONTROL.sub("\ufffd", title).replace("\r\n", "\n").split("\n")
    width = max(text_width(ln, fontsize) for ln in lines)
    body = "".join(html.escape(ln, quote=True) + '<BR ALIGN="LEFT"/>' for ln in lines)
    return f'<<TABLE BORDER="0" CELLPADDING="2"><TR><TD ALIGN="LEFT" BALIGN="LEFT" WIDTH="{width}">{body}</TD></TR></TABLE>>'


def penwidth(nbytes: int | None) -> str:
    """1.5 for unknown or tiny tensors, +1 per factor 4 of bytes above 1 KiB, capped at 9."""
    if not nbytes or nbytes <= 1024:
        return "1.5"
    return f"{min(9.0, 1.5 + math.log(nbytes / 1024, 4)):.2f}"


def fallback_class(code: str) -> str:
    return "xc_node xc_fallback xc_code_" + re.sub(r"[^a-z0-9]", "_", code.lower())


def tint(color: str, alpha: str = "26") -> str:
    return color + alpha


def node_tooltip(graph: Graph, view: View, i: int) -> list[str]:
    node = graph.nodes[i]
    lines = [f"{node.name}: {node.op_type}" + (f" ({node.op})" if node.op != node.op_type else "")]
    k = view.group_of[i]
    if k >= 0:
        lines.append(f"in {view.groups[k].id}")
    elif view.code[i]:
        lines.append(f"fallback [{view.code[i]}]: {view.reason[i] or view.code[i]}")
    else:
        lines.append("candidate, not merged yet")
    lines.append(f"device: {view.device[i]}")
    if node.module:
        lines.append(f"module: {node.module}")
    if node.outputs:
        lines.append("out: " + ", ".join(str(t.bind(graph.dims)) for t in node.outputs))
    for key in sorted(node.attrs)[:8]:
        lines.append(f"{key} = {str(node.attrs[key])[:80]}")
    return lines


def edge_text(t: TensorType, nbytes: int | None) -> str:
    return f"{t} · {fmt_bytes(nbytes)}"


def reason_lines(reason: str | None) -> list[str]:
    """A fallback's reason in words, wrapped for a node label: at most REASON_LINES lines, cut with '…'."""
    import textwrap

    if not reason:
        return []
    lines = textwrap.wrap(reason, REASON_WIDTH, break_long_words=True, break_on_hyphens=False)
    if len(lines) > REASON_LINES:
        lines = lines[:REASON_LINES]
        lines[-1] = lines[-1][:REASON_WIDTH - 1].rstrip() + "…"
    return lines


def text_width(s: str, fontsize: float) -> int:
    """Points a line of text needs in the widest common sans-serif font (see CHAR_EM)."""
    return math.ceil(len(s) * fontsize * CHAR_EM) + 4


def add_inputs_outputs(g, graph: Graph, prefix: str, params: StoredParams):
    """Declare graph inputs and outputs; returns `input_id(k)`, the node id to draw an edge from input k.

    An input read by more than SHARED_FANOUT nodes (a weight every layer uses) is drawn once per use, beside
    its consumer: one node with hundreds of rank-spanning edges costs the layout O(uses x depth) virtual nodes.
    Parameters are not declared unless `params` shows them (they fold into their consumers' labels)."""
    uses = [0] * len(graph.inputs)
    pos = {v.name: k for k, v in enumerate(graph.inputs)}
    for ref in [r for node in graph.nodes for r in node.inputs] + list(graph.outputs):
        if ref in pos:
            uses[pos[ref]] += 1
    copies = [0] * len(graph.inputs)

    def declare(k: int, node_id: str, note: str = "") -> None:
        v = graph.inputs[k]
        kind = "constant" if v.data is not None else "graph input"
        t = str(v.type.bind(graph.dims))
        g.node(node_id, text(v.name, t), shape="invhouse", style="filled", fillcolor=IO_FILL, color=QUIET,
               tooltip=text(f"{kind} {v.name}" + note, t), **{"class": "xc_node xc_input"})

    for k in range(len(graph.inputs)):
        if uses[k] <= SHARED_FANOUT and not params.hidden_input(k):
            declare(k, f"{prefix}i{k}")
    for k, ref in enumerate(graph.outputs):
        g.node(f"{prefix}o{k}", text(f"output {ref}"), shape="house", style="filled", fillcolor=IO_FILL,
               color="#444444", penwidth="1.5", tooltip=text(f"graph output {ref}", str(graph.tensor_type(ref).bind(graph.dims))),
               **{"class": "xc_node xc_output"})

    def input_id(k: int) -> str:
        if uses[k] <= SHARED_FANOUT:
            return f"{prefix}i{k}"
        copies[k] += 1
        node_id = f"{prefix}i{k}_{copies[k]}"
        declare(k, node_id, f" (read by {uses[k]} nodes; drawn at each)")
        return node_id

    return input_id


def tensor_source(graph: Graph, ref: str, inputs: dict[str, int]) -> tuple[int, int]:
    """(kind, position): kind 0 = graph input, 1 = node."""
    if ref in inputs:
        return 0, inputs[ref]
    return 1, graph.producer(ref)


def draw_node(sub, graph: Graph, view: View, i: int, prefix: str = "", folded: list[str] | None = None) -> None:
    """One op node in its style: member of a kept cluster, fallback (with its reason code and, in words, the
    reason itself, so a PNG keeps it), or a candidate; `folded` are its parameter lines (params.folded_lines)."""
    node = graph.nodes[i]
    tip = text(*node_tooltip(graph, view, i))
    k = view.group_of[i]
    head = [node.name, node.op_type] + (folded or [])
    if k >= 0:
        sub.node(f"{prefix}n{i}", text(*head), style="rounded,filled", fillcolor="white",
                 color=view.groups[k].color, tooltip=tip, **{"class": "xc_node"})
    elif view.code[i]:
        why = [ln for ln in reason_lines(view.reason[i]) if ln != view.code[i]]
        sub.node(f"{prefix}n{i}", text(*head, f"fallback: {view.code[i]}", *why), style="filled,bold",
                 fillcolor=FALLBACK_FILL, color=FALLBACK, fontcolor="#8B0000", penwidth="2", tooltip=tip,
                 **{"class": fallback_class(view.code[i])})
    else:
        sub.node(f"{prefix}n{i}", text(*head), style="rounded,filled", fillcolor="white",
                 color=QUIET, tooltip=tip, **{"class": "xc_node xc_candidate"})
