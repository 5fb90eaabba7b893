"""The collapsed view: each cluster drawn as one node, as XLA's encapsulation leaves the graph.

Edges between the same two drawn nodes merge into one, labelled with the tensor count and summed bytes."""
from __future__ import annotations

from ..ir import Graph
from .dot_parts import QUIET, add_inputs_outputs, draw_node, edge_text, penwidth, tensor_source, text, tint
from .params import StoredParams, folded_lines, is_stored, stored_params
from .tables import BOUNDARY
from .units import fmt_bytes
from .view import View

AUTO_COLLAPSE = 1500   # nodes; larger graphs collapse unless --expand is given


def _ops_summary(graph: Graph, members: list[int], limit: int = 4) -> str:
    counts: dict[str, int] = {}
    for v in members:
        op = graph.nodes[v].op_type
        counts[op] = counts.get(op, 0) + 1
    items = [f"{op}×{c}" if c > 1 else op for op, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return " ".join(items[:limit]) + (f" +{len(items) - limit}" if len(items) > limit else "")


def _params_summary(graph: Graph, members: list[int], params: StoredParams, inputs: dict[str, int]) -> list[str]:
    """`52 params · 1.2 MiB` for the parameters a folded cluster reads (each counted once)."""
    if params.mode != "fold":
        return []
    refs = {r for v in members for r in graph.nodes[v].inputs if r and is_stored(graph, r, params, inputs)}
    if not refs:
        return []
    sizes = [graph.tensor_type(r).bind(graph.dims).nbytes() for r in refs]
    total = None if any(b is None for b in sizes) else sum(sizes)
    return [f"{len(refs)} param{'s' if len(refs) > 1 else ''} · {fmt_bytes(total)}"]


def draw_collapsed(g, graph: Graph, view: View, prefix: str = "", params: StoredParams | None = None) -> None:
    params = params or stored_params(graph)
    input_id = add_inputs_outputs(g, graph, prefix, params)
    inputs = {v.name: k for k, v in enumerate(graph.inputs)}
    for k, grp in enumerate(view.groups):
        tip = [grp.label, "nodes: " + " ".join(graph.nodes[v].name for v in grp.members[:40])
               + (" …" if len(grp.members) > 40 else "")]
        label = [grp.label, _ops_summary(graph, grp.members)] + _params_summary(graph, grp.members, params, inputs)
        g.node(f"{prefix}g{k}", text(*label), shape="box3d",
               style="filled,bold", fillcolor=tint(grp.color, "40"), color=grp.color, penwidth="2.5",
               tooltip=text(*tip), **{"class": "xc_node xc_group"})
    for i in range(len(graph.nodes)):
        if view.group_of[i] < 0 and not params.hidden_node(i):
            draw_node(g, graph, view, i, prefix, folded_lines(graph, i, params, inputs))

    def end(kind: int, pos: int) -> tuple[str, int]:
        if kind == 0:
            return f"{prefix}i{pos}", -1   # becomes input_id(pos) when the edge is drawn
        k = view.group_of[pos]
        return (f"{prefix}g{k}", k) if k >= 0 else (f"{prefix}n{pos}", -1)

    data: dict[tuple[str, str], list] = {}     # (src id, dst id) -> [tensor refs, types, bytes, boundary?]
    for j, node in enumerate(graph.nodes):
        dst, dk = end(1, j)
        if params.hidden_node(j):
            continue
        for ref in node.inputs:
            if not ref or (params.mode != "show" and is_stored(graph, ref, params, inputs)):
                continue
            src, sk = end(*tensor_source(graph, ref, inputs))
            if src == dst:
                continue
            data.setdefault((src, dst), [[], sk >= 0 or dk >= 0])[0].append(ref)
    for k, ref in enumerate(graph.outputs):
        if params.mode != "show" and is_stored(graph, ref, params, inputs):
            continue
        src, sk = end(*tensor_source(graph, ref, inputs))
        data.setdefault((src, f"{prefix}o{k}"), [[], sk >= 0])[0].append(ref)

    for (src, dst), (refs, boundary) in data.items():
        if src.startswith(f"{prefix}i"):
            src = input_id(int(src[len(prefix) + 1:]))
        refs = list(dict.fromkeys(refs))   # a tensor read twice by one cluster crosses once
        types = [graph.tensor_type(r).bind(graph.dims) for r in refs]
        sizes = [t.nbytes() for t in types]
        total = None if any(b is None for b in sizes) else sum(sizes)
        label = edge_text(types[0], total) if len(refs) == 1 else f"{len(refs)} tensors · {fmt_bytes(total)}"
        tip = [f"{len(refs)} tensor{'s' if len(refs) > 1 else ''} · {fmt_bytes(total)}"]
        tip += [f"{r}: {edge_text(t, b)}" for r, t, b in list(zip(refs, types, sizes))[:20]]
        if boundary:
            g.edge(src, dst, label=text(label), color=BOUNDARY, penwidth=penwidth(total), fontcolor="#7A5200",
                   tooltip=text(*tip), **{"class": "xc_boundary"})
        else:
            g.edge(src, dst, color=QUIET, penwidth="1", tooltip=text(*tip), **{"class": "xc_plain"})

    control: set[tuple[str, str]] = set()
    for j, node in enumerate(graph.nodes):
        dst, _ = end(1, j)
        for ref in node.control_inputs:
            if params.hidden_node(graph.index[ref]) or params.hidden_node(j):
                continue
            src, _ = end(1, graph.index[ref])
            if src != dst and (src, dst) not in control:
                control.add((src, dst))
                g.edge(src, dst, style="dashed", color=QUIET, tooltip=text(f"control: {ref} → {node.name}"),
                       **{"class": "xc_control"})

