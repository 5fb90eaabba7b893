"""Strategy `cost`: cycle-safe contraction ordered by the cost model's estimated benefit, not by post-order.

The same candidates and legality checks as `mark` (device, XLA scope, maximum size, cross-device
dependencies, cycles through the cycle graph), but the edges between clusters are contracted best first,
as XLA's priority fusion orders producers: the benefit of merging A and B is
    dT = T(A) + T(B) - T(A u B),   T(C) = min(F(C), sum of T_op over C),
    F(C) = max(FLOPs(C) / peak, D(C) / bandwidth) + launch + sync * |boundary(C)|,
the roofline of compute_stats (xcviz/cost) for a fused cluster, or the members run natively when that is
faster (so a merge that turns cheap native edges into hand-offs does not pay). Parameters (initializers and
Const outputs) are resident, as XLA keeps them: their bytes are read, but they cost no hand-off. Edges that
carry small integer tensors (shape vectors, indices) are merged first, as mark's phase 0 merges shape
consumers: XLA needs a Reshape's target as a compile-time constant inside the cluster that reads it. Ties go to the lower node positions, so the
result is deterministic. A merge with dT < 0 is refused ("not profitable: dT = -0.4 µs"; dT = 0, where
neither side is worth compiling yet, merges: a bigger cluster may pay), and at the end a
cluster whose estimated speedup sum T_op / T(C) is <= 1 is dropped ("unprofitable (est. 0.58×)") instead of
the minimum-size rule (an explicit --min-cluster-size still applies). Unbound symbolic dims count as 1.
T_op is the cost model's own (cost.stats.cost_model: its key_times, the formula `stats` costs each op with;
the strategy does not repeat it). With a calibrated profile (`xcviz calibrate`, cost.classes) T_op and F(C)
are the calibrated ones that `stats` uses (CalibratedModel.key_times and xla_keys): T_op = native overhead +
FLOPs / native rate + bytes / native bandwidth per op class, and F(C) = call overhead + sum over members of
(FLOPs / XLA's rate, and XLA's launch for each kernel the op roots in the fusion model of `stats`: library
calls and reductions) + one loop kernel + D(C) / bandwidth + sync * |boundary(C)| (elementwise ops and data
movement fuse into those kernels).
Every decision is an Attempt (phase 3, "cost"), so explain, --steps, --animate and --compare work as for mark.
"""
from __future__ import annotations

import heapq

import numpy as np

from ..ir import bind_dims
from ..ops import REGISTRY, ZERO_SIZE
from .cycles import GraphCycles
from .options import Candidates, ClusterOptions
from .result import Attempt, Clustering, finish

PHASE = 3
SOURCE, SINK = 0, 1


def _costs(graph, hw):
    """Per node: its native time under the profile's cost model (cost.stats.cost_model, as `stats` costs it),
    FLOPs, and (calibrated) XLA's launches and compute for it; per data edge: producer (-1 - i: graph input i),
    consumer, bytes; and (producer, bytes) per graph output a node produces."""
    from ..cost.keys import cost_keys, costs_per_key
    from ..cost.model import per_node
    from ..cost.stats import cost_model
    from ..cost.symbolic import free_dims
    from ..cost.view import CostView, inputs_negative
    from ..passes.values import may_have_value

    graph = bind_dims(graph, {d: 1 for d in free_dims(graph)})  # unbound dims count as 1 (the ordering needs numbers)
    flat = CostView(graph)
    sig, reps = cost_keys(graph, flat)
    per_key = costs_per_key(graph, flat, reps)
    nbytes = [t.bind(graph.dims).nbytes() or 0 for t in flat.types]
    shapes = [may_have_value(t.bind(graph.dims)) for t in flat.types]
    outs = []  # (producer position, bytes) of each graph output a node produces
    for name, k in graph.output_refs:
        j = graph.position(name)
        if j is not None:
            outs.append((j, graph.nodes[j].out(k).bind(graph.dims).nbytes() or 0))
    flops = np.array([k[0] or 0 for k in per_key], np.float64)[sig]  # (FLOPs, bytes moved, bytes written)
    # each op's native time is the cost model's own (the ordering needs numbers: unknown bytes count as 0)
    model = cost_model(hw, graph, graph.nodes, reps)
    time = per_node(model.key_times([(f, b or 0, w) for f, b, w in per_key]), sig)
    if hw.calibrated:  # XLA's side per node, from the model's per-key numbers (see the module docstring)
        from ..cost.fusion import K_LIB, op_kinds

        kind, weight = op_kinds([graph.nodes[j].op if graph.nodes[j].known else "" for j in reps], hw.backend)
        roots = np.where(kind >= K_LIB, weight, 0)   # kernels each roots; loop ops fuse into them (cost.fusion)
        launch, _, compute = model.xla_keys(per_key)
        xla = np.array([a * r + c for a, r, c in zip(launch, roots.tolist(), compute)] + [0.0])[:-1][sig]
    else:
        xla = np.zeros(len(time))
    edge_bytes = np.array(nbytes, np.int64)[flat.tid_of] if len(flat.tid_of) else np.zeros(0, np.int64)
    edge_shape = np.array(shapes, bool)[flat.tid_of] if len(flat.tid_of) else np.zeros(0, bool)
    src = inputs_negative(flat.src.copy(), len(time))   # (graph input i as -1 - i)
    return (time.tolist(), flops.tolist(), xla.tolist(), src.tolist(), flat.dst.tolist(),
            edge_bytes.tolist(), edge_shape.tolist(), outs)


class _Clusters:
    """Per-cluster totals at the representative's cycle-graph id, and boundary links between clusters."""

    def __init__(self, hw, size: int) -> None:
        self.hw = hw
        self.unfused = [0.0] * size
        self.flops = [0.0] * size
        self.xla = [0.0] * size      # calibrated profiles: XLA's launches and compute of the members
        self.bytes = [0] * size      # D(C): bytes over boundary edges
        self.edges = [0] * size      # |boundary(C)|
        self.link: list[dict[int, list]] = [{} for _ in range(size)]  # other id -> [edges, bytes]

    def connect(self, a: int, b: int, nbytes: int, handoff: int = 1, shape: bool = False) -> None:
        """A data edge a -> b; `handoff` 0 for a parameter (read by the kernel, never handed over per call);
        `shape`: it carries a small integer tensor (a shape vector, an index)."""
        for x, y in ((a, b), (b, a)):
            e = self.link[x].setdefault(y, [0, 0, 0])
            e[0] += handoff
            e[1] += nbytes
            e[2] += shape
            self.edges[x] += handoff
            self.bytes[x] += nbytes

    def time(self, flops: float, nbytes: int, edges: int, xla: float) -> float:
        hw, cal = self.hw, self.hw.calibrated
        if cal:
            return cal.call_overhead + cal.classes["elementwise"].xla_launch + xla + nbytes / hw.memory_bandwidth \
                + hw.sync_overhead * edges
        return max(flops / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead + hw.sync_overhead * edges

    def fused(self, c: int) -> float:
        return self.time(self.flops[c], self.bytes[c], self.edges[c], self.xla[c])

    def best(self, c: int) -> float:
        """T(C): compiled as one kernel, or left to run natively op by op, whichever is faster."""
        return min(self.fused(c), self.unfused[c])

    def benefit(self, a: int, b: int) -> float:
        k, nb, shape = self.link[a].get(b, (0, 0, 0))
        if shape:
            return float("inf")  # shape values stay inside the cluster that reads them, as mark's phase 0 does
        merged = self.time(self.flops[a] + self.flops[b], self.bytes[a] + self.bytes[b] - 2 * nb,
                           self.edges[a] + self.edges[b] - 2 * k, self.xla[a] + self.xla[b])
        return self.best(a) + self.best(b) - min(merged, self.unfused[a] + self.unfused[b])

    def merge(self, keep: int, gone: int) -> None:
        self.unfused[keep] += self.unfused[gone]
        self.flops[keep] += self.flops[gone]
        self.xla[keep] += self.xla[gone]
        between = self.link[keep].pop(gone, [0, 0, 0])
        self.link[gone].pop(keep, None)
        self.edges[keep] += self.edges[gone] - 2 * between[0]
        self.bytes[keep] += self.bytes[gone] - 2 * between[1]
        for other, entry in self.link[gone].items():
            for x, y, add in ((keep, other, entry), (other, keep, self.link[other].pop(gone))):
                e = self.link[x].setdefault(y, [0, 0, 0])
                for i in range(3):
                    e[i] += add[i]
        self.link[gone] = {}


def cost_clustering(graph, cands: Candidates, opts: ClusterOptions) -> Clustering:
    from ..cost.hardware import hardware_for

    hw = hardware_for(graph, opts.hardware, opts.device)
    nodes = graph.nodes
    n, n_in = len(nodes), len(graph.inputs)
    base = 2 + n_in
    time, flops, xla, src, dst, ebytes, eshape, out_bytes = _costs(graph, hw)
    gc = GraphCycles(base + n)
    gc.insert_edge(SOURCE, SINK)
    st = _Clusters(hw, base + n)
    linked = [False] * (base + n), [False] * (base + n)  # has an in edge, has an out edge
    # parameters (initializers, Const outputs) stay resident under XLA: their bytes are read, no hand-off
    param = [v.data is not None for v in graph.inputs] + [_const(nd) for nd in nodes]
    for s, d, nb, shape in zip(src, dst, ebytes, eshape):
        a = base + s if s >= 0 else 1 - s  # graph input i (src -1 - i) has id 2 + i
        gc.insert_edge(a, base + d)
        st.connect(a, base + d, nb, 0 if param[s + n_in if s >= 0 else -1 - s] else 1, shape)
        linked[1][a] = linked[0][base + d] = True
    for d, node in enumerate(nodes):
        for ref in node.control_inputs:
            gc.insert_edge(base + graph.index[ref], base + d)
            linked[1][base + graph.index[ref]] = linked[0][base + d] = True
    for j, nb in out_bytes:
        st.connect(base + j, SINK, nb)  # a graph output produced in a cluster crosses its boundary
    for v in range(2, base + n):        # FixupSourceAndSinkEdges, as mark
        if not linked[0][v]:
            gc.insert_edge(SOURCE, v)
        if not linked[1][v]:
            gc.insert_edge(v, SINK)
    for j in range(n):
        st.unfused[base + j], st.flops[base + j], st.xla[base + j] = time[j], flops[j], xla[j]

    ok, device = cands.ok, [None] * base + list(cands.device)
    scope = [None] * base + [nd.scope for nd in nodes]
    size = [1] * (base + n)
    parent = list(range(base + n))
    version = [0] * (base + n)

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def clustered(v: int) -> bool:
        return v >= base and ok[v - base]

    heap: list = []
    seen: set = set()

    def push(a: int, b: int) -> None:
        a, b = find(a), find(b)
        if a == b or not (clustered(a) and clustered(b)):
            return
        key = (min(a, b), max(a, b), version[a], version[b])
        if key not in seen:
            seen.add(key)
            # best benefit first; ties by node order (the lower representative ids), so deterministic
            heapq.heappush(heap, (-st.benefit(a, b), min(a, b), max(a, b), version[a], version[b]))

    for v in range(base, base + n):
        if ok[v - base]:
            for w in list(st.link[v]):
                push(v, w)
    attempts: list[Attempt] = []

    def refuse(frm: int, to: int, code: str, why: str, path=()) -> None:
        if opts.record:
            attempts.append(Attempt(PHASE, frm - base, to - base, False, why, code,
                                    tuple(p - base for p in path if p >= base)))

    while heap:
        neg, a, b, va, vb = heapq.heappop(heap)
        if find(a) != a or find(b) != b or version[a] != va or version[b] != vb:
            continue  # a side has merged since: its pairs were pushed again with the new versions
        frm, to = (a, b) if b in gc.out[a] else (b, a)  # along the producer -> consumer edge
        if -neg < 0:  # 0: neither side pays yet; growing may make it pay (or it is dropped at the end)
            refuse(frm, to, "unprofitable", f"not profitable: ΔT = {-neg * 1e6:+.1f} µs".replace("-", "−"))
            continue
        if device[frm] != device[to]:
            refuse(frm, to, "device", f"incompatible devices ({device[frm]} vs {device[to]})")
            continue
        if scope[frm] is not None and scope[to] is not None and scope[frm] != scope[to]:
            refuse(frm, to, "scope", f"mismatching XLA scopes ({scope[frm]} vs {scope[to]})")
            continue
        if size[frm] + size[to] > opts.max_size:
            refuse(frm, to, "max-size", f"merged size {size[frm] + size[to]} > max cluster size {opts.max_cluster_size}")
            continue
        via = next((p for p in gc.ins[to] if clustered(p) and device[find(p)] not in (device[to],)), None)
        if via is not None:
            refuse(frm, to, "cross-device", f"would introduce a cross-device dependency via {nodes[via - base].name}")
            continue
        if to not in gc.out[frm]:
            refuse(frm, to, "cycle", "would create a cycle via a path between the clusters")
            continue
        survivor, path = gc.contract_edge(frm, to)
        if survivor is None:
            names = ", ".join(nodes[p - base].name for p in path if p >= base) or "a graph input"
            refuse(frm, to, "cycle", f"would create a cycle via {names}", path)
            continue
        other = to if survivor == frm else frm
        size[survivor] = size[frm] + size[to]
        scope[survivor] = scope[frm] if scope[frm] is not None else scope[to]
        device[survivor] = device[frm]
        parent[other] = survivor
        st.merge(survivor, other)
        version[survivor] += 1
        if opts.record:
            attempts.append(Attempt(PHASE, frm - base, to - base, True))
        for w in list(st.link[survivor]):
            push(survivor, w)
    return _finish(graph, cands, opts, st, find, base, attempts)


def _finish(graph, cands, opts, st: _Clusters, find, base: int, attempts) -> Clustering:
    """Groups with their estimated speedup: those at or below 1x are dropped ("unprofitable (est. 0.58×)")."""
    n = len(graph.nodes)
    members: dict[int, list[int]] = {}
    for j in range(n):
        if cands.ok[j]:
            members.setdefault(find(base + j), []).append(j)
    kept, dropped = [], {}
    for r, m in members.items():
        eff = sum(0 if _zero(graph.nodes[j]) else 1 for j in m)
        forced = any(graph.nodes[j].compile is True for j in m)
        speedup = st.unfused[r] / st.fused(r)
        if speedup > 1 or forced:
            kept.append((m, eff, forced))
        else:
            dropped[r] = (m, speedup)
    result = finish(opts, graph, cands, kept, attempts)
    for m, speedup in dropped.values():
        for j in m:
            result.code[j] = "unprofitable"
            result.reason[j] = f"unprofitable (est. {speedup:.2f}×)"
    result.groups = sorted(result.groups + [m for m, _ in dropped.values()], key=lambda g: g[0])
    return result


def _const(node) -> bool:
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    return opdef is not None and opdef.name == "const"


def _zero(node) -> bool:
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    return opdef is not None and ZERO_SIZE in opdef.groups
