"""Cost of control flow (ONNX Loop, If, Scan): the body's FLOPs and bytes times how often it runs.

A body is costed as a graph of its own, with its inputs typed from the node's (and its outer-scope reads from
the values they name), each of its nodes by the same rules as any node (nested control flow included):
- Loop: the body times its iterations: the trip count M when M is a constant, or the bound its condition
  sets on a counter (cost.trips: `i < limit`, the counter stepping by a constant), whichever is smaller. A
  condition that can end the loop earlier makes this an upper bound. M absent, computed, or INT32_MAX and
  more (a while loop as exporters write it), with no such counter: unknown.
- Scan: the body times the scan length (the scanned axis of the first scan input).
- If: the branch the condition takes when it is a constant, else the dearer branch (FLOPs and bytes each).
Beside FLOPs and bytes, the runs: (iterations, dispatches), the loop iterations (nested ones included) and the
body ops run in all: a runtime pays a fixed cost for each (onnxruntime dispatches every body op on every
iteration; XLA launches the body's kernels each time round its while loop).
Anything the body cannot state (a node of unknown cost, a size left symbolic) leaves the node's cost unknown,
with the reason (`why`)."""
from __future__ import annotations

import numpy as np

from ..ir import Body, Graph, TensorType
from ..ops import BODY_CONTROL, REGISTRY
from .tf_control import TF_CONTROL, tf_control_cost
from .trips import Scope, onnx_loop_trips

BODIES = REGISTRY.names(BODY_CONTROL)    # ONNX's Loop, If, Scan
CONTROL = BODIES | TF_CONTROL             # and TF's functional ops (cost.tf_control)
# exporters write a while loop as a Loop whose trip count is INT64_MAX (torch.onnx) or INT32_MAX
WHILE_TRIPS = 2**31 - 1


def control_cost(graph: Graph, node, graph_cost) -> tuple:
    """(FLOPs, bytes read and written, why unknown, runs) of a Loop, If or Scan node of `graph`, or of a TF
    While, If, Case or call (cost.tf_control) (runs:
    (iterations, dispatches), None where unknown); `graph_cost(g)` gives a body graph's (FLOPs, bytes, why
    unknown, runs) (cost.keys.graph_cost: passed in, as keys calls this)."""
    if node.op in TF_CONTROL:
        return tf_control_cost(graph, node, graph_cost)
    dims = graph.dims
    types = [graph.tensor_type(r).bind(dims) if r else None for r in node.inputs]
    a = node.attrs
    own = int(a.get("_n_inputs", len(types)))
    outer = dict(zip(a.get("_outer") or (), types[own:]))
    try:
        if node.op == "if":
            return _if(graph, node, outer, graph_cost)
        if node.op == "loop":
            trips, why = loop_trips(graph, node)
            if trips is None:
                return None, None, why, None
            body = [TensorType((), "int64"), TensorType((), "bool"), *types[2:own]]
            return _times(_body(a.get("body"), body, outer, dims, graph_cost), trips)
        return _scan(node, types[:own], outer, dims, graph_cost)
    except Exception as e:  # noqa: BLE001 - a body that cannot be costed is an unknown cost, with the reason
        return None, None, f"its body cannot be costed: {str(e).splitlines()[0][:120]}", None


def loop_trips(graph: Graph, node) -> tuple[int | None, str | None]:
    """(iterations, why unknown) of an ONNX Loop: its trip count M when a constant, or at most the bound its
    condition's induction variable sets (cost.trips), whichever is smaller."""
    given = bool(node.inputs and node.inputs[0])
    value = Scope(graph).const(node.inputs[0]) if given else None
    m = int(value.reshape(-1)[0]) if value is not None and value.size == 1 else None
    m = m if m is not None and m < WHILE_TRIPS else None
    bound = onnx_loop_trips(graph, node)
    if m is None and bound is None:
        computed = given and value is None
        return None, ("its trip count is not a constant, and its condition has no counter against a constant limit"
                      if computed else "no trip count: its condition ends it, on no counter against a constant limit")
    return min(t for t in (m, bound) if t is not None), None


def _if(graph: Graph, node, outer: dict, graph_cost):
    cond = Scope(graph).const(node.inputs[0]) if node.inputs and node.inputs[0] else None
    branches = ("then_branch", "else_branch")
    if cond is not None and cond.size == 1:
        branches = (branches[0] if bool(cond.reshape(-1)[0]) else branches[1],)
    costs = [_body(node.attrs.get(b), [], outer, graph.dims, graph_cost) for b in branches]
    why = next((c[2] for c in costs if c[2]), None)
    if why:
        return None, None, why, None
    return (max(c[0] for c in costs), max(c[1] for c in costs), None,
            (max(c[3][0] for c in costs), max(c[3][1] for c in costs)))


def _scan(node, own: list, outer: dict, dims: dict, graph_cost):
    from ..ops.control_body import scan_opset

    a = node.attrs
    if scan_opset(a.get("body")) < 9:
        return None, None, "an opset-8 Scan (batched, with sequence lengths) is not costed", None
    n_scan = int(a.get("num_scan_inputs", 0))
    states, scanned = own[:len(own) - n_scan], own[len(own) - n_scan:]
    axes = list(a.get("scan_input_axes") or [0] * n_scan)
    sliced = []
    for t, ax in zip(scanned, axes):
        if t is None or t.shape is None:
            return None, None, "a scan input's shape is unknown", None
        ax = ax % len(t.shape)
        sliced.append(TensorType(t.shape[:ax] + t.shape[ax + 1:], t.dtype))
    length = scanned[0].shape[axes[0] % len(scanned[0].shape)] if scanned else None
    if not isinstance(length, int):
        return None, None, "the scan length is not known", None
    return _times(_body(a.get("body"), [*states, *sliced], outer, dims, graph_cost), length)


def _times(cost: tuple, n: int) -> tuple:
    flops, nbytes, why, (iterations, dispatches) = cost
    return (None, None, why, None) if why else (flops * n, nbytes * n, None, (n + iterations * n, dispatches * n))


def _body(sub, formal: list, outer: dict, dims: dict, graph_cost) -> tuple:
    """(FLOPs, bytes, why unknown, runs) of one run of body `sub` with its inputs of types `formal`."""
    if not isinstance(sub, Body) or not sub.kept:
        return None, None, "its body was not kept", None
    return graph_cost(typed_body(sub, formal, outer, dims))


def typed_body(sub, formal: list, outer: dict, dims: dict) -> Graph:
    """A copy of the loader's body Graph whose inputs have the types the node gives them (its formal inputs
    `formal`, the outer-scope values it reads `outer`), its shapes inferred again from the file's declared
    types: a new graph, the loader's body stays as it is."""
    import msgspec

    from ..ir import Value
    from ..passes.prepare import prepare

    body = sub.body()
    types = {name: t for name, t in zip(sub.inputs, formal) if _expressible(t)}
    types.update((name, t) for name, t in outer.items() if t is not None and t.shape is not None and _expressible(t))
    inputs = [Value(v.name, _plain(types[v.name]), v.data, v.param) if v.name in types else
              Value(v.name, v.type, v.data, v.param) for v in body.inputs]
    nodes = [msgspec.structs.replace(n, op=n.op_type, outputs=list(sub.declared.get(n.name, ()))) for n in body.nodes]
    return prepare(Graph(body.name, inputs, nodes, body.outputs, body.source, output_names=body.output_names),
                    onnx=True, dims=dims)


def _expressible(t: TensorType | None) -> bool:
    """A type an ONNX file can declare for an input (a shape, a dtype ONNX has an element type for)."""
    import onnx

    if t is None or t.shape is None or t.dtype is None:
        return False
    try:
        onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t.dtype))
    except TypeError:  # a dtype ONNX has no element type for: the declared type stays
        return False
    return True


def _plain(t: TensorType) -> TensorType:
    """The type as an ONNX declaration reads back: a tensor (not a sequence), unknown dimensions as '?'."""
    return TensorType(tuple("?" if d is None else d for d in t.shape), t.dtype)
