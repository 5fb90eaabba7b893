"""Turn a GraphSpec into what a test consumes: a hand-built Graph (finalized or not), a YAML/JSON mapping, bytes."""
from __future__ import annotations

import json

import yaml

from xcviz.ir import Graph, Node, TensorType, Value

from .core import GraphSpec, NodeSpec


def to_graph(spec: GraphSpec, finalize: bool = False, allow_unknown: bool = True) -> Graph:
    """The Graph a user builds with the Python API; `finalize`: then through passes.prepare."""
    nodes = [Node(name=n.name, op=n.op, op_type=n.op, inputs=tuple(n.inputs), control_inputs=tuple(n.control_inputs),
                  attrs=dict(n.attrs or {}), device=n.device, compile=n.compile, scope=n.scope,
                  outputs=[TensorType(tuple(s), d) for s, d in n.outputs or ()], known=n.known) for n in spec.nodes]
    g = Graph(spec.name, [Value(name, TensorType(tuple(s), d)) for name, s, d in spec.inputs], nodes,
              list(spec.outputs or []), dims=dict(spec.dims or {}))
    if finalize:
        from xcviz.passes.prepare import prepare as finish

        g = finish(g, allow_unknown=allow_unknown)
    return g


def node_mapping(n: NodeSpec) -> dict:
    m: dict = {"name": n.name, "op": n.op, "inputs": list(n.inputs)}
    if n.control_inputs:
        m["control_inputs"] = list(n.control_inputs)
    for key in ("device", "scope", "compile"):
        if getattr(n, key) is not None:
            m[key] = getattr(n, key)
    if n.outputs is not None and n.outputs_field:
        m["outputs"] = [{"shape": list(s), "dtype": d} for s, d in n.outputs]
    elif n.outputs is not None:
        (s, d), = n.outputs
        m["shape"], m["dtype"] = list(s), d
    if n.attrs is not None:
        m["attrs"] = n.attrs
    m.update(n.planted)
    return m


def to_mapping(spec: GraphSpec) -> dict:
    """The mapping a YAML/JSON graph file holds (graph_from_mapping's input)."""
    doc: dict = {"name": spec.name,
                 "inputs": [{"name": name, "shape": list(s), "dtype": d} for name, s, d in spec.inputs],
                 "nodes": [node_mapping(n) for n in spec.nodes]}
    if spec.outputs is not None:
        doc["outputs"] = list(spec.outputs)
    if spec.dims is not None:
        doc["dims"] = dict(spec.dims)
    return doc


def mapping_to_graph(doc: dict, source: str = "rand.yaml", allow_unknown: bool = False) -> Graph:
    """A mapping through the loaders' own path (graph_from_mapping, then passes.prepare)."""
    from xcviz.passes.prepare import prepare
    from xcviz.loaders.schema import graph_from_mapping

    return prepare(graph_from_mapping(doc, source), allow_unknown=allow_unknown)


def dump(doc, fmt: str) -> bytes:
    """A mapping as file bytes; JSON writes what it cannot represent (bytes, sets) with str()."""
    if fmt == "json":
        return json.dumps(doc, allow_nan=True, default=str).encode("utf-8")
    return yaml.safe_dump(doc, allow_unicode=True, default_flow_style=None).encode("utf-8")
