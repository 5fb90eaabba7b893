"""Strategy `mark`, reference implementation: TensorFlow's MarkForCompilationPass in plain Python.

The executable specification of the compiled pass (mark.py, which every graph takes): tests check both give
identical clusters and attempt records."""
from __future__ import annotations

from ..errors import XcvizError
from ..ops import NOOP, REGISTRY, SHAPE_CONSUMER, ZERO_SIZE
from .cycles import GraphCycles
from .options import ClusterOptions, Candidates
from .result import Attempt, Clustering, finish, keeps_cluster

SOURCE, SINK = 0, 1


def mark_for_compilation(graph, cands: Candidates, opts: ClusterOptions) -> Clustering:
    n_in = len(graph.inputs)
    base = 2 + n_in                      # cycle-graph ids: source, sink, graph inputs, then nodes
    nodes = graph.nodes
    n = len(nodes)
    tf = getattr(cands, "tf", None)      # TensorFlow's own cycle graph and deadness (tf_rules.py)
    extra = tf.extra_nodes if tf is not None else 0
    gc = GraphCycles(base + n + extra)
    gc.insert_edge(SOURCE, SINK)         # TF's Graph starts with this control edge
    has_out = [False] * (base + n)
    if tf is not None:
        for src, dst in tf.edges:
            gc.insert_edge(src, dst)
            if dst != SINK and src < base + n:
                has_out[src] = True
    else:
        _insert_edges(graph, gc, base, has_out)
    # Per-cluster state, stored at the cluster's representative cycle-graph node.
    ok = cands.ok
    size = [1] * (base + n)
    eff = [0] * (base + n)
    forced = [False] * (base + n)
    device = [None] * base + list(cands.device) + [None] * extra
    scope = [None] * base + [nd.scope for nd in nodes]
    parent = list(range(base + n))       # union-find over cycle-graph ids
    groups_of = ["shape" if _in(nd, SHAPE_CONSUMER) else "noop" if _in(nd, NOOP) and not has_out[base + j] else None
                 for j, nd in enumerate(nodes)]
    for j, nd in enumerate(nodes):
        eff[base + j] = 0 if _in(nd, ZERO_SIZE) else 1
        forced[base + j] = keeps_cluster(REGISTRY.ops.get(nd.op) if nd.known else None, nd.compile) if tf is None \
            else tf.keep[j]
    res_ops = {base + j: [j] for j in range(n) if tf.resource_op[j]} if tf is not None else {}

    def find(v: int) -> int:
        root = v
        while parent[root] != root:
            root = parent[root]
        while parent[v] != root:
            parent[v], v = root, parent[v]
        return root

    def cluster(v: int) -> int | None:
        if v < base or v >= base + n or not ok[v - base]:
            return None
        return find(v)

    # Devices never mix inside a cluster (a merge needs equal devices), so a cluster has a candidate
    # predecessor on another device exactly when one of its members had one in the original graph. Keeping
    # that flag per cluster lets try_contract skip the scan of the merged node's predecessors, which grows
    # with the cluster (every parameter input of a deep MLP) and made the pass quadratic.
    xdev = [False] * (base + n)
    for v in range(base, base + n):
        xdev[v] = ok[v - base] and any(cluster(p) is not None and device[p] != device[v] for p in gc.ins[v])
    attempts: list[Attempt] = []
    record = opts.record
    max_size = opts.max_size

    def lone(c: int) -> str | None:
        return groups_of[c - base] if size[c] == 1 else None

    def try_contract(frm: int, to: int, phase: int) -> bool:
        refusal = None
        if tf is not None and tf.deadness[frm - base] != tf.deadness[to - base]:
            refusal = ("deadness", "the two nodes have mismatching deadness: "
                       f"{tf.dead_text[frm - base]} and {tf.dead_text[to - base]}")
        elif device[frm] != device[to]:
            refusal = ("device", f"incompatible devices ({device[frm]} vs {device[to]})")
        elif scope[frm] is not None and scope[to] is not None and scope[frm] != scope[to]:
            refusal = ("scope", f"mismatching XLA scopes ({scope[frm]} vs {scope[to]})")
        elif size[frm] + size[to] > max_size:
            refusal = ("max-size", f"merged size {size[frm] + size[to]} > max cluster size {opts.max_cluster_size}")
        elif xdev[to]:  # (without the flag the scan below finds nothing: see xdev)
            for p in gc.ins[to]:
                cin = cluster(p)
                if cin is not None and (device[cin] != device[to] or device[cin] != device[frm]):
                    refusal = ("cross-device", f"would introduce a cross-device dependency via {nodes[p - base].name}")
                    break
        if refusal is None and res_ops and any((a, b) in tf.unsafe for a in res_ops.get(frm, ())
                                               for b in res_ops.get(to, ())):
            refusal = ("resource", "the new cluster would break resource variable semantics")
        path: list[int] | None = None
        if refusal is None:
            survivor, path = gc.contract_edge(frm, to)
            if survivor is not None:
                other = to if survivor == frm else frm
                # the merged cluster keeps `frm`'s properties, stored at the survivor
                size[survivor] = size[frm] + size[to]
                eff[survivor] = eff[frm] + eff[to]
                forced[survivor] = forced[frm] or forced[to]
                xdev[survivor] = xdev[frm] or xdev[to]
                scope[survivor] = scope[frm] if scope[frm] is not None else scope[to]
                device[survivor] = device[frm]
                parent[other] = survivor
                if res_ops and (frm in res_ops or to in res_ops):
                    res_ops[survivor] = res_ops.pop(frm, []) + res_ops.pop(to, [])
                if record:
                    attempts.append(Attempt(phase, frm - base, to - base, True))
                return True
            via = [p - base for p in path if base <= p < base + n]  # (not TF's frame and phantom nodes)
            names = ", ".join(nodes[p].name for p in via) or "a graph input"
            refusal = ("cycle", f"would create a cycle via {names}")
        if record and phase >= 0:
            code, why = refusal
            attempts.append(Attempt(phase, frm - base, to - base, False, why, code,
                                    tuple(p - base for p in (path or ()) if base <= p < base + n)))
        return False

    def for_each_edge(fn, phase: int) -> bool:
        changed = False
        for v in gc.post_order():
            frm = cluster(v)
            if frm is None:
                continue
            for w in list(gc.out[frm]):
                to = cluster(w)
                frm = cluster(v)
                if to is None or to == frm:
                    continue
                if fn(frm, to):
                    changed |= try_contract(frm, to, phase)
        return changed

    for_each_edge(lambda f, t: lone(t) == "shape", 0)
    no_from = tf.no_phase1_from if tf is not None else None
    for_each_edge(lambda f, t: lone(t) != "noop" and not (no_from and size[f] == 1 and no_from[f - base]), 1)
    for_each_edge(lambda f, t: True, 2)
    if for_each_edge(lambda f, t: True, -1):
        raise XcvizError("edge contraction is not idempotent (a bug in xcviz)", code=1)

    members: dict[int, list[int]] = {}
    for j in range(n):
        if ok[j]:
            members.setdefault(find(base + j), []).append(j)
    groups = [(m, eff[r], forced[r]) for r, m in members.items()]
    return finish(opts, graph, cands, groups, attempts)


def _in(node, group: str) -> bool:
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    return opdef is not None and group in opdef.groups


def _insert_edges(graph, gc, base: int, has_out: list) -> None:
    """The cycle graph of a generic graph: every data and control edge, then TF's source/sink fixups."""
    n = len(graph.nodes)
    nodes = graph.nodes
    idx = graph.index
    has_in = [False] * (base + n)
    for j, node in enumerate(nodes):
        dst = base + j
        for s in graph.input_sources(j):  # (a node's position, n + i for graph input i, -1 absent)
            if s < 0:
                continue
            src = base + s if s < n else 2 + s - n
            gc.insert_edge(src, dst)
            has_out[src] = has_in[dst] = True
        for ref in node.control_inputs:
            src = base + idx[ref]
            gc.insert_edge(src, dst)
            has_out[src] = has_in[dst] = True
    for v in range(2, base + n):         # FixupSourceAndSinkEdges, in node-id order
        if not has_in[v]:
            gc.insert_edge(SOURCE, v)
        if not has_out[v]:
            gc.insert_edge(v, SINK)

