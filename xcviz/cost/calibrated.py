"""The calibrated cost model (cost.model's interface): the per-op-class numbers `xcviz calibrate` measures
(cost.classes), used where a profile has them.

Natively, op by op: each op's class costs a fixed overhead, a FLOP rate and the native bandwidth
(classes.native_time); a constant costs nothing (the runtime holds it from the start); a loop's body ops are
each dispatched every iteration; a TF call costs its function's ops, each by its class (call_times), on both
sides. Under XLA, per cluster: the call and the buffers it is handed and gives
back, a launch per kernel (a library call's layout copies as loop kernels), each member's FLOPs at its class's
XLA rate, its bytes at the bandwidth, the page faults of large fresh buffers, and a loop body's kernels
launched every time round. A runtime with sessions (onnxruntime, a TF function) adds one call per model
natively, and one per fallback segment that runs in the hybrid run (cost.segments), each of those also paying
the switch between runtimes where the run calls a compiled cluster (hybrid_switch_overhead)."""
from __future__ import annotations

import numpy as np

from ..ir import Graph
from ..ops import REGISTRY
from .classes import (CONVS, FRESH_BYTES, LIBRARY_CLASSES, Calibrated, native_time, op_class, torch_onednn, xla_class,
                      xla_scale)
from .control import CONTROL
from .model import ClusterWork, NodeCosts, per_node
from .params import CONSTANT_OPS
from .tf_control import TF_CONTROL, call_graph

_BLOCK = 1 << 16       # nodes at a time (xla_compute)


class CalibratedModel:
    def __init__(self, cal: Calibrated, graph: Graph, nodes, representatives: list[int]):
        self.cal, self.graph, self.nodes = cal, graph, nodes
        self.representatives = representatives
        self.key_names = [node_class(graph, nodes[j]) for j in representatives]   # per key, its op class
        self.key_class = [cal.classes[c] for c in self.key_names]
        # a constant is a tensor the native runtime holds from the start (onnxruntime makes it an
        # initializer), not an op it runs
        self.held = [nodes[j].known and nodes[j].op in CONSTANT_OPS for j in representatives]
        # a TF call's function, its ops each by its class (a grouped convolution in a call is no elementwise op)
        self.calls = {k: t for k, j in enumerate(representatives) if nodes[j].known and nodes[j].op in TF_CONTROL
                      and (t := call_times(cal, graph, nodes[j])) is not None}
        # a convolution torch eager sends to oneDNN costs at least oneDNN's fixed cost (cost.classes.torch_onednn)
        self.floor = {k: cal.onednn_overhead for k, j in enumerate(representatives)
                      if cal.onednn_overhead and _onednn(graph, nodes[j])}

    def key_times(self, key_costs: list[tuple]) -> list[float | None]:
        """Per key, one op's native time by its class: its fixed cost, its rate, the bytes it moves (None: bytes
        unknown); a TF call's, its function's ops' (call_times). A constant too: node_times, not this, says the
        runtime holds it."""
        cal, key_class, calls, floor = self.cal, self.key_class, self.calls, self.floor
        return [calls[k][0] if k in calls else None if b is None else
                native_time(key_class[k], cal, f or 0, b) + max(floor.get(k, 0.0) - key_class[k].native_overhead, 0.0)
                for k, (f, b, _) in enumerate(key_costs)]

    def node_times(self, costs: NodeCosts) -> np.ndarray:
        times = [0.0 if t is not None and held else t for t, held in zip(self.key_times(costs.key_costs), self.held)]
        time = per_node(times, costs.key_of)
        dispatch, iteration = self.cal.classes["free"].native_overhead, self.cal.iteration_overhead
        for j, runs in costs.loops.items():   # the body ops a loop runs, every iteration (cost.control); a
            time[j] += runs[-1] * dispatch   # recurrence says its native calls apart (its entry's `steps` fact)
            if iteration and self.nodes[j].op in CONTROL:   # and each iteration of a loop, its own (not an RNN's steps)
                time[j] += runs[0] * iteration
        return time

    def xla_keys(self, key_costs: list[tuple]) -> tuple[list[float], list[bool], list[float]]:
        """Per key, under XLA: the launch of one kernel of its XLA class, whether that class is a library call
        (its layout copies are loop kernels), and its FLOPs' time at the class's XLA rate (times XLA's work per
        FLOP, node_xla_scale). What fused_times sums per cluster, and the cost strategy per candidate cluster."""
        names = [node_xla_class(self.graph, self.nodes[j]) for j in self.representatives]  # (a linear resize: a dot)
        scale = [node_xla_scale(self.graph, self.nodes[j]) for j in self.representatives]
        classes = [self.cal.classes[c] for c in names]
        calls = self.calls
        return ([c.xla_launch for c in classes], [c in LIBRARY_CLASSES for c in names],
                [calls[i][1] if i in calls else (f or 0) * k / c.xla_flops
                 for i, (c, (f, _, _), k) in enumerate(zip(classes, key_costs, scale))])

    def fused_times(self, costs: NodeCosts, work: ClusterWork) -> np.ndarray:
        cal, known, nc = self.cal, work.known, work.count
        fused = np.full(nc, np.nan)
        fused[known] = xla_compute(cal, self.xla_keys(costs.key_costs), costs.key_of, work.kernels_per_node,
                                   work.cluster_of, nc)[known] + work.bytes_time
        fused += cal.argument_overhead * work.arguments + cal.output_overhead * work.results   # (the call's buffers)
        if cal.page_fault_bandwidth:
            fresh = _union(work.written, work.exits, len(work.cluster_of))
            fused[known] += page_faults(cal, work.written_bytes, fresh, work.cluster_of, nc)[known]
        launch = cal.classes["elementwise"].xla_launch
        for j, (_, ops, *_) in costs.loops.items():   # XLA launches the body's kernels every time round its loop
            c = work.cluster_of[j]
            if c >= 0:
                fused[c] += ops * launch
        return fused

    @property
    def native_call(self) -> float:
        return self.cal.session_overhead or 0.0

    def whole_model(self, before, after, native_calls, compiled, io):
        cal = self.cal
        session, switch = cal.session_overhead, cal.switch_overhead if compiled else 0.0
        arg, out = cal.native_argument_overhead, cal.native_output_overhead
        if (session or switch or arg or out) and before is not None:
            # one call for the whole model natively, one per fallback segment in the hybrid run, each handed
            # control by a compiled cluster's call and handing it back to the next (switch_overhead); each
            # call also pays for the values it is handed and gives back (TensorFlow: ~19 us an input)
            before += session + arg * io[0] + out * io[1]
            if after is not None:
                calls, entries, exits = native_calls()
                after += (session + switch) * calls + arg * entries + out * exits
        return before, after


def call_times(cal: Calibrated, graph: Graph, node) -> tuple[float, float] | None:
    """(native seconds, XLA's compute seconds) of a TF call (cost.tf_control.call_graph): its function's ops each
    costed by its class, as this model costs a graph's. A `jit_compile` function (`_XlaMustCompile`) TF runs
    through XLA itself, natively too: its XLA time and a compiled call. None where the function cannot be built
    or an op of it has an unknown cost."""
    from .keys import cost_keys, costs_per_key
    from .view import CostView

    body = call_graph(graph, node)
    if body is None:
        return None
    flat = CostView(body)
    sig, reps = cost_keys(body, flat)
    key_costs = costs_per_key(body, flat, reps)
    inner = CalibratedModel(cal, body, body.nodes, reps)
    native, (_, _, compute) = inner.key_times(key_costs), inner.xla_keys(key_costs)
    if any(native[k] is None for k in set(sig.tolist())):
        return None
    xla = float(sum(compute[k] for k in sig.tolist()))
    if node.must_compile:
        return xla + cal.call_overhead, xla
    return float(sum(0.0 if inner.held[k] else native[k] for k in sig.tolist())), xla


def node_class(graph: Graph, node) -> str:
    """The op class (cost.classes) a node is costed with."""
    return op_class(node.op, *_conv_facts(graph, node)) if node.known else "elementwise"


def node_xla_scale(graph: Graph, node) -> float:
    """XLA's work per FLOP of a node (cost.classes.xla_scale)."""
    if not node.known:
        return 1.0
    shapes = None
    if (node.op == "resize" or node.op in CONVS) and node.inputs and node.inputs[0]:
        shapes = (graph.tensor_type(node.inputs[0]).shape, graph.tensor_type(node.name).shape)
    return xla_scale(node.op, *_conv_facts(graph, node), shapes)


def node_xla_class(graph: Graph, node) -> str:
    """The op class of a node's XLA numbers (cost.classes.xla_class)."""
    return xla_class(node.op, *_conv_facts(graph, node)) if node.known else "elementwise"


def _conv_facts(graph: Graph, node) -> tuple[dict, tuple | None]:
    """(a node's attributes, its filter shape in ONNX's order) as the class rules read them: a convolution's
    `group` added where its shapes imply it (OpDef.group_count: TF's Conv2D)."""
    weight = _weight(graph, node)
    rule = REGISTRY.ops[node.op].group_count if node.op in CONVS else None
    if rule is None or "group" in node.attrs or not node.inputs or not node.inputs[0]:
        return node.attrs, weight
    group = rule(node.attrs, graph.tensor_type(node.inputs[0]).shape, weight)
    return (node.attrs if group is None else {**node.attrs, "group": group}), weight


def _onednn(graph: Graph, node) -> bool:
    """A float32 convolution torch eager would run on oneDNN (cost.classes.torch_onednn)."""
    if not node.known or node.op not in ("conv2d", "conv_transpose") or not node.inputs or not node.inputs[0]:
        return False
    t = graph.tensor_type(node.inputs[0])
    attrs, weight = _conv_facts(graph, node)
    return t.dtype == "float32" and torch_onednn(attrs, weight, t.shape)


def _weight(graph: Graph, node) -> tuple | None:
    """A convolution's filter shape in ONNX's order (out, in, spatial...), whatever its op's own (OpDef.filter_axes)."""
    if node.op not in CONVS or len(node.inputs) < 2 or not node.inputs[1]:
        return None
    shape = graph.tensor_type(node.inputs[1]).shape
    axes = REGISTRY.ops[node.op].filter_axes
    return tuple(shape[k] for k in axes) if axes and shape is not None and len(shape) == len(axes) else shape


def xla_compute(cal: Calibrated, xla_keys: tuple, key_of: np.ndarray, kernels_per_node: np.ndarray,
                cluster_of: np.ndarray, nc: int) -> np.ndarray:
    """Per cluster, XLA's time less its bytes: the call, a launch per kernel (a convolution's or a dot's layout
    copies as loop kernels) and each member's FLOPs at its class's rate (`xla_keys`: CalibratedModel.xla_keys)."""
    loop = cal.classes["elementwise"].xla_launch
    launch, library, compute = xla_keys
    launch_k = np.array(launch + [0.0])[:-1]       # per key
    library_k = np.array(library + [False])[:-1]
    compute_k = np.array(compute + [0.0])[:-1]
    per_cluster = np.zeros(nc)
    # each member's time, added to its cluster's in node order as np.bincount(weights=) adds them; a block of
    # nodes at a time, so no per-node float array of the whole graph is made (10^6 nodes: ~40 MB less at the
    # cost model's peak)
    for a in range(0, len(cluster_of), _BLOCK):
        cluster = cluster_of[a:a + _BLOCK]
        inside = np.flatnonzero(cluster >= 0)
        if not len(inside):
            continue
        key, kernels = key_of[a:a + _BLOCK][inside], kernels_per_node[a:a + _BLOCK][inside]
        step = np.where(kernels > 0, launch_k[key] + np.where(library_k[key], (kernels - 1) * loop, 0.0), 0.0)
        step += compute_k[key]
        np.add.at(per_cluster, cluster[inside], step)
    return cal.call_overhead + per_cluster


def page_faults(cal: Calibrated, written_bytes: np.ndarray, written: np.ndarray, cluster_of: np.ndarray,
                nc: int) -> np.ndarray:
    """Per cluster, the page faults of the values XLA writes per call (`written`: member positions) that are
    larger than FRESH_BYTES: the allocator maps each fresh on every call (cost.classes)."""
    size = written_bytes[written].astype(np.float64)
    big = size > FRESH_BYTES
    return np.bincount(cluster_of[written[big]], weights=size[big], minlength=nc) / cal.page_fault_bandwidth


def _union(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The sorted distinct positions in a and b (np.union1d hashes, far slower on many values)."""
    mask = np.zeros(n, bool)
    mask[a] = True
    mask[b] = True
    return np.flatnonzero(mask)
