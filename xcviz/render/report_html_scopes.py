"""The report's scope view: the model's own hierarchy (ir/scopes.py) as the page's data, no layout here.

Each scope becomes one record with what the first view paints on its box: ops, clustered ops (coverage),
clusters touched, fallbacks and the boundary bytes of the edges that cross a cluster boundary at one of
its ops. The page lays out the scope a user opens (children and direct ops) with its vendored dagre, so the
cost of a report no longer grows with a whole-graph Graphviz layout.

A scope with more than MAX_ITEMS children and direct ops is split, in model order, into parts (virtual
scopes, `v: 1`), so every view the page lays out stays small: a graph without scopes still opens as parts."""
from __future__ import annotations

import math

from ..clustering import Clustering
from ..ir import Graph

MAX_ITEMS = 80     # items one opened view lays out; more become parts
PART = 50          # direct ops per part
MAX_DEPTH = 100    # scope levels drawn; a deeper scope's ops are drawn in its ancestor at this depth


def _tree(graph: Graph):
    from ..ir.scopes import scope_tree

    return scope_tree(graph)


def scope_records(graph: Graph, hidden: frozenset = frozenset()) -> tuple[list[dict], list[int]]:
    """(scope records, the record index of each node). A record: n name, p path, u parent (-1: the root),
    c child records, k direct node indices, v 1 for a part the report made; children in model order.
    `hidden` nodes (a TF model's variables: parameters, not ops) are in no record's k, at their scope's record."""
    recs: list[dict] = []
    where = [0] * len(graph.nodes)
    tree = _tree(graph)
    root = tree.root
    moved = _sources_to_readers(graph, tree)
    shown: set[str] = set()   # scope paths with an op to draw (a scope of variables alone is not drawn)
    if hidden:
        for i, p in enumerate(tree.paths):
            while i not in hidden and p not in shown:
                shown.add(p)
                p = p.rpartition("/")[0] if p else None
                if p is None:
                    break
    def add(name: str, path: str, up: int, virtual: bool = False) -> int:
        rec = {"n": name, "p": path, "u": up, "c": [], "k": []}
        if virtual:
            rec["v"] = 1
        recs.append(rec)
        if up >= 0:
            recs[up]["c"].append(len(recs) - 1)
        return len(recs) - 1

    def place(k: int, items: list) -> None:
        """items (("s", scope) or ("o", node)) under record k; too many become parts, grouped until few enough."""
        if len(items) <= MAX_ITEMS:
            for kind, x in items:
                if kind == "s":
                    build(x, k)
                else:
                    recs[k]["k"].append(x)
                    where[x] = k
            return
        units: list[list] = []      # runs of up to PART direct ops, scopes one by one
        for it in items:
            if it[0] == "o" and units and units[-1][0][0] == "o" and len(units[-1]) < PART:
                units[-1].append(it)
            else:
                units.append([it])
        if len(units) <= MAX_ITEMS:
            for u in units:
                if u[0][0] == "s":
                    build(u[0][1], k)
                else:
                    part = add(_part_name([x for _, x in u]), recs[k]["p"], k, virtual=True)
                    place(part, u)
            return
        size = max(math.ceil(math.sqrt(len(units))), math.ceil(len(units) / MAX_ITEMS))
        for j in range(0, len(units), size):
            group = units[j:j + size]
            label = f"{_item_name(group[0][0])} … {_item_name(group[-1][-1])}"
            place(add(label, recs[k]["p"], k, virtual=True), [it for u in group for it in u])

    names = graph.nodes.column("name")

    def _item_name(it) -> str:
        """A scope's name, or an op's own name (the last level of its path)."""
        return it[1].name if it[0] == "s" else names[it[1]].rpartition("/")[2]

    def build(scope, up: int) -> None:
        k = add(scope.name or "(model)", scope.path or "", up)
        deep = scope.depth >= MAX_DEPTH   # (a file's path of thousands of levels must not exhaust the stack)
        own = list(tree.descendants(scope.path)) if deep else \
            [i for i in scope.nodes if i not in moved] if scope is root else list(scope.nodes)
        own += moved.get(scope.path, [])
        for i in own:
            where[i] = k
        own = [i for i in own if i not in hidden]
        kids = [] if deep else [c for c in scope.children if not hidden or c.path in shown]
        for c in scope.children:
            if hidden and c.path not in shown and not deep:   # its variables still lie somewhere: here
                for i in tree.descendants(c.path):
                    where[i] = k
        items = sorted([(c.first, 0, "s", c) for c in kids] + [(i, 1, "o", i) for i in own],
                       key=lambda x: (x[0], x[1]))
        place(k, [(kind, x) for _, _, kind, x in items])

    build(root, -1)
    return recs, where


def _sources_to_readers(graph: Graph, tree) -> dict:
    """Constants with no scope of their own (torch.export's lifted constants, a loader's materialised ones) are
    drawn in the scope of their readers (the deepest one holding all of them): {node: True, path: [nodes]}."""
    import numpy as np

    cols, n = graph.columns, len(graph.nodes)
    lens = np.asarray(cols.lens)
    loose = [i for i in tree.root.nodes if lens[i] == 0]
    if not loose or not tree.root.children:
        return {}
    want = np.zeros(n + 1, dtype=bool)
    want[loose] = True
    src = np.asarray(cols.src, dtype=np.int64)
    dst = np.repeat(np.arange(n, dtype=np.int64), lens)
    hit = (src >= 0) & (src < n)
    hit[hit] = want[src[hit]]
    readers: dict[int, str] = {}
    for a, b in zip(src[hit].tolist(), dst[hit].tolist()):
        p = tree.paths[b]
        q = readers.get(a)
        readers[a] = p if q is None else _common(p, q)
    out: dict = {}
    for i, p in readers.items():
        if p and p in tree:
            out[i] = True
            out.setdefault(p, []).append(i)
    for p in [k for k in out if isinstance(k, str)]:
        out[p].sort()
    return out


def _common(a: str, b: str) -> str:
    """The deepest scope path both lie under."""
    if a == b or b.startswith(a + "/"):
        return a
    if a.startswith(b + "/"):
        return b
    pa, pb = a.split("/"), b.split("/")
    k = 0
    while k < min(len(pa), len(pb)) and pa[k] == pb[k]:
        k += 1
    return "/".join(pa[:k])


def _part_name(ops: list[int]) -> str:
    return f"ops {ops[0] + 1:,}–{ops[-1] + 1:,}" if len(ops) > 1 else f"op {ops[0] + 1:,}"


def op_edges(graph: Graph, clustering: Clustering, hidden: frozenset = frozenset()) -> list[int]:
    """Every op-to-op edge, flat: [source, target, bytes (-1 unknown), kind, ...]; kind 0 inside a cluster,
    1 across a cluster boundary, 2 between ops that both fall back, 3 control. Graph inputs and parameters
    are not drawn in the scope view (their readers' details list them)."""
    import numpy as np

    cols, n, dims = graph.columns, len(graph.nodes), graph.dims
    dst = np.repeat(np.arange(n, dtype=np.int64), cols.lens)
    src = np.asarray(cols.src, dtype=np.int64)
    port = np.asarray(cols.port, dtype=np.int64)
    keep = (src >= 0) & (src < n)
    if hidden:   # a TF model's variables: parameters, not drawn
        gone = np.zeros(n, dtype=bool)
        gone[list(hidden)] = True
        keep &= ~gone[np.clip(src, 0, n - 1)] & ~gone[dst]
    src, dst, port = src[keep], dst[keep], port[keep]
    key = np.unique((src * n + dst) * 64 + np.minimum(port, 63))   # each (producer, consumer, port) once
    pair, port = key // 64, key % 64
    src, dst = pair // n, pair % n
    rid = np.asarray(cols.rid, dtype=np.int64)[src]
    sizes = np.full(len(src), -1, dtype=np.int64)
    for r, p in set(zip(rid.tolist(), port.tolist())):
        outs = cols.results[r]
        b = outs[p].nbytes(dims) if p < len(outs) else None
        if b is not None:
            sizes[(rid == r) & (port == p)] = b
    group = np.asarray(clustering.cluster_of, dtype=np.int64)
    a, b = group[src], group[dst]
    kind = np.where((a == b) & (a >= 0), 0, np.where((a >= 0) | (b >= 0), 1, 2))
    out = np.stack([src, dst, sizes, kind], axis=1).ravel().tolist()
    index = graph.index
    for j, refs in enumerate(graph.nodes.column("control_inputs")):
        for ref in refs:
            p = index.get(ref)
            if p is not None:
                out += [p, j, -1, 3]
    return out


def scope_view(graph: Graph, clustering: Clustering) -> dict:
    """The scope view's data: {scopes: records with their totals, at: each node's record, edges: op_edges}.
    Totals: o ops, m ops in kept clusters, f fallbacks, g clusters touched, b boundary bytes (edges across a
    cluster boundary with an end inside; unknown sizes count 0), first the first node index."""
    from .params import variable_nodes

    hidden = variable_nodes(graph)
    recs, where = scope_records(graph, hidden)
    edges = op_edges(graph, clustering, hidden)
    group = clustering.cluster_of
    ops, inc, fb = [0] * len(recs), [0] * len(recs), [0] * len(recs)
    touched: list[set] = [set() for _ in recs]
    for i, k in enumerate(where):
        if i in hidden:
            continue
        ops[k] += 1
        if group[i] >= 0:
            inc[k] += 1
            touched[k].add(group[i])
        else:
            fb[k] += 1
    for k in range(len(recs) - 1, 0, -1):   # a child's record comes after its parent's
        u = recs[k]["u"]
        ops[u] += ops[k]
        inc[u] += inc[k]
        fb[u] += fb[k]
        touched[u] |= touched[k]
    boundary = [0] * len(recs)
    for e in range(0, len(edges), 4):
        if edges[e + 3] != 1 or edges[e + 2] <= 0:
            continue
        seen = set()
        for k in (where[edges[e]], where[edges[e + 1]]):
            while k >= 0 and k not in seen:
                seen.add(k)
                boundary[k] += edges[e + 2]
                k = recs[k]["u"]
    for k, r in enumerate(recs):
        r.update(o=ops[k], m=inc[k], f=fb[k], g=len(touched[k]), b=boundary[k])
    _folds(graph, clustering, recs)
    return {"scopes": recs, "at": where, "edges": edges}


def _folds(graph: Graph, clustering: Clustering, recs: list[dict]) -> None:
    """Repeated blocks (ir.scopes.fold_repeats): the first of each gets x (how many), same and differ (record
    indices); the other identical ones h (the first's index), so the page draws them as one box "×N"."""
    from ..ir.scopes import fold_repeats

    by_path = {r["p"]: k for k, r in enumerate(recs) if "v" not in r and r["p"]}
    for f in fold_repeats(_tree(graph), clustering):
        same = [by_path[p] for p in f.same if p in by_path]
        if len(same) < 2:
            continue
        first = recs[same[0]]
        first.update(x=len(same), same=same, differ=[by_path[p] for p in f.differ if p in by_path])
        for k in same[1:]:
            recs[k]["h"] = same[0]


def compact_records(records: list[dict]) -> dict:
    """A big graph's node records without what most nodes share (the page fills it back in): empty attrs and
    parameters, `cand` when true, the most common device, `op` when it is the op type as written. Returns
    the defaults (and `types`: the type texts that inputs and outputs number)."""
    from collections import Counter

    device = Counter(r["d"] for r in records).most_common(1)[0][0] if records else "cpu"
    types: dict[str, int] = {}   # type texts, each once: inputs as [ref, type], outputs as type numbers
    for r in records:
        ins = []
        for x in r["in"]:
            ref, sep, t = x.rpartition(": ")
            ins.append([ref, types.setdefault(t, len(types))] if sep else x)
        r["in"] = ins
        r["out"] = [types.setdefault(t, len(types)) for t in r["out"]]
        if not r["attrs"]:
            del r["attrs"]
        if not r["params"]:
            del r["params"]
        if r["cand"]:
            del r["cand"]
        if r["d"] == device:
            del r["d"]
        if r["op"] == r["t"]:
            del r["op"]
    return {"attrs": [], "params": [], "cand": True, "d": device, "types": list(types)}
