"""Cost of TensorFlow's functional control flow and calls (While, If, Case, PartitionedCall): their library
functions costed as graphs of their own, as cost.control costs ONNX bodies.

- While: the body times its trips, and the condition once more than that; the trips from the loop's counter
  against a constant limit (cost.trips), an upper bound where the condition can end it earlier.
- If, Case: the dearer branch (FLOPs and bytes each).
- PartitionedCall, StatefulPartitionedCall: the function once.
Beside FLOPs and bytes, the runs (iterations, dispatches): TF's executor dispatches every op of a body on every
iteration. A function that cannot be costed, or a While with no counter to read, leaves the node's FLOPs
unknown, as before these were costed: its own bytes stay, and the whole-model estimate with them (the loop is
left out of both sides)."""
from __future__ import annotations

from ..ir import Graph, TFFunction
from ..ops import BODY_CONTROL, CONTROL_FLOW, REGISTRY
from .trips import Scope, tf_while_trips

_FUNCTIONS = ("body", "then_branch", "branches", "f")   # the attributes that hold a TF op's library functions
# TF's ops that run library functions: While, If, Case and the calls (ONNX's Loop/If/Scan hold graphs instead)
TF_CONTROL = frozenset(name for name in REGISTRY.names(CONTROL_FLOW) - REGISTRY.names(BODY_CONTROL)
                       if any(k in REGISTRY.ops[name].attrs for k in _FUNCTIONS))


def tf_control_cost(graph: Graph, node, graph_cost) -> tuple:
    """(FLOPs, bytes, why unknown, runs) of a TF functional node of `graph`; `graph_cost(g)` costs a function's
    graph (cost.keys.graph_cost)."""
    dims = graph.dims
    types = [graph.tensor_type(r).bind(dims) if r else None for r in node.inputs]
    a = node.attrs
    try:
        if "body" in a:   # While, StatelessWhile
            cond, body = _graph(a.get("cond"), types), _graph(a.get("body"), types)
            trips = tf_while_trips(cond, body, list(node.inputs), Scope(graph))
            if trips is None:
                return None, None, "no trip count: its condition has no counter against a constant limit", None
            c, b = graph_cost(cond), graph_cost(body)
            why = c[2] or b[2]
            if why:
                return None, None, why, None
            return (c[0] * (trips + 1) + b[0] * trips, c[1] * (trips + 1) + b[1] * trips, None,
                    (trips + c[3][0] * (trips + 1) + b[3][0] * trips, c[3][1] * (trips + 1) + b[3][1] * trips))
        if "f" in a:   # PartitionedCall, StatefulPartitionedCall
            return graph_cost(_graph(a.get("f"), types))
        fns = list(a.get("branches") or ()) if "branches" in a else [a.get("then_branch"), a.get("else_branch")]
        costs = [graph_cost(_graph(f, types[1:])) for f in fns]
        why = next((c[2] for c in costs if c[2]), None) if costs else "it has no branches"
        if why:
            return None, None, why, None
        return (max(c[0] for c in costs), max(c[1] for c in costs), None,
                (max(c[3][0] for c in costs), max(c[3][1] for c in costs)))
    except Exception as e:  # noqa: BLE001 - a function that cannot be costed is an unknown cost, with the reason
        return None, None, f"its function cannot be costed: {str(e).splitlines()[0][:120]}", None


def call_graph(graph: Graph, node) -> Graph | None:
    """A call's function (PartitionedCall, StatefulPartitionedCall) as a graph typed by the caller's inputs, for
    costing its ops each by its class; None for any other node, or a function that cannot be built."""
    if node.op not in TF_CONTROL or "f" not in node.attrs:
        return None
    types = [graph.tensor_type(r).bind(graph.dims) if r else None for r in node.inputs]
    try:
        return _graph(node.attrs.get("f"), types)
    except Exception:  # noqa: BLE001 - (its FLOPs then stand for it, as tf_control_cost's do)
        return None


def _graph(fn, types: list) -> Graph:
    """The function as a graph whose arguments have the caller's types (built once per types)."""
    if not isinstance(fn, TFFunction) or not fn.kept:
        raise ValueError(f"function {fn!r} is not in the graph's library")
    key = ("cost graph", tuple(types))
    state = fn.run_state
    if key not in state:
        from ..loaders.tensorflow.functions import function_graph

        state[key] = function_graph(fn.fdef, fn.library, f"function {fn.name!r}", arg_types=list(types))
    return state[key]
