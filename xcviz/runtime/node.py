"""Run one node: its op's NumPy implementation, or its JAX lowering while a cluster is being traced; and the
bodies its control flow runs (BodyRunner: handed to the op in its attributes, an explicit call back here)."""
from __future__ import annotations

import numpy as np

from ..errors import XcvizError
from ..ir.body import BODY_RUNNER


def eval_node(node, args: list, use_jax: bool = False) -> list:
    """Run one node; under JAX, nodes whose inputs are all concrete are folded natively (static shapes)."""
    from ..ops import REGISTRY
    from ..ops.arrays import Unsupported
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    if opdef is None:
        raise XcvizError(f"no implementation for {node.op_type} ({node.note or 'unknown op'})", where=node.where or f"node {node.name!r}",
                         hint="xcviz can show where it falls back, but cannot execute it")
    concrete = all(a is None or isinstance(a, (np.ndarray, np.generic)) for a in args)
    fn = opdef.native if (not use_jax or concrete) else opdef.jax
    if fn is None:
        raise Unsupported(f"{node.op_type} has no JAX lowering", where=f"node {node.name!r}")
    attrs = {**opdef.attrs, **node.attrs, "_op_type": node.op_type, "_num_outputs": len(node.outputs),
             BODY_RUNNER: BODIES}
    try:
        with np.errstate(all="ignore"):  # IEEE semantics (exp overflow -> inf) are the reference, not warnings
            out = fn(attrs, *args)
    except XcvizError as e:
        e.where = e.where or f"node {node.name!r} ({node.op_type})"
        raise
    if isinstance(out, (tuple, list)):
        return list(out)
    return [out]


class NodeFailed(Exception):
    """A node's implementation raised something other than an XcvizError (a bug, or a case it does not state):
    the node that was executing and its op, the original exception chained as the cause."""

    def __init__(self, node: str, op_type: str, cause: BaseException) -> None:
        super().__init__(f"while executing node {node!r} ({op_type}): {cause.__class__.__name__}: {cause}")
        self.node, self.op_type = node, op_type


def run_node(node, args: list) -> list:
    """eval_node natively, a failure naming the node: an XcvizError keeps its message (eval_node gives it the node
    as `where`), any other exception is raised again as NodeFailed, chained. MemoryError and RecursionError pass
    as they are (callers act on their type), with the node in a note."""
    try:
        return eval_node(node, args)
    except (XcvizError, NodeFailed):
        raise
    except (MemoryError, RecursionError) as e:
        e.add_note(f"while executing node {node.name!r} ({node.op_type})")
        raise
    except Exception as e:  # noqa: BLE001 - wrapped with the node's name, the cause chained
        raise NodeFailed(node.name, node.op_type, e) from e


def run_graph_nodes(graph, env: dict, use_jax: bool = False) -> list:
    """Every node of a (body or function) graph in order on `env` (its inputs already there); its outputs. A
    native run keeps each value as a runtime value (sequences, empty optionals); under JAX they stay tracers."""
    from ..ir import format_ref
    from ..ops.values import as_value

    keep = as_value if not use_jax else (lambda x: x)
    for node in graph.nodes:
        args = [env[r] if r else None for r in node.inputs]
        outs = eval_node(node, args, use_jax=True) if use_jax else run_node(node, args)
        for k, val in enumerate(outs):
            env[format_ref(node.name, k)] = keep(val)
    return [env[r] for r in graph.outputs]


def run_subgraph(sub, feeds: dict, use_jax: bool = False) -> list:
    """Run a body (ir.Body) on `feeds` (its inputs and outer-scope names); its outputs in order. With use_jax
    the values may be tracers (inside lax.while_loop / scan / cond) and each node runs its JAX lowering. Under
    a hybrid run, a body its node could not take into a cluster runs its own clusters compiled."""
    from .subgraphs import body_graph, current_body_run, run_compiled

    g = body_graph(sub)
    run = None if use_jax else current_body_run()
    if run is not None:
        return run_compiled(sub, g, feeds, run)
    env: dict = {}
    for v in g.inputs:
        env[v.name] = feeds[v.name] if v.name in feeds else np.asarray(v.data)
    return run_graph_nodes(g, env, use_jax)


def run_function(fn, args: list, use_jax: bool = False) -> list:
    """Run a TF library function (ir.TFFunction) on its arguments; its results in signature
    order. With use_jax the values may be tracers and each node runs its JAX lowering (concrete ones fold)."""
    from .tf_functions import function_graph

    g = function_graph(fn)
    if len(args) != len(g.inputs):
        from ..ops.arrays import Unsupported

        raise Unsupported(f"function {fn.name!r} takes {len(g.inputs)} arguments, the call gives {len(args)}")
    env: dict = {v.name: a for v, a in zip(g.inputs, args)}
    return run_graph_nodes(g, env, use_jax)


class BodyRunner:
    """What the runtime hands an op that runs bodies (ops.control_body.BODY_RUNNER in its attributes):
    `run(body, feeds, use_jax)` for an ONNX body, `call(fn, args, use_jax)` for a TF library function."""

    __slots__ = ()

    run = staticmethod(run_subgraph)
    call = staticmethod(run_function)


BODIES = BodyRunner()
