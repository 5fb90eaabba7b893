"""Bodies of control-flow nodes (ONNX Loop / If / Scan): interpreted natively, or traced with their JAX lowerings."""
from __future__ import annotations

import numpy as np

from ..clustering.bodies import body_graph as _body_graph
from ..ir import format_ref
from ..ops.control import Subgraph, set_runner
from .missing import preflight
from ..ops.values import as_value
from .node import eval_node

_CHECKED: set[str] = set()


def body_graph(sub: Subgraph):
    """The body as a finalized Graph, refused at once (one line) when it holds ops xcviz cannot run."""
    g = _body_graph(sub)
    if sub not in _CHECKED:
        preflight(g)  # a body op xcviz cannot run: one clear 'unsupported' line, before any iteration
        _CHECKED.add(sub)
    return g


def run_subgraph(sub: Subgraph, feeds: dict, use_jax: bool = False) -> list:
    """Run a body on `feeds` (its inputs and outer-scope names); its outputs in order. With use_jax the
    values may be tracers (inside lax.while_loop / scan / cond) and each node runs its JAX lowering."""
    g = body_graph(sub)
    env: dict = {}
    for v in g.inputs:
        env[v.name] = feeds[v.name] if v.name in feeds else np.asarray(v.data)
    keep = as_value if not use_jax else (lambda x: x)
    for node in g.nodes:
        outs = eval_node(node, [env[r] if r else None for r in node.inputs], use_jax=use_jax)
        for k, val in enumerate(outs):
            env[format_ref(node.name, k)] = keep(val)
    return [env[r] for r in g.outputs]


set_runner(run_subgraph)
