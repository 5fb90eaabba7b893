"""The seed's metrics: boundary edges and bytes, coverage, kernel launches, and a roofline speedup estimate.

Per-op time  T_op = max(FLOPs / peak, bytes moved / bandwidth) + launch overhead, where bytes moved are the
op's inputs plus outputs. A fused cluster runs as one kernel that moves only its boundary bytes:
T_fused(C) = max(sum FLOPs(C) / peak, D(C) / bandwidth) + launch overhead, and every boundary edge costs a
hand-off T_sync = sync overhead. S = sum T_op / (sum T_fused + sum T_op(fallback) + T_sync).
FLOPs an op cannot state (unknown shapes, opaque ops) count as 0; unknown bytes make a number unknown.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from operator import attrgetter

import yaml

from .errors import XcvizError
from .ir import Graph, TensorType, gc_paused, parse_ref
from .ops import REGISTRY
from .ops.rules import Ctx

OUTPUT = "<output>"
DEFAULT_PROFILE = {"cpu": "cpu", "gpu": "gpu", "tpu": "tpu"}
PROFILE_KEYS = ("peak_flops", "memory_bandwidth", "launch_overhead", "sync_overhead")


@dataclass(frozen=True)
class Hardware:
    name: str
    peak_flops: float
    memory_bandwidth: float
    launch_overhead: float
    sync_overhead: float
    description: str = ""


def hardware_names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files("xcviz.hardware").iterdir() if p.name.endswith(".yaml"))


def load_hardware(spec: str | None, device: str = "cpu") -> Hardware:
    """A named profile (cpu, gpu, h100, tpu) or a YAML file with the same keys."""
    spec = spec or DEFAULT_PROFILE.get(device, "cpu")
    if os.path.sep in spec or spec.endswith((".yaml", ".yml")):
        if not os.path.isfile(spec):
            raise XcvizError("hardware profile not found", where=spec, hint="copy one of " + ", ".join(hardware_names()))
        text, where = open(spec, encoding="utf-8").read(), spec
    else:
        if spec not in hardware_names():
            raise XcvizError(f"unknown hardware profile {spec!r}", hint="use one of " + ", ".join(hardware_names()) + " or a YAML file")
        text, where = resources.files("xcviz.hardware").joinpath(f"{spec}.yaml").read_text("utf-8"), spec
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise XcvizError(f"malformed hardware profile: {e}", where=where) from None
    if not isinstance(data, dict):
        raise XcvizError("hardware profile must be a mapping", where=where)
    values = {}
    for key in PROFILE_KEYS:
        v = data.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (key in ("peak_flops", "memory_bandwidth") and v <= 0):
            raise XcvizError(f"hardware profile needs a positive number for {key!r}", where=where,
                             hint="keys: " + ", ".join(PROFILE_KEYS))
        values[key] = float(v)
    return Hardware(str(data.get("name") or spec), description=str(data.get("description") or ""), **values)


@dataclass
class NodeCost:
    flops: int | None
    bytes: int | None      # inputs + outputs


def node_costs(graph: Graph) -> list[NodeCost]:
    """FLOPs and bytes (inputs + outputs) per node.

    Both are pure functions of (op, input and output types, scalar attributes); the loader shares equal
    types as one object, so the result is computed once per distinct key (types by identity, kept alive
    by the cache) instead of once per node: big graphs repeat a few hundred keys."""
    from .loaders.build import _attrs_key

    dims = graph.dims
    in_types = {v.name: v.type for v in graph.inputs}
    idx = graph.index
    nodes = graph.nodes
    ops = REGISTRY.ops
    cache: dict[tuple, tuple] = {}
    out = []
    for node in nodes:
        raw = []
        for ref in node.inputs:
            if not ref:
                continue
            i = idx.get(ref) if ":" not in ref else None
            if i is not None:
                outs_i = nodes[i].outputs
                t = outs_i[0] if outs_i else TensorType()
            else:
                t = in_types.get(ref)
                if t is None:
                    name, k = parse_ref(ref)
                    t = nodes[idx[name]].out(k)
            raw.append(t)
        akey = _attrs_key(node.attrs) if node.attrs else ()
        key = None
        if akey is not None:
            key = (node.op, node.known, akey, len(raw), *map(id, raw), *map(id, node.outputs))
            hit = cache.get(key)
            if hit is not None:
                out.append(NodeCost(hit[0], hit[1]))
                continue
        types = [t.bind(dims) for t in raw]
        outs = [t.bind(dims) for t in node.outputs]
        total: int | None = 0
        for t in (*types, *outs):
            b = t.nbytes()
            total = None if b is None or total is None else total + b
        opdef = ops.get(node.op) if node.known else None
        flops = None
        if opdef is not None and opdef.flops is not None:
            try:
                flops = opdef.flops(Ctx(types, {**opdef.attrs, **node.attrs}, [], outs, len(outs)), outs)
            except Exception:  # noqa: BLE001 - a cost rule never fails a run; the FLOPs are just unknown
                flops = None
        if key is not None:
            cache[key] = (flops, total, raw, list(node.outputs))  # the types keep their ids valid
        out.append(NodeCost(flops, total))
    return out


@dataclass
class Edge:
    src: str            # producer node name, or graph input name
    dst: str            # consumer node name, or OUTPUT
    tensor: str
    type: TensorType
    bytes: int | None
    src_cluster: int    # -1 when outside every cluster
    dst_cluster: int


@dataclass
class ClusterCost:
    id: str
    nodes: list[str]
    ops: dict[str, int]
    entry_points: list[str]
    exit_points: list[str]
    inputs: list[str]
    outputs: list[str]
    boundary_bytes_in: int | None
    boundary_bytes_out: int | None
    edges_in: int
    edges_out: int
    flops: int
    effective_size: int
    time_unfused: float | None
    time_fused: float | None
    speedup_estimate: float | None


@dataclass
class Stats:
    nodes: int
    clustered_nodes: int
    coverage: float
    coverage_flops: float | None
    boundary_bytes: int | None
    boundary_edges: int
    kernel_launches_before: int
    kernel_launches_after: int
    time_before: float | None
    time_after: float | None
    speedup_estimate: float | None
    clusters: int
    fallback_nodes: int
    hardware: str
    clusters_detail: list[ClusterCost] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)


def _sum(values):
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def boundary_edges(graph: Graph, cluster_of: list[int]) -> list[Edge]:
    """Every data edge with a kept cluster on exactly one side, plus cluster results that are graph outputs."""
    idx, dims = graph.index, graph.dims
    in_types = {v.name: v.type for v in graph.inputs}
    edges = []

    def tensor(ref: str) -> tuple[str, int, TensorType]:
        if ref in in_types:
            return ref, -1, in_types[ref]
        name, k = parse_ref(ref)
        i = idx[name]
        return name, cluster_of[i], graph.nodes[i].out(k)

    nodes = graph.nodes
    get = idx.get
    bound: dict[int, tuple] = {}  # id(type) -> (bound type, bytes): equal types are mostly one shared object
    for j, node in enumerate(nodes):
        cj = cluster_of[j]
        for ref in node.inputs:
            if not ref:
                continue
            i = get(ref)
            if i is not None and ":" not in ref:  # output 0 of a node (the common case)
                cs = cluster_of[i]
                if cs == cj or (cs < 0 and cj < 0):
                    continue
                outs = nodes[i].outputs
                src, t = ref, outs[0] if outs else TensorType()
            else:
                src, cs, t = tensor(ref)
            if cs != cj and (cs >= 0 or cj >= 0):
                b = bound.get(id(t))
                if b is None:
                    bt = t.bind(dims)
                    b = bound[id(t)] = (bt, bt.nbytes(), t)  # t kept alive: its id stays its own
                edges.append(Edge(src, node.name, ref, b[0], b[1], cs, cj))
    for ref in graph.outputs:
        src, cs, t = tensor(ref)
        if cs >= 0:
            t = t.bind(dims)
            edges.append(Edge(src, OUTPUT, ref, t, t.nbytes(), cs, -1))
    return edges


def compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    with gc_paused():
        return _compute_stats(graph, clustering, hw)


def _compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    n = len(graph.nodes)
    costs = node_costs(graph)
    cluster_of = clustering.cluster_of
    edges = boundary_edges(graph, cluster_of)

    def t_op(c: NodeCost) -> float | None:
        if c.bytes is None:
            return None
        return max((c.flops or 0) / hw.peak_flops, c.bytes / hw.memory_bandwidth) + hw.launch_overhead

    op_times = [t_op(c) for c in costs]
    flops_of = [c.flops or 0 for c in costs]
    details = []
    fused_total: float | None = 0.0
    # edges per cluster in one pass (scanning every edge per cluster was quadratic on big graphs)
    edges_in: list[list[Edge]] = [[] for _ in clustering.clusters]
    edges_out: list[list[Edge]] = [[] for _ in clustering.clusters]
    for e in edges:
        if e.dst_cluster >= 0:
            edges_in[e.dst_cluster].append(e)
        if e.src_cluster >= 0:
            edges_out[e.src_cluster].append(e)
    index = graph.index
    # zero-size ops (shape, reshape, ...) per node, from one look-up per distinct op
    op_keys = list(map(attrgetter("op", "known"), graph.nodes))
    zero_of = {key: _zero_op(*key) for key in set(op_keys)}
    zero = list(map(zero_of.__getitem__, op_keys))
    for k, members in enumerate(clustering.clusters):
        member_names = [graph.nodes[v].name for v in members]
        ein, eout = edges_in[k], edges_out[k]
        bin_, bout = _sum(e.bytes for e in ein), _sum(e.bytes for e in eout)
        flops = sum([flops_of[v] for v in members])
        unfused = _sum([op_times[v] for v in members])
        fused = None
        if bin_ is not None and bout is not None:
            fused = max(flops / hw.peak_flops, (bin_ + bout) / hw.memory_bandwidth) + hw.launch_overhead
        sync = hw.sync_overhead * (len(ein) + len(eout))
        speedup = unfused / (fused + sync) if unfused is not None and fused is not None and fused + sync > 0 else None
        fused_total = None if fused is None or fused_total is None else fused_total + fused
        entry = sorted({e.dst for e in ein}, key=index.__getitem__)
        exits = sorted({e.src for e in eout}, key=index.__getitem__)
        details.append(ClusterCost(
            id=clustering.cluster_id(k), nodes=member_names,
            ops=dict(sorted(Counter(graph.nodes[v].op_type for v in members).items())),
            entry_points=entry, exit_points=exits,
            inputs=list(dict.fromkeys(e.tensor for e in ein)), outputs=list(dict.fromkeys(e.tensor for e in eout)),
            boundary_bytes_in=bin_, boundary_bytes_out=bout, edges_in=len(ein), edges_out=len(eout), flops=flops,
            effective_size=len(members) - sum([zero[v] for v in members]),
            time_unfused=unfused, time_fused=fused, speedup_estimate=speedup))

    clustered = sum([c >= 0 for c in cluster_of])
    fallback = n - clustered
    total_flops = sum(flops_of)
    cl_flops = sum([f for f, c in zip(flops_of, cluster_of) if c >= 0])
    # A fallback op whose bytes are unknown costs the same before and after: leave it out of both.
    # (Lists in node order, so the float sums add in the same order as ever.)
    before = _sum([t for t, c in zip(op_times, cluster_of) if c >= 0 or t is not None])
    fallback_time = _sum([t for t, c in zip(op_times, cluster_of) if c < 0 and t is not None])
    after = None
    if fused_total is not None and fallback_time is not None:
        after = fused_total + fallback_time + hw.sync_overhead * len(edges)
    # D: each boundary edge once (an edge between two clusters is "out" of one and "in" to the other)
    return Stats(
        nodes=n, clustered_nodes=clustered, coverage=clustered / n if n else 0.0,
        coverage_flops=cl_flops / total_flops if total_flops else None,
        boundary_bytes=_sum(e.bytes for e in edges), boundary_edges=len(edges),
        kernel_launches_before=n, kernel_launches_after=len(clustering.clusters) + fallback,
        time_before=before, time_after=after,
        speedup_estimate=before / after if before is not None and after else None,
        clusters=len(clustering.clusters), fallback_nodes=fallback, hardware=hw.name,
        clusters_detail=details, edges=edges)


def _zero(node) -> bool:
    return _zero_op(node.op, node.known)


def _zero_op(op: str, known: bool) -> bool:
    opdef = REGISTRY.ops.get(op) if known else None
    return opdef is not None and "zero_size" in opdef.groups
