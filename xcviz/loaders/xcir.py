"""The text form (`.xcir`) as a graph format: parse it, settle opaque ops, then verify like any other file."""
from __future__ import annotations

import dataclasses
from typing import Mapping

import msgspec

from ..ir import Graph
from ..ir.text_parse import MAX_DEPTH, read_graph


def graph_from_text(text: str, source: str | None, allow_unknown: bool, max_depth: int = MAX_DEPTH) -> Graph:
    """The text -> an unverified Graph. A node with a `note` is opaque, as written; an op the registry does
    not know without one is an error (with a did-you-mean) unless allow_unknown makes it opaque, as in
    YAML. Verification then keeps the notes (passes.prepare's onnx mode)."""
    from ..ops import REGISTRY

    graph = read_graph(text, source, max_depth)
    known = {t: REGISTRY.get(t) is not None for t in {node.op_type for node in graph.nodes}}
    if all(known.values()):
        return graph
    nodes = []
    for node in graph.nodes:
        if node.note is None and not known[node.op_type]:
            if not allow_unknown:
                REGISTRY.lookup(node.op_type, where=node.where)  # raises with a did-you-mean
            node = msgspec.structs.replace(node, note=f"unknown op {node.op_type}")
        nodes.append(node)
    return dataclasses.replace(graph, nodes=nodes)


def parse_graph(text: str, source: str | None = None, *, allow_unknown: bool = False,
                dims: Mapping[str, int] | None = None, max_nodes: int | None = None,
                max_depth: int = MAX_DEPTH, max_elements: int | None = None) -> Graph:
    """The text form -> a verified Graph (ops resolved, references checked, shapes inferred), as `load`
    returns for a `.xcir` file."""
    from ..ir import gc_paused
    from ..passes.prepare import prepare
    from . import Read, counted

    with gc_paused():
        graph = counted(Read(graph_from_text(text, source, allow_unknown, max_depth), True, True), max_nodes).graph
        return prepare(graph, allow_unknown=True, onnx=True, dims=dims, max_elements=max_elements)
