"""Two partitions compared: metric deltas, clusters matched by member overlap, moved nodes and why, adjusted Rand index."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..render.report_json import DIFF_METRICS as METRICS
from ..render.report_json import SCHEMA_VERSION, options_info, stats_dict

KINDS = ("same", "grown", "shrunk", "split", "merged", "new", "gone")


@dataclass
class Side:
    """One side of a diff: what a clustering decided, by node name (from an analysis or a JSON report)."""

    label: str                      # the file, or the options that differ
    options: dict
    stats: dict
    cluster_of: dict[str, str | None]   # node name -> cluster id (None: falls back)
    op: dict[str, str]
    reason: dict[str, str | None]
    clusters: dict[str, list[str]]      # cluster id -> member names, in the side's order
    decisions: Callable[[list[str]], dict[str, str]] | None = field(default=None, repr=False)


def side_from_analysis(label: str, graph, clustering, stats) -> Side:
    """A side from an analysed graph; its decisions come from the clustering's attempt log."""
    names = [n.name for n in graph.nodes]
    ids = [clustering.cluster_id(k) for k in range(len(clustering.clusters))]
    cluster_of = {nm: (ids[k] if k >= 0 else None) for nm, k in zip(names, clustering.cluster_of)}
    reason = {nm: (r if k < 0 else None) for nm, k, r in zip(names, clustering.cluster_of, clustering.reason)}
    s = stats_dict(stats)
    s.setdefault("parameter_bytes", getattr(stats, "parameter_bytes", None))
    return Side(label, options_info(clustering, stats.hardware), s, cluster_of, {n.name: n.op_type for n in graph.nodes},
                reason, {ids[k]: [names[v] for v in m] for k, m in enumerate(clustering.clusters)},
                lambda moved: decisions(names, clustering, moved))


def side_from_report(label: str, report: dict) -> Side:
    """A side from a `cluster --json` report (no attempt log: a node's decision is its cluster or reason)."""
    nodes = report["nodes"]
    stats = dict(report["stats"])
    stats.setdefault("parameter_bytes", None)
    return Side(label, report.get("options", {}), stats, {n: d.get("cluster") for n, d in nodes.items()},
                {n: d.get("op_type") or d.get("op") or "" for n, d in nodes.items()},
                {n: d.get("reason") for n, d in nodes.items()}, {c["id"]: list(c["nodes"]) for c in report["clusters"]})


def decisions(names: list[str], clustering, wanted: list[str]) -> dict[str, str]:
    """For each wanted node, the decision that placed it: the merge that first took it in (with both sides
    as they were then), or, when it falls back, its reason. One pass over the attempt log."""
    index = {nm: i for i, nm in enumerate(names)}
    want = {index[w] for w in wanted if w in index}
    parent = list(range(len(names)))
    members: dict[int, list[int]] = {}
    joined: dict[int, str] = {}

    def find(v: int) -> int:
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    def group(r: int) -> str:
        m = sorted(members.get(r, [r]))
        shown = ", ".join(names[v] for v in m[:3]) + (f", … {len(m) - 3} more" if len(m) > 3 else "")
        return shown if len(m) == 1 else "{" + shown + "}"

    from ..clustering.result import PHASE_NAMES

    for k, (src, dst, merged) in enumerate(zip(*clustering.attempt_columns())):
        if not merged:
            continue
        ra, rb = find(src), find(dst)
        if ra == rb:
            continue
        for r in (ra, rb):  # a node is first merged while it is alone, so it is one of the two roots
            if r in want and r not in members and r not in joined:
                phase = clustering.attempts[k].phase
                joined[r] = f"merged {group(ra)} → {group(rb)} ({PHASE_NAMES.get(phase, phase)})"
        parent[rb] = ra
        members[ra] = members.get(ra, [ra]) + members.pop(rb, [rb])
    out = {}
    for i in want:
        k = clustering.cluster_of[i]
        if k < 0:
            out[names[i]] = f"falls back: {clustering.reason[i] or 'not clustered'}"
        else:
            how = joined.get(i, "kept alone")
            out[names[i]] = f"in {clustering.cluster_id(k)}: {how}"
    return out


def adjusted_rand_index(a: list, b: list) -> float:
    """ARI of two labelings of the same items (None = a singleton of its own): 1 for equal partitions."""
    from collections import Counter

    n = len(a)
    if n < 2:
        return 1.0
    la = [x if x is not None else ("solo", i) for i, x in enumerate(a)]
    lb = [x if x is not None else ("solo", i) for i, x in enumerate(b)]

    def pairs(counts) -> int:
        return sum(c * (c - 1) // 2 for c in counts)

    sum_ij = pairs(Counter(zip(la, lb)).values())
    sum_a, sum_b = pairs(Counter(la).values()), pairs(Counter(lb).values())
    total = n * (n - 1) // 2
    expected = sum_a * sum_b / total
    top = (sum_a + sum_b) / 2
    if top == expected:  # both partitions trivial in the same way (all singletons, or one block)
        return 1.0 if sum_a == sum_b == sum_ij else 0.0
    return (sum_ij - expected) / (top - expected)


def match_clusters(a: Side, b: Side) -> list[dict]:
    """Clusters grouped into connected components of 'shares a node'; each component labelled by its shape."""
    parent: dict[tuple, tuple] = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for cid in a.clusters:
        find(("a", cid))
    for cid in b.clusters:
        find(("b", cid))
    for node, ca in a.cluster_of.items():
        cb = b.cluster_of.get(node)
        if ca is not None and cb is not None:
            parent[find(("b", cb))] = find(("a", ca))
    comps: dict[tuple, tuple[list, list]] = {}
    for key in parent:
        side, cid = key
        comps.setdefault(find(key), ([], []))[0 if side == "a" else 1].append(cid)
    out = []
    order_a = {c: i for i, c in enumerate(a.clusters)}
    order_b = {c: i for i, c in enumerate(b.clusters)}
    for ca, cb in comps.values():
        ca.sort(key=order_a.get)
        cb.sort(key=order_b.get)
        out.append({"kind": _kind(a, b, ca, cb), "a": ca, "b": cb})
    out.sort(key=lambda e: (order_a[e["a"][0]] if e["a"] else len(order_a), order_b[e["b"][0]] if e["b"] else -1))
    return _match_by_ops(a, b, out)


def _match_by_ops(a: Side, b: Side, matched: list[dict]) -> list[dict]:
    """Clusters no shared node name matched (two exporters name nodes differently): a gone and a new cluster
    with the same ops (as a multiset) are the same cluster, matched by structure (`"by": "ops"`)."""
    from collections import Counter

    def ops(side: Side, cid: str) -> tuple:
        return tuple(sorted(Counter(side.op.get(n, "") for n in side.clusters[cid]).items()))

    new = {}
    for k, e in enumerate(matched):
        if e["kind"] == "new":
            new.setdefault(ops(b, e["b"][0]), []).append(k)
    drop = set()
    for e in matched:
        if e["kind"] == "gone":
            ks = new.get(ops(a, e["a"][0]))
            if ks:
                k = ks.pop(0)
                e.update(kind="same", b=matched[k]["b"], by="ops")
                drop.add(k)
    return [e for k, e in enumerate(matched) if k not in drop]


def _kind(a: Side, b: Side, ca: list[str], cb: list[str]) -> str:
    if not cb:
        return "gone"
    if not ca:
        return "new"
    if len(ca) > 1 or len(cb) > 1:
        return "merged" if len(ca) >= len(cb) else "split"  # many to many: named by the side with more
    ma, mb = set(a.clusters[ca[0]]), set(b.clusters[cb[0]])
    if ma == mb:
        return "same"
    # members gained and lost: the net size decides (equal sizes count as grown: B took new members)
    return "grown" if ma < mb or (not mb < ma and len(mb) >= len(ma)) else "shrunk"


def moved_nodes(a: Side, b: Side) -> list[dict]:
    """Nodes of both sides whose cluster is not the one matched to their old cluster (largest overlaps
    first, one to one); a node falling back on one side only moved as well."""
    from collections import Counter

    overlap = Counter((ca, b.cluster_of[n]) for n, ca in a.cluster_of.items()
                      if ca is not None and b.cluster_of.get(n) is not None)
    pair: dict[str, str] = {}
    used: set[str] = set()
    for (ca, cb), _ in sorted(overlap.items(), key=lambda t: (-t[1], t[0])):
        if ca not in pair and cb not in used:
            pair[ca] = cb
            used.add(cb)
    moved = []
    for node, ca in a.cluster_of.items():
        if node not in b.cluster_of:
            continue
        cb = b.cluster_of[node]
        if (ca is None and cb is None) or (ca is not None and pair.get(ca) == cb):
            continue
        moved.append({"node": node, "op": b.op.get(node, ""), "a": ca, "b": cb})
    if b.decisions is not None:
        why = b.decisions([m["node"] for m in moved])
    else:
        why = {m["node"]: (f"in {m['b']}" if m["b"] else f"falls back: {b.reason.get(m['node']) or 'not clustered'}")
               for m in moved}
    for m in moved:
        m["b_decision"] = why.get(m["node"])
    return moved


def _delta(x, y):
    if x is None or y is None or isinstance(x, str) or isinstance(y, str):
        return None
    return round(y - x, 6)


def diff_report(a: Side, b: Side) -> dict:
    """The diff as data (the `--json` output; docs/json-schema.md)."""
    common = [n for n in a.cluster_of if n in b.cluster_of]
    clusters = match_clusters(a, b)
    moved = moved_nodes(a, b)
    only_a = [n for n in a.cluster_of if n not in b.cluster_of]
    only_b = [n for n in b.cluster_of if n not in a.cluster_of]
    delta = {key: _delta(a.stats.get(key), b.stats.get(key)) for key, _ in METRICS}
    ari = round(adjusted_rand_index([a.cluster_of[n] for n in common], [b.cluster_of[n] for n in common]), 6)
    same = (not moved and not only_a and not only_b and all(c["kind"] == "same" for c in clusters)
            and all(a.stats.get(k) == b.stats.get(k) for k, _ in METRICS))
    return {
        "schema_version": SCHEMA_VERSION,
        "a": {"label": a.label, "options": a.options, "stats": a.stats},
        "b": {"label": b.label, "options": b.options, "stats": b.stats},
        "delta": delta, "ari": ari, "same": same,
        # the nodes both sides name: the ARI and the matches by name are over these alone
        "common_nodes": len(common),
        "clusters": clusters, "moved": moved,
        "nodes_only_in_a": only_a, "nodes_only_in_b": only_b,
    }


def differs(report: dict) -> bool:
    return not report["same"]
