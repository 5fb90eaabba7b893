"""Bodies of control-flow nodes (ONNX Loop / If): built once into a Graph, then interpreted natively."""
from __future__ import annotations

import numpy as np

from ..ir import format_ref
from ..ops.control import Subgraph, set_runner
from .missing import preflight
from ..ops.values import as_value
from .node import eval_node

_GRAPHS: dict[str, object] = {}
_KEPT = 256


def body_graph(sub: Subgraph):
    """The body as a finalized Graph; its outer-scope names are extra graph inputs."""
    g = _GRAPHS.get(sub)
    if g is None:
        import onnx

        from ..loaders.build import finalize
        from ..loaders.onnx_model import graph_from_model

        proto = onnx.GraphProto()
        proto.ParseFromString(sub.proto)
        model = onnx.helper.make_model(proto, opset_imports=[onnx.helper.make_opsetid(d, v) for d, v in sub.opset])
        g = finalize(graph_from_model(model, f"body {proto.name!r}", outer=sub.outer), onnx=True)
        preflight(g)  # a body op xcviz cannot run: one clear 'unsupported' line, before any iteration
        if len(_GRAPHS) >= _KEPT:
            _GRAPHS.pop(next(iter(_GRAPHS)))
        _GRAPHS[sub] = g
    return g


def run_subgraph(sub: Subgraph, feeds: dict) -> list:
    """Run a body natively on `feeds` (its inputs and outer-scope names); its outputs in order."""
    g = body_graph(sub)
    env: dict = {}
    for v in g.inputs:
        env[v.name] = feeds[v.name] if v.name in feeds else np.asarray(v.data)
    for node in g.nodes:
        outs = eval_node(node, [env[r] if r else None for r in node.inputs])
        for k, val in enumerate(outs):
            env[format_ref(node.name, k)] = as_value(val)
    return [env[r] for r in g.outputs]


set_runner(run_subgraph)
