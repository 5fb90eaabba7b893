"""The seed's metrics: boundary edges and bytes, coverage, kernel launches, and a roofline speedup estimate.

Per-op time  T_op = max(FLOPs / peak, bytes moved / bandwidth) + launch overhead, where bytes moved are the
op's inputs plus outputs. A fused cluster runs as one kernel that moves only its boundary bytes:
T_fused(C) = max(sum FLOPs(C) / peak, D(C) / bandwidth) + launch overhead, and every boundary edge costs a
hand-off T_sync = sync overhead. S = sum T_op / (sum T_fused + sum T_op(fallback) + T_sync).
FLOPs an op cannot state (unknown shapes, opaque ops) count as 0; unknown bytes make a number unknown.

Computed on integer arrays over the graph's edges: a node's FLOPs and bytes once per distinct (op,
attributes, types) key, sums in node or member order as a Python loop adds them (float results are the
same to the bit), and the ClusterCost and Edge objects only when read.
"""
from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from itertools import chain
from operator import attrgetter, getitem

import numpy as np
import yaml

from .errors import XcvizError
from .ir import Graph, TensorType, gc_paused, parse_ref
from .ir.columns import GraphColumns, columns_of
from .ops import REGISTRY
from .ops import rules
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
    # Read-only lists; compute_stats fills them with LazyList, which builds each object on first access
    clusters_detail: Sequence[ClusterCost] = field(default_factory=list)
    edges: Sequence[Edge] = field(default_factory=list)


class LazyList(Sequence):
    """A read-only list whose items are built on first access and then kept.

    A 10^6-node graph has ~10^5 clusters and ~5*10^5 boundary edges: building their objects cost more than
    every number in Stats, and `stats --json` reads none of them. Items are built with the cyclic GC
    paused, as compute_stats used to build them: with a big graph alive, collections cost more than the build."""

    def __init__(self, n: int, make: Callable[[int], object]) -> None:
        self._items: list = [None] * n
        self._make = make

    def __len__(self) -> int:
        return len(self._items)

    def _built(self, ks: range) -> list:
        items, make = self._items, self._make
        with gc_paused():
            for k in ks:
                if items[k] is None:
                    items[k] = make(k)
        return items

    def __getitem__(self, i):
        if isinstance(i, slice):
            ks = range(*i.indices(len(self._items)))
            return list(map(self._built(ks).__getitem__, ks))
        item = self._items[i]  # IndexError and negative indices as a list has them
        if item is None:
            item = self._built(range(i % len(self._items), i % len(self._items) + 1))[i]
        return item

    def __iter__(self):
        return iter(self._built(range(len(self._items))) if None in self._items else self._items)

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, LazyList)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self):  # pickle and copy as the plain list it stands for
        return list, (list(self),)


# ---- the graph as arrays ----------------------------------------------------------------------------
_UNKNOWN = TensorType()  # the type of an output a node does not have
_SLOTS = 8               # nodes with more inputs or outputs get a cost key of their own (rare; keeps keys small)
_LONG = 512              # clusters longer than this sum their times one by one (see _seq_sums)


class _Flat:
    """What the cost model reads of a graph, as integer arrays.

    Edges, one per non-empty input ref in node order then input order (the order results list them):
    producer `src` (a node position, or -1 - i for graph input i), consumer `dst`, type id `tid_of`, and
    `ref`, the position of the ref among all refs (None: the edge number itself; each node's first is at
    `in_start`). Types are numbered by identity: the loader shares equal types as one object, so a big
    graph has a few hundred. Per node: output type ids (`out_tid`, `n_out` of them from `out_start`), op
    code (`op`, names in `op_names`), `known`, and the positions of the nodes whose attributes can change
    their cost (`with_attrs`)."""

    def __init__(self, graph: Graph) -> None:
        nodes = graph.nodes
        n = len(nodes)
        self.nodes = nodes

        columns = columns_of(graph)
        # ids of every node's output type objects, in node order
        raw = self._from_columns(columns, n)
        self.out_start = np.cumsum(self.n_out) - self.n_out

        # Output types numbered by object identity (ids sorted): any position of an id holds the same object.
        distinct = np.unique(raw)
        self.out_tid = np.searchsorted(distinct, raw)
        at = np.empty(len(distinct), np.int64)
        at[self.out_tid] = np.arange(len(raw))
        owner = np.searchsorted(self.out_start, at, side="right") - 1
        self.types: list[TensorType] = [nodes[j].outputs[p - int(self.out_start[j])]
                                        for p, j in zip(at.tolist(), owner.tolist())]
        self._tid = dict(zip(distinct.tolist(), range(len(distinct))))  # self.types keeps the ids valid
        unknown = self.tid(_UNKNOWN)
        out0 = np.full(n, unknown, np.int64)  # the type of each node's output 0
        has = self.n_out > 0
        out0[has] = self.out_tid[self.out_start[has]]

        # The edges: the graph's refs as positions, resolved once and kept by the graph (the loader seeds
        # them), so no name is looked up here. They read refs as costs always did (a plain ref names a node
        # before an input of the same name; a ref with ':' an input before 'name:k'), but for two cases
        # only hand-built graphs have, set right below: of inputs with the same name, costs read the last;
        # '' is an absent input even where a node or input has that name.
        pos, port, lens = columns.src, columns.port, columns.lens
        in_pos = {v.name: i for i, v in enumerate(graph.inputs)}  # the last of equal names, as a dict has it
        in_tid = np.array([self.tid(v.type) for v in graph.inputs] + [unknown], np.int64)
        if len(in_pos) < len(graph.inputs):
            last = np.array([n + in_pos[v.name] for v in graph.inputs], np.int64)
            pos = np.where(pos >= n, last[np.clip(pos - n, 0, len(last) - 1)], pos)
        if "" in in_pos or "" in graph.index:
            pos = pos.copy()
            pos[[k for k, r in enumerate(chain.from_iterable(map(attrgetter("inputs"), nodes))) if not r]] = -1
        self.in_start = np.cumsum(lens) - lens
        dst = np.repeat(np.arange(n, dtype=np.int64), lens)
        self.ref = None
        if (pos < 0).any():  # absent inputs are no edges
            keep = pos >= 0
            self.ref = np.flatnonzero(keep)
            pos, port, dst = pos[keep], port[keep], dst[keep]
        is_input = pos >= n
        src = np.where(is_input, n - 1 - pos, pos)  # graph input i as -1 - i
        tid = np.where(is_input, in_tid[np.clip(pos - n, 0, len(in_tid) - 1)], out0[np.clip(pos, 0, n - 1)])
        for e in np.flatnonzero(port).tolist():  # output k > 0 of a node
            produced, k = nodes[int(pos[e])].outputs, int(port[e])
            tid[e] = self.tid(produced[k]) if k < len(produced) else unknown
        self.src, self.dst, self.tid_of = src, dst, tid
        self.arity = np.bincount(dst, minlength=n)

    def _from_columns(self, table: GraphColumns, n: int) -> np.ndarray:
        """n_out, op, op_names, known and with_attrs from the graph's columns, without visiting the nodes;
        returns the ids of every node's output type objects, in node order."""
        op_code = dict.fromkeys(table.op)  # codes in order of first appearance
        for c, name in enumerate(op_code):
            op_code[name] = c
        self.op = np.fromiter(map(op_code.__getitem__, table.op), np.int64, n)
        self.op_names = list(op_code)
        reads_attrs = np.array([_flops_reads_attrs(name) for name in op_code], bool)
        self.known = np.fromiter(table.known, bool, n)
        attrs = table.attrs
        self.with_attrs = [i for i in np.flatnonzero(reads_attrs[self.op]).tolist() if attrs[i]]
        res_len = np.fromiter(map(len, table.results), np.int64, len(table.results))
        self.n_out = res_len[table.rid]
        # ids of every node's output objects: node j's k-th is result rid[j]'s k-th
        res_ids = np.fromiter(map(id, chain.from_iterable(table.results)), np.int64, int(res_len.sum()))
        total = int(self.n_out.sum())
        within = np.arange(total) - np.repeat(np.cumsum(self.n_out) - self.n_out, self.n_out)
        return res_ids[np.repeat((np.cumsum(res_len) - res_len)[table.rid], self.n_out) + within]

    def tid(self, t: TensorType) -> int:
        k = self._tid.get(id(t))
        if k is None:
            k = self._tid[id(t)] = len(self.types)
            self.types.append(t)
        return k


# FLOP rules that read shapes only: attributes cannot change what they give
_SHAPE_ONLY_RULES = frozenset(f.__code__ for f in (rules.zero_flops, rules.output_flops(), rules.input_flops()))


def _flops_reads_attrs(op: str) -> bool:
    """Whether a node's attributes can change its cost: only through a FLOP rule that reads them."""
    opdef = REGISTRY.ops.get(op)
    rule = opdef.flops if opdef is not None else None
    return rule is not None and getattr(rule, "__code__", None) not in _SHAPE_ONLY_RULES


def _dense(code: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    """Renumber codes in [0, radix) to [0, m), m the number of distinct ones."""
    if radix <= 4 * len(code) + 4096:
        seen = np.zeros(radix, bool)
        seen[code] = True
        rank = np.cumsum(seen) - 1
        return rank[code], int(rank[-1]) + 1 if radix else 0
    uniq, inverse = np.unique(code, return_inverse=True)
    return inverse.reshape(-1), len(uniq)


def _group(columns: list[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, int]:
    """One dense id per distinct row of the columns (each with its radix): a mixed-radix number per row,
    renumbered before it could overflow int64."""
    code, radix = np.zeros(n, np.int64), 1
    for col, r in columns:
        if r <= 1:
            continue
        if radix * r > 2**62:
            code, radix = _dense(code, radix)
        code = code * r + col
        radix *= r
    return _dense(code, radix)


def _cost_keys(graph: Graph, flat: _Flat) -> tuple[np.ndarray, list[int]]:
    """Per node the id of its cost key, and one node per key.

    FLOPs and bytes are pure functions of (op, known, scalar attributes, input and output types); big graphs
    repeat a few hundred keys, so each is costed once. Types count by identity (see _Flat), attributes only
    where the op's FLOP rule reads them; a node with non-scalar ones (or more than _SLOTS inputs or outputs)
    is a key of its own."""
    from .ir.attrs import attrs_key as _attrs_key

    nodes = graph.nodes
    n = len(nodes)
    akey = np.zeros(n, np.int64)  # 0: no attributes
    alone = (flat.arity > _SLOTS) | (flat.n_out > _SLOTS)
    table: dict = {}
    for j in flat.with_attrs:
        key = _attrs_key(nodes[j].attrs)
        if key is None:
            alone[j] = True
        else:
            akey[j] = table.setdefault(key, len(table) + 1)
    radix = len(flat.types) + 1  # type id + 1; 0 = no such input/output
    columns = [(flat.op, len(flat.op_names)), (flat.known.astype(np.int64), 2), (akey, len(table) + 1)]
    if alone.any():
        columns.append((np.where(alone, np.arange(1, n + 1), 0), n + 1))
    for tids, start, count in ((flat.tid_of, np.cumsum(flat.arity) - flat.arity, flat.arity),
                               (flat.out_tid, flat.out_start, flat.n_out)):
        for s in range(min(int(count.max()) if n else 0, _SLOTS)):  # the s-th input (output) of each node
            columns.append((np.where(count > s, tids[np.minimum(start + s, len(tids) - 1)] + 1, 0), radix))
    sig, m = _group(columns, n)
    rep = np.empty(m, np.int64)
    rep[sig] = np.arange(n)  # any node of a key (they all cost the same)
    return sig, rep.tolist()


def _key_costs(graph: Graph, flat: _Flat, reps: list[int]) -> list[tuple]:
    """(FLOPs, bytes) of each key's node, as the per-node rules give them."""
    dims = graph.dims
    ops = REGISTRY.ops
    starts = np.cumsum(flat.arity) - flat.arity
    out = []
    for j in reps:
        node = graph.nodes[j]
        start = int(starts[j])
        types = [flat.types[t].bind(dims) for t in flat.tid_of[start:start + int(flat.arity[j])].tolist()]
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
        out.append((flops, total))
    return out


def node_costs(graph: Graph) -> list[NodeCost]:
    """FLOPs and bytes (inputs + outputs) per node."""
    flat = _Flat(graph)
    sig, reps = _cost_keys(graph, flat)
    costs = _key_costs(graph, flat, reps)
    return [NodeCost(*costs[k]) for k in sig.tolist()]


def _ints(values: list, count: int) -> np.ndarray:
    """int64 when no sum of `count` of these can overflow, else Python ints (object): exact either way."""
    if all(type(v) is int for v in values) and max(map(abs, values), default=0) * max(count, 1) < 2**62:
        return np.array(values, np.int64)
    return np.array(values + [None], object)[:-1]  # the None keeps numpy from reading tuples as rows


def _seq_sums(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Per run of consecutive values (runs of the given sizes): their sum added left to right from 0, so
    floats match a Python loop to the bit (np.add.reduceat adds pairwise). Step j adds the j-th value of
    every run at once: runs longest first, so the runs still going are a prefix."""
    out = np.zeros(len(sizes))
    starts = np.cumsum(sizes) - sizes
    for k in np.flatnonzero(sizes > _LONG).tolist():
        out[k] = _seq_total(values[starts[k]:starts[k] + sizes[k]])
    short = np.flatnonzero(sizes <= _LONG)
    order = short[np.argsort(-sizes[short], kind="stable")]
    left, base = sizes[order], starts[order]
    acc = np.zeros(len(order))
    for j in range(int(left[0]) if len(left) else 0):
        m = int(np.searchsorted(-left, -j))  # runs longer than j
        acc[:m] += values[base[:m] + j]
    out[order] = acc
    return out


def _seq_total(values: np.ndarray):
    """The sum of floats added left to right from 0, as a Python loop adds them (np.cumsum is sequential;
    np.sum is pairwise); 0 (an int) when there are none, as before."""
    return float(np.cumsum(np.concatenate(([0.0], values)))[-1]) if len(values) else 0


class _Boundary:
    """The boundary edges as arrays: data edges with a kept cluster on exactly one side, then cluster
    results that are graph outputs (the order results list them). Edge objects are built on request."""

    def __init__(self, graph: Graph, flat: _Flat, cluster_of: np.ndarray) -> None:
        self.graph, self.flat = graph, flat
        self._cols: tuple | None = None
        dims = graph.dims
        cs = np.where(flat.src >= 0, cluster_of[np.maximum(flat.src, 0)], -1)
        cd = cluster_of[flat.dst]
        self.e = np.flatnonzero((cs != cd) & ((cs >= 0) | (cd >= 0)))  # edge numbers in flat
        tids = flat.tid_of[self.e]
        self.bound: dict[int, tuple] = {}  # type id -> (bound type, bytes)
        nbytes: list = [None] * len(flat.types)
        for t in np.unique(tids).tolist():
            bt = flat.types[t].bind(dims)
            self.bound[t] = (bt, bt.nbytes())
            nbytes[t] = self.bound[t][1]
        self.outputs: list[Edge] = []
        out_src: list[int] = []
        in_names = {v.name for v in graph.inputs}
        for r in graph.outputs:  # read as before: an input name first, then 'name:k'
            if r in in_names:
                continue  # a graph input is in no cluster
            name, k = parse_ref(r)
            i = graph.index[name]
            c = int(cluster_of[i])
            if c >= 0:
                t = graph.nodes[i].out(k).bind(dims)
                self.outputs.append(Edge(name, OUTPUT, r, t, t.nbytes(), c, -1))
                out_src.append(i)
        # per-edge bytes: a table over types, then the output edges' own
        table = nbytes + [e.bytes for e in self.outputs]
        at = np.concatenate((tids, np.arange(len(nbytes), len(table)))).astype(np.int64)
        self.known = np.array([b is not None for b in table], bool)[at]
        self.bytes = _ints([b or 0 for b in table], len(at))[at]
        k = len(self.outputs)
        self.src_cluster = np.concatenate((cs[self.e], [e.src_cluster for e in self.outputs])).astype(np.int64)
        self.dst_cluster = np.concatenate((cd[self.e], np.full(k, -1))).astype(np.int64)
        self.src_pos = np.concatenate((flat.src[self.e], out_src)).astype(np.int64)
        self.dst_pos = np.concatenate((flat.dst[self.e], np.full(k, -1))).astype(np.int64)

    def __len__(self) -> int:
        return len(self.known)

    def _lists(self) -> tuple[list, ...]:
        """Per boundary edge: tensor (ref text), producer, consumer, type id and the two clusters, as lists
        (made on first use, at C speed: reading numpy scalars or refs one by one is slow)."""
        if self._cols is None:
            flat, e, nodes = self.flat, self.e, self.graph.nodes
            dst = flat.dst[e]
            slot = ((e if flat.ref is None else flat.ref[e]) - flat.in_start[dst]).tolist()
            dst = dst.tolist()
            refs = list(map(getitem, map(attrgetter("inputs"), map(nodes.__getitem__, dst)), slot))
            refs += [o.tensor for o in self.outputs]
            self._cols = (refs, self.src_pos.tolist(), self.dst_pos.tolist(), flat.tid_of[e].tolist(),
                          self.src_cluster.tolist(), self.dst_cluster.tolist())
        return self._cols

    def edge(self, k: int) -> Edge:
        if k >= len(self.e):
            return self.outputs[k - len(self.e)]
        refs, src, dst, tid, cs, cd = self._lists()
        nodes = self.graph.nodes
        ref, s = refs[k], src[k]
        bt, nb = self.bound[tid[k]]
        return Edge(nodes[s].name if s >= 0 else ref, nodes[dst[k]].name, ref, bt, nb, cs[k], cd[k])


class _Details:
    """Builds one cluster's ClusterCost from the per-cluster numbers and the boundary edges."""

    def __init__(self, graph: Graph, clustering, edges: _Boundary, numbers: Callable[[], dict[str, list]]) -> None:
        self.graph, self.clustering, self.edges, self._numbers = graph, clustering, edges, numbers
        self.columns: dict[str, list] | None = None

    def make(self, k: int) -> ClusterCost:
        if self.columns is None:  # first use: the numbers and each cluster's edges, as lists
            nc = len(self.clustering.clusters)
            edges = self.edges
            self.ein, self.ein_at = (a.tolist() for a in _by_cluster(edges.dst_cluster, nc))
            self.eout, self.eout_at = (a.tolist() for a in _by_cluster(edges.src_cluster, nc))
            self.refs, self.src, self.dst = edges._lists()[:3]
            self.columns = self._numbers()
        at, refs, src, dst, c = self.graph.nodes.__getitem__, self.refs, self.src, self.dst, self.columns
        members = list(map(at, self.clustering.clusters[k]))
        ein = self.ein[self.ein_at[k]:self.ein_at[k + 1]]
        eout = self.eout[self.eout_at[k]:self.eout_at[k + 1]]
        return ClusterCost(
            id=self.clustering.cluster_id(k), nodes=list(map(attrgetter("name"), members)),
            ops=dict(sorted(Counter(map(attrgetter("op_type"), members)).items())),
            entry_points=list(map(attrgetter("name"), map(at, sorted(set(map(dst.__getitem__, ein)))))),
            exit_points=list(map(attrgetter("name"), map(at, sorted(set(map(src.__getitem__, eout)))))),
            inputs=list(dict.fromkeys(map(refs.__getitem__, ein))),
            outputs=list(dict.fromkeys(map(refs.__getitem__, eout))),
            boundary_bytes_in=c["boundary_bytes_in"][k], boundary_bytes_out=c["boundary_bytes_out"][k],
            edges_in=len(ein), edges_out=len(eout), flops=c["flops"][k], effective_size=c["effective_size"][k],
            time_unfused=c["time_unfused"][k], time_fused=c["time_fused"][k],
            speedup_estimate=c["speedup_estimate"][k])


def boundary_edges(graph: Graph, cluster_of: list[int]) -> list[Edge]:
    """Every data edge with a kept cluster on exactly one side, plus cluster results that are graph outputs."""
    b = _Boundary(graph, _Flat(graph), np.array(cluster_of, np.int64).reshape(-1))
    return [b.edge(k) for k in range(len(b))]


def compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    with gc_paused():
        return _compute_stats(graph, clustering, hw)


def _by_cluster(cluster: np.ndarray, nc: int) -> tuple[np.ndarray, np.ndarray]:
    """Edge numbers grouped by cluster (edge order kept within one), and each cluster's start in them."""
    order = np.flatnonzero(cluster >= 0)
    order = order[np.argsort(cluster[order], kind="stable")]
    counts = np.bincount(cluster[order], minlength=nc)
    return order, np.concatenate(([0], np.cumsum(counts)))


def _run_totals(values: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Sums of exact integers (int64 or Python ints) over runs of consecutive values of the given sizes."""
    ends = np.cumsum(np.concatenate(([0], values)))  # exact: integers, and int64 only where it cannot overflow
    at = np.cumsum(sizes)
    return ends[at] - ends[at - sizes]


def _seg_total(values: np.ndarray, seg: np.ndarray, nc: int) -> np.ndarray:
    """Sums of exact integers (int64 or Python ints) per segment id."""
    out = np.zeros(nc, values.dtype) if values.dtype != object else np.array([0] * nc + [None], object)[:-1]
    np.add.at(out, seg, values)
    return out


def _compute_stats(graph: Graph, clustering, hw: Hardware) -> Stats:
    nodes = graph.nodes
    n = len(nodes)
    flat = _Flat(graph)
    sig, reps = _cost_keys(graph, flat)
    key_costs = _key_costs(graph, flat, reps)

    def t_op(flops, nbytes) -> float | None:
        if nbytes is None:
            return None
        return max((flops or 0) / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead

    # per node, from its key: time (NaN = unknown: it makes every sum it enters NaN, as None made the
    # sums None before) and FLOPs (those an op cannot state count as 0)
    time = np.array([np.nan if t is None else t for t in (t_op(f, b) for f, b in key_costs)], np.float64)[sig]
    unknown = np.isnan(time)
    key_flops = [f or 0 for f, _ in key_costs]
    flops = _ints(key_flops, n)[sig]
    python_flops = not all(type(f) is int for f in key_flops)  # floats: add them in the order sum() did

    cluster_of = np.fromiter(clustering.cluster_of, np.int64, n)
    clustered_mask = cluster_of >= 0
    edges = _Boundary(graph, flat, cluster_of)
    n_edges = len(edges)

    # per cluster, over its members in the clustering's own order
    clusters = clustering.clusters
    nc = len(clusters)
    sizes = np.fromiter(map(len, clusters), np.int64, nc)
    members = np.fromiter(chain.from_iterable(clusters), np.int64, int(sizes.sum()))
    if python_flops:
        fl = flops.tolist()
        c_flops = np.array([sum([fl[v] for v in m]) for m in clusters] + [None], object)[:-1]
    else:
        c_flops = _run_totals(flops[members], sizes)
    c_unfused = _seq_sums(time[members], sizes)
    # and over its boundary edges
    ins, outs = edges.dst_cluster >= 0, edges.src_cluster >= 0
    c_in = np.bincount(edges.dst_cluster[ins], minlength=nc)
    c_out = np.bincount(edges.src_cluster[outs], minlength=nc)
    known_in = np.bincount(edges.dst_cluster[ins & ~edges.known], minlength=nc) == 0
    known_out = np.bincount(edges.src_cluster[outs & ~edges.known], minlength=nc) == 0
    c_bin = _seg_total(edges.bytes[ins], edges.dst_cluster[ins], nc)
    c_bout = _seg_total(edges.bytes[outs], edges.src_cluster[outs], nc)
    known_f = known_in & known_out
    # the per-cluster formulas of before, on arrays (the same IEEE operations in the same order), for the
    # clusters whose boundary bytes are known (NaN for the others)
    fused = np.full(nc, np.nan)
    fused[known_f] = np.maximum(c_flops[known_f].astype(np.float64) / hw.peak_flops,
                                (c_bin + c_bout)[known_f].astype(np.float64) / hw.memory_bandwidth) + hw.launch_overhead
    total = fused + hw.sync_overhead * (c_in + c_out).astype(np.float64)
    with np.errstate(all="ignore"):  # entries with an unknown part are dropped below
        speedup = c_unfused / total
    has_speedup = known_f & ~np.isnan(c_unfused) & (total > 0)

    fused_total = (_seq_total(fused) if nc else 0.0) if known_f.all() else None
    # A fallback op whose bytes are unknown costs the same before and after: leave it out of both.
    # (Sums in node order, added left to right as ever.)
    before = None if (clustered_mask & unknown).any() else _seq_total(time[~unknown])
    fallback_time = _seq_total(time[~clustered_mask & ~unknown])
    after = None
    if fused_total is not None and fallback_time is not None:
        after = fused_total + fallback_time + hw.sync_overhead * n_edges
    clustered = int(clustered_mask.sum())
    fallback = n - clustered
    if python_flops:
        fl = flops.tolist()
        total_flops, cl_flops = sum(fl), sum([f for f, c in zip(fl, clustering.cluster_of) if c >= 0])
    else:
        total_flops, cl_flops = int(flops.sum()), int(flops[clustered_mask].sum())
    boundary_bytes = int(edges.bytes.sum()) if edges.known.all() else None  # exact integers, any order

    def numbers() -> dict[str, list]:
        zero = np.array([_zero_op(nodes[j].op, nodes[j].known) for j in reps], bool)[sig]
        columns = dict(
            boundary_bytes_in=np.where(known_in, c_bin, None), boundary_bytes_out=np.where(known_out, c_bout, None),
            flops=c_flops, effective_size=sizes - _run_totals(zero[members].astype(np.int64), sizes),
            time_unfused=np.where(np.isnan(c_unfused), None, np.where(sizes > 0, c_unfused.astype(object), 0)),
            time_fused=np.where(known_f, fused, None), speedup_estimate=np.where(has_speedup, speedup, None))
        return {key: a.tolist() for key, a in columns.items()}

    detail = _Details(graph, clustering, edges, numbers)
    return Stats(
        nodes=n, clustered_nodes=clustered, coverage=clustered / n if n else 0.0,
        coverage_flops=cl_flops / total_flops if total_flops else None,
        boundary_bytes=boundary_bytes, boundary_edges=n_edges,
        kernel_launches_before=n, kernel_launches_after=nc + fallback,
        time_before=before, time_after=after,
        speedup_estimate=before / after if before is not None and after else None,
        clusters=nc, fallback_nodes=fallback, hardware=hw.name,
        clusters_detail=LazyList(nc, detail.make), edges=LazyList(n_edges, edges.edge))


def _zero_op(op: str, known: bool) -> bool:
    opdef = REGISTRY.ops.get(op) if known else None
    return opdef is not None and "zero_size" in opdef.groups
