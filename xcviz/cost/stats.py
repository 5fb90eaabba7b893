"""compute_stats: the roofline estimate of a clustering (see the package docstring), on arrays."""
from __future__ import annotations


import numpy as np

from ..ir import Graph, gc_paused
from ..memory import BIG_GRAPH_NODES, keep_freed_memory
from ..ops import REGISTRY
from .boundary import Boundary, Details
from .hardware import Hardware
from .classes import CONVS, FRESH_BYTES, LIBRARY_CLASSES, native_time, op_class, xla_class, xla_scale
from .control import CONTROL
from .coverage import flops_coverage
from .fusion import predict_kernels
from .keys import control_node_cost, cost_keys, costs_per_key
from .params import CONSTANT_OPS, constant_clusters
from .results import LazyList, Stats
from .sums import exact_ints, run_totals, seg_total, seq_sums, seq_total
from .view import CostView


def compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    if len(graph.nodes) >= BIG_GRAPH_NODES:   # (xcviz.memory)
        keep_freed_memory()
    with gc_paused():
        return _compute_stats(graph, clustering, hw)


def _compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    flat = CostView(graph)
    nodes = flat.nodes  # each made on request: the model reads the graph's columns
    n = len(nodes)
    sig, reps = cost_keys(graph, flat)
    key_runs: dict[int, tuple] = {}   # Loop/If/Scan keys: (iterations, body ops dispatched); LSTM/GRU/RNN: (steps, XLA kernels, native calls)
    key_costs = costs_per_key(graph, flat, reps, key_runs)

    cal = hw.calibrated
    key_names = [node_class(graph, nodes[j]) for j in reps] if cal else []
    key_class = [cal.classes[c] for c in key_names] if cal else []
    # a constant is a tensor the native runtime holds from the start (onnxruntime makes it an initializer),
    # not an op it runs
    held = [nodes[j].known and nodes[j].op in CONSTANT_OPS for j in reps] if cal else []

    # a Loop/If/Scan whose body cannot be costed (a while loop: its trips depend on the data) may take any
    # share of the model's time, natively and in the hybrid run alike: no whole-model estimate then
    runs_unknown = any(key_costs[k][0] is None and nodes[j].known and nodes[j].op in CONTROL for k, j in enumerate(reps))

    def t_op(k: int, flops, nbytes) -> float | None:
        if nbytes is None:
            return None
        if cal:  # the native runtime, op by op: its fixed cost, its rate, the bytes it moves
            return 0.0 if held[k] else native_time(key_class[k], cal, flops or 0, nbytes)
        return max((flops or 0) / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead

    # per node, from its key: time (NaN = unknown: it makes every sum it enters NaN, as None made the
    # sums None before) and FLOPs (those an op cannot state count as 0)
    time = np.array([np.nan if t is None else t for t in (t_op(k, f, b) for k, (f, b, _) in enumerate(key_costs))],
                    np.float64)[sig]
    if cal:   # the body ops a loop runs: the native runtime dispatches each, every iteration (cost.control)
        at = np.flatnonzero(np.isin(sig, list(key_runs))) if key_runs else np.zeros(0, np.int64)
        loops = {j: key_runs[k] for j, k in zip(at.tolist(), sig[at].tolist())}
        for j, r in loops.items():   # (a recurrence says its native calls apart: the entry's `steps` fact)
            time[j] += r[-1] * cal.classes["free"].native_overhead
    unknown = np.isnan(time)
    key_flops = [f or 0 for f, _, _ in key_costs]
    flops = exact_ints(key_flops, n)[sig]
    python_flops = not all(type(f) is int for f in key_flops)  # floats: add them in the order sum() did

    cluster_of, members, sizes = clustering.arrays()
    clustered_mask = cluster_of >= 0
    edges = Boundary(graph, flat, cluster_of)
    n_edges = len(edges)

    # per cluster, over its members in the clustering's own order
    nc = len(sizes)  # (clustering.clusters, 10^6 members as lists, is made only where a cluster's details are read)
    if python_flops:
        fl = flops.tolist()
        c_flops = np.array([sum([fl[v] for v in m]) for m in clustering.clusters] + [None], object)[:-1]
    else:
        c_flops = run_totals(flops[members], sizes)
    c_unfused = seq_sums(time[members], sizes)
    # and over its boundary edges
    ins, outs = edges.dst_cluster >= 0, edges.src_cluster >= 0
    known_in = np.bincount(edges.dst_cluster[ins & ~edges.known], minlength=nc) == 0
    known_out = np.bincount(edges.src_cluster[outs & ~edges.known], minlength=nc) == 0
    c_bin = seg_total(edges.bytes[ins], edges.dst_cluster[ins], nc)
    c_bout = seg_total(edges.bytes[outs], edges.src_cluster[outs], nc)
    known_f = known_in & known_out
    # parameters: read inside the kernel (bandwidth), but no hand-off per call (sync counts activations)
    par = edges.param
    c_pin = seg_total(edges.bytes[ins & par], edges.dst_cluster[ins & par], nc)
    c_sync, n_sync = edges.handoffs(nc)
    # clusters whose values depend on no runtime input fold to constants, natively and under XLA alike: their
    # members cost nothing on either side, and they claim no speedup (params.constant_clusters)
    const_c = constant_clusters(flat, cluster_of, nc, ins, par, edges.known, edges.dst_pos)
    folded = np.concatenate((const_c, [False]))[cluster_of] if const_c.any() else None
    if folded is not None:
        n_sync = max(0, n_sync - int(c_sync[const_c].sum()))
        c_sync = np.where(const_c, 0, c_sync)
    # the per-cluster formulas of before, on arrays (the same IEEE operations in the same order), for the
    # clusters whose boundary bytes are known (NaN for the others)
    # XLA's kernels in each cluster (see fusion): each costs a launch, and each value one kernel writes for
    # another inside the cluster is written and read back once
    p_edge = edges.edge_param
    exits = edges.src_pos[outs]
    kernels, written, per_node = predict_kernels(graph, flat, cluster_of, nc, exits, p_edge, hw.backend,
                                                  edges.inner, (members, sizes))
    wbytes = written_bytes(key_costs, sig)
    inner_bytes = seg_total(2 * wbytes[written], cluster_of[written], nc)
    fused = np.full(nc, np.nan)
    moved = (c_bin + c_bout + inner_bytes)[known_f].astype(np.float64) / hw.memory_bandwidth
    if cal:
        scale = [node_xla_scale(graph, nodes[j]) for j in reps]
        xla_names = [node_xla_class(graph, nodes[j]) for j in reps]   # (a linear resize is a dot in XLA)
        fused[known_f] = calibrated_fused(cal, xla_names, key_costs, sig, per_node, cluster_of, nc, scale)[known_f] + moved
        if cal.page_fault_bandwidth:
            fused[known_f] += page_faults(cal, wbytes, _union(written, exits, n), cluster_of, nc)[known_f]
    else:
        fused[known_f] = np.maximum(c_flops[known_f].astype(np.float64) / hw.peak_flops, moved
                                    ) + hw.launch_overhead * kernels[known_f]
    if cal:
        for j, (_, d, *_) in loops.items():   # and XLA launches the body's kernels every time round its loop
            c = cluster_of[j]
            if c >= 0:
                fused[c] += d * cal.classes["elementwise"].xla_launch
    total = fused + hw.sync_overhead * c_sync.astype(np.float64)
    with np.errstate(all="ignore"):  # entries with an unknown part are dropped below
        speedup = c_unfused / total
    has_speedup = known_f & ~np.isnan(c_unfused) & (total > 0) & ~const_c
    if folded is not None:   # folded at compile time: no time in the hybrid run, none natively (below)
        fused = np.where(const_c, 0.0, fused)
        known_f = known_f | const_c
        time = np.where(folded, 0.0, time)

    fused_total = (seq_total(fused) if nc else 0.0) if known_f.all() else None
    # A fallback op whose bytes are unknown costs the same before and after: leave it out of both.
    # (Sums in node order, added left to right as ever.)
    unknown = np.isnan(time)   # (a folded node's is known: none)
    some_unknown = bool(unknown.any())
    before = None if runs_unknown or (some_unknown and (clustered_mask & unknown).any()) else \
        seq_total(time[~unknown] if some_unknown else time)
    fallback_time = seq_total(time[np.flatnonzero(~clustered_mask & ~unknown)])
    after = None
    if fused_total is not None and fallback_time is not None:
        after = fused_total + fallback_time + hw.sync_overhead * n_sync
    if cal and cal.session_overhead and before is not None:
        # a native runtime with sessions (onnxruntime): one call for the whole model natively, one per fallback
        # segment in the hybrid run (counted as one: the segments are not known here)
        before += cal.session_overhead
        after = None if after is None else after + cal.session_overhead * bool((~clustered_mask).any())
    clustered = int(clustered_mask.sum())
    fallback = n - clustered
    if python_flops:
        fl = flops.tolist()
        total_flops, cl_flops = sum(fl), sum([f for f, c in zip(fl, clustering.cluster_of) if c >= 0])
    else:
        total_flops, cl_flops = int(flops.sum()), int(c_flops.sum())   # (the clusters' sums: exact integers)
    boundary_bytes = int(edges.bytes.sum()) if edges.known.all() else None  # exact integers, any order
    par_bytes = int(edges.bytes[par].sum()) if edges.known[par].all() else None
    if boundary_bytes is not None:  # (the rest of the total: no pass over the activation edges)
        act_bytes = boundary_bytes - par_bytes
    else:
        act_bytes = int(edges.bytes[~par].sum()) if edges.known[~par].all() else None

    def numbers() -> dict[str, list]:
        zero = np.array([_zero_op(nodes[j].op, nodes[j].known) for j in reps], bool)[sig]
        columns = dict(
            boundary_bytes_in=np.where(known_in, c_bin, None), boundary_bytes_out=np.where(known_out, c_bout, None),
            parameter_bytes_in=np.where(known_in, c_pin, None),
            flops=c_flops, effective_size=sizes - run_totals(zero[members].astype(np.int64), sizes),
            time_unfused=np.where(np.isnan(c_unfused), None, np.where(sizes > 0, c_unfused.astype(object), 0)),
            time_fused=np.where(known_f, fused, None), kernels=kernels, speedup_estimate=np.where(has_speedup, speedup, None),
            constant=const_c)
        return {key: a.tolist() for key, a in columns.items()}

    detail = Details(graph, clustering, edges, numbers)
    return Stats(
        nodes=n, clustered_nodes=clustered, coverage=clustered / n if n else 0.0,
        **flops_coverage(nodes, np.array([f is None for f, _, _ in key_costs] + [False], bool)[:-1][sig],
                         clustered_mask, cl_flops, total_flops, flat.op, why=lambda j: _why_unknown(graph, nodes[j])),
        boundary_bytes=boundary_bytes, boundary_edges=n_edges,
        boundary_bytes_activations=act_bytes, parameter_bytes=par_bytes,
        handoffs=n_sync,
        kernel_launches_before=n, kernel_launches_after=int(kernels.sum()) + fallback,
        time_before=before, time_after=after,
        speedup_estimate=before / after if before is not None and after else None,
        clusters=nc, fallback_nodes=fallback, hardware=hw.name, native=getattr(hw, "native", None),
        constant_clusters=int(const_c.sum()),
        clusters_detail=LazyList(nc, detail.make), edges=LazyList(n_edges, edges.edge))


def node_class(graph: Graph, node) -> str:
    """The op class (cost.classes) a node is costed with."""
    return op_class(node.op, node.attrs, _weight(graph, node)) if node.known else "elementwise"


def node_xla_scale(graph: Graph, node) -> float:
    """XLA's work per FLOP of a node (cost.classes.xla_scale)."""
    if not node.known:
        return 1.0
    shapes = None
    if node.op == "resize" and node.inputs and node.inputs[0]:
        shapes = (graph.tensor_type(node.inputs[0]).shape, graph.tensor_type(node.name).shape)
    return xla_scale(node.op, node.attrs, _weight(graph, node), shapes)


def node_xla_class(graph: Graph, node) -> str:
    """The op class of a node's XLA numbers (cost.classes.xla_class)."""
    return xla_class(node.op, node.attrs, _weight(graph, node)) if node.known else "elementwise"


def _weight(graph: Graph, node) -> tuple | None:
    return graph.tensor_type(node.inputs[1]).shape if node.op in CONVS and len(node.inputs) > 1 and node.inputs[1] \
        else None


def calibrated_fused(cal, key_names: list[str], key_costs: list[tuple], sig: np.ndarray, per_node: np.ndarray,
                     cluster_of: np.ndarray, nc: int, key_scale: list[float]) -> np.ndarray:
    """Per cluster, XLA's time less its bytes: the call, a launch per kernel (a convolution's or a dot's layout
    copies as loop kernels) and each member's FLOPs at its class's rate (cost.classes)."""
    loop = cal.classes["elementwise"].xla_launch
    key_class = [cal.classes[c] for c in key_names]
    launch_k = np.array([c.xla_launch for c in key_class] + [0.0])[:-1][sig]
    library_k = np.array([c in LIBRARY_CLASSES for c in key_names] + [False])[:-1][sig]
    compute_k = np.array([(f or 0) * k / c.xla_flops for c, (f, _, _), k in zip(key_class, key_costs, key_scale)]
                         + [0.0])[:-1][sig]
    launch = np.where(per_node > 0, launch_k + np.where(library_k, (per_node - 1) * loop, 0.0), 0.0)
    inside = cluster_of >= 0
    per_cluster = np.bincount(cluster_of[inside], weights=(launch + compute_k)[inside], minlength=nc)
    return cal.call_overhead + per_cluster


def page_faults(cal, wbytes: np.ndarray, written: np.ndarray, cluster_of: np.ndarray, nc: int) -> np.ndarray:
    """Per cluster, the page faults of the values XLA writes per call (`written`: member positions) that are
    larger than FRESH_BYTES: the allocator maps each fresh on every call (cost.classes)."""
    size = wbytes[written].astype(np.float64)
    big = size > FRESH_BYTES
    return np.bincount(cluster_of[written[big]], weights=size[big], minlength=nc) / cal.page_fault_bandwidth


def _why_unknown(graph: Graph, node) -> str | None:
    """Why a node's cost is unknown, where that is known (control flow: cost.control)."""
    return control_node_cost(graph, node)[2] if node.known and node.op in CONTROL else None


def _zero_op(op: str, known: bool) -> bool:
    opdef = REGISTRY.ops.get(op) if known else None
    return opdef is not None and "zero_size" in opdef.groups


def written_bytes(key_costs: list[tuple], sig: np.ndarray) -> np.ndarray:
    """Per node, the bytes of its outputs (0 where unknown), as exact integers."""
    return exact_ints([w for _, _, w in key_costs], len(sig))[sig]


def _union(a: np.ndarray, b: np.ndarray, n: int) -> np.ndarray:
    """The sorted distinct positions in a and b (np.union1d hashes, far slower on many values)."""
    mask = np.zeros(n, bool)
    mask[a] = True
    mask[b] = True
    return np.flatnonzero(mask)
