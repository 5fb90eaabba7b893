"""compute_stats: the estimate of a clustering (see the package docstring), on arrays, as a sequence of steps:

  1. node costs      each node's FLOPs and bytes, once per distinct key (cost.keys, cost.control);
  2. cost model      roofline or calibrated (cost.model), chosen once from the Hardware profile: node times;
  3. boundary        per cluster, the bytes that cross into and out of it (cost.boundary);
  4. constant        clusters that depend on no runtime input fold at compile time (cost.params);
  5. kernels         XLA's kernels per cluster and the bytes they move (cost.fusion);
  6. per cluster     XLA's time, its hand-offs, its speedup;
  7. whole model     the time natively and in the hybrid run;
  8. totals          FLOPs and bytes (exact integers), and the Stats with its per-cluster details made on request.
The model decides only how seconds are put on work (steps 2, 6, 7); every count is the same for both."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..ir import Graph, gc_paused
from ..memory import BIG_GRAPH_NODES, keep_freed_memory
from ..ops import NOOP, REGISTRY, VARIABLE
from .boundary import Boundary, Details
from .calibrated import CalibratedModel
from .control import BODIES, CONTROL
from .coverage import flops_coverage
from .fusion import predict_kernels
from .hardware import Hardware
from .keys import control_node_cost, cost_keys, costs_per_key
from .model import ClusterWork, CostModel, NodeCosts
from .params import VOLATILE_OPS, constant_clusters
from .results import LazyList, Stats
from .segments import native_calls
from .roofline import RooflineModel
from .sums import exact_ints, run_totals, seg_total, seq_sums, seq_total
from .view import CostView

__all__ = ["compute_stats", "cost_model"]

_BLOCK = 1 << 16   # nodes at a time (flop_sums)


def compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    """The estimate of a clustering of a graph on a hardware profile."""
    if len(graph.nodes) >= BIG_GRAPH_NODES:   # (xcviz.memory)
        keep_freed_memory()
    with gc_paused():
        return _compute_stats(graph, clustering, hw)


def model_io(graph: Graph, flat: CostView) -> tuple[int, int]:
    """(the values a whole-model native call is handed, and gives back): the graph's inputs, a weight aside, and
    its placeholders (TF graphs feed those); its outputs."""
    fed = sum(not v.is_param for v in graph.inputs) + int(flat.known_mask(("placeholder",)).sum())
    return fed, len(graph.outputs)


def cost_model(hw: Hardware, graph: Graph, nodes, representatives: list[int]) -> CostModel:
    """The profile's model: calibrated where `xcviz calibrate` measured its op classes, else the roofline."""
    return CalibratedModel(hw.calibrated, graph, nodes, representatives) if hw.calibrated else RooflineModel(hw)


@dataclass(frozen=True)
class ClusterIO:
    """Per cluster, what crosses its boundary (cost.boundary's edges, summed)."""
    into: np.ndarray            # per boundary edge: its consumer is in a cluster
    out_of: np.ndarray          # per boundary edge: its producer is in a cluster
    known_in: np.ndarray        # per cluster: the bytes of every edge into it are known
    known_out: np.ndarray
    bytes_in: np.ndarray        # exact integers
    bytes_out: np.ndarray
    parameter_bytes_in: np.ndarray   # parameters: read inside the kernel (bandwidth), no hand-off per call


RESIDENT_OPS = REGISTRY.names(VARIABLE) | REGISTRY.names(NOOP)   # fallback ops that run no kernel per call


def _compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    flat = CostView(graph)
    nodes = flat.nodes  # each made on request: the model reads the graph's columns
    n = len(nodes)
    # 1-2. each node's FLOPs and bytes, and the profile's model (its native times: step 6)
    costs, runs_unknown = node_costs(graph, flat)
    model = cost_model(hw, graph, nodes, costs.representatives)
    cluster_of, members, sizes = clustering.arrays()
    nc = len(sizes)  # (clustering.clusters, 10^6 members as lists, is made only where a cluster's details are read)
    cluster_flops, total_flops, clustered_flops = flop_sums(costs, clustering, cluster_of, nc)
    # 3. what crosses each cluster's boundary
    edges = Boundary(graph, flat, cluster_of)
    io = cluster_io(edges, nc)
    # 4. the clusters that fold to constants, and the hand-offs left
    constant = constant_clusters(flat, cluster_of, nc, io.into, edges.param, edges.known, edges.dst_pos)
    handoffs, n_handoffs = live_handoffs(edges, constant)
    # 5. XLA's kernels per cluster, and the bytes they move
    work = xla_work(graph, flat, edges, io, costs, cluster_of, cluster_flops, (members, sizes), hw)
    # 6. per cluster: its time under XLA, natively, and the speedup (the nodes' native times made only now: one
    # per-node array fewer alive while the boundary's and the kernels' are made)
    est = cluster_estimate(model, costs, work, model.node_times(costs), (members, sizes), handoffs, constant,
                           hw.sync_overhead)
    # 7. the whole model, natively and in the hybrid run
    in_cluster = cluster_of >= 0
    before, after = model_times(est.node_time, est.fused, est.known, in_cluster, runs_unknown,
                                hw.sync_overhead * n_handoffs)
    # a fallback node that needs no native call per run (a parameter, a variable's handle or read, a NoOp)
    # leaves the hybrid run without a native session
    runs_native = ~in_cluster & ~edges.p_node & ~flat.known_mask(RESIDENT_OPS)
    before, after = model.whole_model(before, after, lambda: native_calls(
        graph, cluster_of, nc, flat.known_mask(VOLATILE_OPS)) if runs_native.any() else (0, 0, 0), not constant.all(),
        model_io(graph, flat))
    # 8. the totals, and the Stats (each cluster's details made when read)
    clustered = int(in_cluster.sum())
    fallback = n - clustered
    boundary_bytes, param_bytes, activation_bytes = byte_totals(edges)
    columns = functools.partial(cluster_columns, nodes, costs, io, work, est, cluster_flops, (members, sizes), constant)
    unknown_flops = np.array([f is None for f, _, _ in costs.key_costs] + [False], bool)[:-1][costs.key_of]
    return Stats(
        nodes=n, clustered_nodes=clustered, coverage=clustered / n if n else 0.0,
        **flops_coverage(nodes, unknown_flops, in_cluster, clustered_flops, total_flops, flat.op,
                         why=lambda j: _why_unknown(graph, nodes[j])),
        boundary_bytes=boundary_bytes, boundary_edges=len(edges),
        boundary_bytes_activations=activation_bytes, parameter_bytes=param_bytes,
        handoffs=n_handoffs,
        kernel_launches_before=n, kernel_launches_after=int(work.kernels.sum()) + fallback,
        time_before=before, time_after=after,
        speedup_estimate=before / after if before is not None and after else None,
        clusters=nc, fallback_nodes=fallback, hardware=hw.name, native=getattr(hw, "native", None),
        constant_clusters=int(constant.sum()),
        clusters_detail=LazyList(nc, Details(graph, clustering, edges, columns).make),
        edges=LazyList(len(edges), edges.edge))


def node_costs(graph: Graph, flat: CostView) -> tuple[NodeCosts, bool]:
    """Each node's costs, once per distinct key; and whether an ONNX Loop/If/Scan's cost is unknown (a while
    loop: its trips depend on the data). Such a loop may take any share of the model's time, natively and in
    the hybrid run alike: no whole-model estimate then. (A TF While with no trip count keeps the estimate it
    had before its functions were costed: its FLOPs unknown, its own bytes known; cost.tf_control.)"""
    nodes = flat.nodes
    key_of, reps = cost_keys(graph, flat)
    key_runs: dict[int, tuple] = {}   # Loop/If/Scan keys: (iterations, body ops dispatched); LSTM/GRU/RNN: (steps, XLA kernels, native calls)
    key_costs = costs_per_key(graph, flat, reps, key_runs)
    runs_unknown = any(key_costs[k][0] is None and nodes[j].known and nodes[j].op in BODIES
                       for k, j in enumerate(reps))
    at = np.flatnonzero(np.isin(key_of, list(key_runs))) if key_runs else np.zeros(0, np.int64)
    loops = {j: key_runs[k] for j, k in zip(at.tolist(), key_of[at].tolist())}
    return NodeCosts(key_of, reps, key_costs, loops), runs_unknown


def flop_sums(costs: NodeCosts, clustering, cluster_of: np.ndarray, nc: int) -> tuple:
    """Per cluster, its members' FLOPs; the FLOPs of every node; and of the clustered ones. Exact integers
    (FLOPs an op cannot state count as 0), or floats added in member and node order as sum() adds them."""
    key_flops = [f or 0 for f, _, _ in costs.key_costs]
    if not all(type(f) is int for f in key_flops):   # floats: a Python sum in the order sum() did
        flops_list = exact_ints(key_flops, len(cluster_of))[costs.key_of].tolist()
        cluster_flops = np.array([sum([flops_list[v] for v in m]) for m in clustering.clusters] + [None], object)[:-1]
        return cluster_flops, sum(flops_list), sum([f for f, c in zip(flops_list, clustering.cluster_of) if c >= 0])
    # exact integers, whose order does not matter: per key times its nodes, and per cluster a block of nodes at
    # a time (no per-node array of FLOPs: 10^6 nodes, ~30 MB less at the cost model's start)
    per_key = exact_ints(key_flops, len(cluster_of))
    counts = np.bincount(costs.key_of, minlength=len(key_flops)).tolist()
    total = sum(f * c for f, c in zip(key_flops, counts))
    cluster_flops = np.zeros(nc, per_key.dtype) if per_key.dtype != object else np.array([0] * nc + [None], object)[:-1]
    for a in range(0, len(cluster_of), _BLOCK):
        cluster = cluster_of[a:a + _BLOCK]
        inside = cluster >= 0
        np.add.at(cluster_flops, cluster[inside], per_key[costs.key_of[a:a + _BLOCK][inside]])
    return cluster_flops, total, (int(cluster_flops.sum()) if per_key.dtype != object else sum(cluster_flops.tolist()))


def cluster_io(edges: Boundary, nc: int) -> ClusterIO:
    """Per cluster, the bytes of its boundary edges in and out, and whether they are known."""
    into, out_of = edges.dst_cluster >= 0, edges.src_cluster >= 0
    par = into & edges.param
    return ClusterIO(
        into=into, out_of=out_of,
        known_in=np.bincount(edges.dst_cluster[into & ~edges.known], minlength=nc) == 0,
        known_out=np.bincount(edges.src_cluster[out_of & ~edges.known], minlength=nc) == 0,
        bytes_in=seg_total(edges.bytes[into], edges.dst_cluster[into], nc),
        bytes_out=seg_total(edges.bytes[out_of], edges.src_cluster[out_of], nc),
        parameter_bytes_in=seg_total(edges.bytes[par], edges.dst_cluster[par], nc))


def live_handoffs(edges: Boundary, constant: np.ndarray) -> tuple[np.ndarray, int]:
    """The activation hand-offs per cluster and in all (Boundary.handoffs), less those of the constant
    clusters: folded at compile time, they hand nothing over per call."""
    handoffs, n_handoffs = edges.handoffs(len(constant))
    if constant.any():
        n_handoffs = max(0, n_handoffs - int(handoffs[constant].sum()))
        handoffs = np.where(constant, 0, handoffs)
    return handoffs, n_handoffs


def xla_work(graph: Graph, flat: CostView, edges: Boundary, io: ClusterIO, costs: NodeCosts, cluster_of: np.ndarray,
             cluster_flops: np.ndarray, runs: tuple[np.ndarray, np.ndarray], hw: Hardware) -> ClusterWork:
    """XLA's kernels in each cluster (cost.fusion): each costs a launch, and each value one kernel writes for
    another inside the cluster is written and read back once; with the boundary bytes, the bytes it moves."""
    nc = len(io.known_in)
    exits = edges.src_pos[io.out_of]
    kernels, written, per_node = predict_kernels(graph, flat, cluster_of, nc, exits, edges.edge_param, hw.backend,
                                                  edges.inner, runs)
    wbytes = written_bytes(costs.key_costs, costs.key_of)
    inner_bytes = seg_total(2 * wbytes[written], cluster_of[written], nc)
    known = io.known_in & io.known_out   # the clusters whose boundary bytes are known (the others: NaN)
    bytes_time = (io.bytes_in + io.bytes_out + inner_bytes)[known].astype(np.float64) / hw.memory_bandwidth
    arguments, results = edges.arguments(nc)
    return ClusterWork(cluster_of, known, cluster_flops, bytes_time, kernels, per_node, written, exits, wbytes,
                       arguments, results)


@dataclass(frozen=True)
class ClusterEstimate:
    """Per cluster, its time natively and under XLA; and per node its native time, a folded node's 0."""
    unfused: np.ndarray         # native time, its members' added in member order (NaN: unknown)
    fused: np.ndarray           # XLA's time for one call (a constant cluster's: 0)
    known: np.ndarray           # whether `fused` is known
    speedup: np.ndarray         # unfused / (fused + hand-offs)
    has_speedup: np.ndarray     # whether `speedup` is claimed (known, positive, not a constant cluster)
    node_time: np.ndarray


def cluster_estimate(model: CostModel, costs: NodeCosts, work: ClusterWork, node_time: np.ndarray,
                     runs: tuple[np.ndarray, np.ndarray], handoffs: np.ndarray, constant: np.ndarray,
                     sync_overhead: float) -> ClusterEstimate:
    """Each cluster's time natively and under XLA (the model's), with its hand-offs, and its speedup (one call
    of the cluster each way: the native runtime's call (CostModel.native_call) and XLA's count). Clusters
    whose values depend on no runtime input fold to constants, natively and under XLA alike: their members
    cost nothing on either side, and they claim no speedup (params.constant_clusters)."""
    members, sizes = runs
    unfused = seq_sums(node_time[members], sizes)
    fused = model.fused_times(costs, work)
    total = fused + sync_overhead * handoffs.astype(np.float64)
    with np.errstate(all="ignore"):  # entries with an unknown part are not claimed (has_speedup)
        # one call each way, as validate times a cluster alone: the native runtime's call (a session's run)
        # beside its ops, XLA's call in `fused`
        speedup = (unfused + model.native_call) / total
    has_speedup = work.known & ~np.isnan(unfused) & (total > 0) & ~constant
    known = work.known
    if constant.any():   # folded at compile time: no time in the hybrid run, none natively
        fused = np.where(constant, 0.0, fused)
        known = known | constant
        node_time = np.where(np.concatenate((constant, [False]))[work.cluster_of], 0.0, node_time)
    return ClusterEstimate(unfused, fused, known, speedup, has_speedup, node_time)


def model_times(time: np.ndarray, fused: np.ndarray, known_fused: np.ndarray, in_cluster: np.ndarray,
                runs_unknown: bool, sync: float) -> tuple[float | None, float | None]:
    """The model's time natively (every node's) and in the hybrid run (the clusters', the fallback's and the
    hand-offs', `sync`), in node order, added left to right; None where a part is unknown. A fallback op whose
    bytes are unknown costs the same before and after: it is left out of both."""
    fused_total = (seq_total(fused) if len(fused) else 0.0) if known_fused.all() else None
    unknown = np.isnan(time)   # (a folded node's is known: none)
    some_unknown = bool(unknown.any())
    before = None if runs_unknown or (some_unknown and (in_cluster & unknown).any()) else \
        seq_total(time[~unknown] if some_unknown else time)
    fallback_time = seq_total(time[np.flatnonzero(~in_cluster & ~unknown)])
    after = None
    if fused_total is not None and fallback_time is not None:
        after = fused_total + fallback_time + sync
    return before, after


def byte_totals(edges: Boundary) -> tuple[int | None, int | None, int | None]:
    """The boundary bytes D: in all, of parameters (resident), of activations (handed over per call); None
    where an edge's size is unknown. Exact integers, any order."""
    param = edges.param
    boundary_bytes = int(edges.bytes.sum()) if edges.known.all() else None
    param_bytes = int(edges.bytes[param].sum()) if edges.known[param].all() else None
    if boundary_bytes is not None:  # (the rest of the total: no pass over the activation edges)
        return boundary_bytes, param_bytes, boundary_bytes - param_bytes
    return boundary_bytes, param_bytes, int(edges.bytes[~param].sum()) if edges.known[~param].all() else None


def cluster_columns(nodes, costs: NodeCosts, io: ClusterIO, work: ClusterWork, est: ClusterEstimate,
                    cluster_flops: np.ndarray, runs: tuple[np.ndarray, np.ndarray], constant: np.ndarray
                    ) -> dict[str, list]:
    """The per-cluster numbers of ClusterCost, as lists (made when a cluster's details are first read)."""
    members, sizes = runs
    zero = np.array([_zero_op(nodes[j].op, nodes[j].known) for j in costs.representatives], bool)[costs.key_of]
    columns = dict(
        boundary_bytes_in=np.where(io.known_in, io.bytes_in, None),
        boundary_bytes_out=np.where(io.known_out, io.bytes_out, None),
        parameter_bytes_in=np.where(io.known_in, io.parameter_bytes_in, None),
        flops=cluster_flops, effective_size=sizes - run_totals(zero[members].astype(np.int64), sizes),
        time_unfused=np.where(np.isnan(est.unfused), None, np.where(sizes > 0, est.unfused.astype(object), 0)),
        time_fused=np.where(est.known, est.fused, None), kernels=work.kernels,
        speedup_estimate=np.where(est.has_speedup, est.speedup, None), constant=constant)
    return {key: a.tolist() for key, a in columns.items()}


def written_bytes(key_costs: list[tuple], key_of: np.ndarray) -> np.ndarray:
    """Per node, the bytes of its outputs (0 where unknown), as exact integers."""
    return exact_ints([w for _, _, w in key_costs], len(key_of))[key_of]


def _why_unknown(graph: Graph, node) -> str | None:
    """Why a node's cost is unknown, where that is known (control flow: cost.control)."""
    return control_node_cost(graph, node)[2] if node.known and node.op in CONTROL else None


def _zero_op(op: str, known: bool) -> bool:
    opdef = REGISTRY.ops.get(op) if known else None
    return opdef is not None and "zero_size" in opdef.groups
