"""torch.fx's CapabilityBasedPartitioner on an exported program, with the same support set as xcviz's clustering,
and the differences between its partitions and the clusters, each labelled with the rule that causes it."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ..errors import XcvizError

# rule -> what it says; the comparison's every difference names one of these
RULES = {
    "fx-single-node": "FX drops a partition with a single compute node (allows_single_node_partition=false); "
                      "xcviz keeps clusters down to --min-cluster-size",
    "tf-min-cluster-size": "TensorFlow drops a cluster whose effective size is under --min-cluster-size "
                           "(default 4); FX keeps any partition of two or more compute nodes",
    "fx-horizontal-fusion": "FX merges partitions with no path between them (horizontal fusion); TensorFlow "
                            "only contracts edges, so independent nodes stay in separate clusters",
    "tf-phase-order": "TensorFlow contracts edges in phases (phase 1 then 2, each in post-order) and refused a "
                      "merge that FX's reverse-topological greedy made",
    "fx-merge-order": "FX's greedy merge, visiting nodes in reverse topological order, refused a merge that "
                      "TensorFlow's edge contraction made",
    "tf-other": "another TensorFlow clustering rule kept the node out (the detail says which)",
    "fx-getitem": "FX puts getitem nodes into their producer's partition as nodes; xcviz reads a getitem as the "
                  "reference producer:k, not a node",
}
FX_OPTIONS = {"allows_single_node_partition": False, "skip_horizontal_fusion": False}


@dataclass
class Difference:
    rule: str
    nodes: list[str]                 # the FX node names it concerns
    fx: list[str] = field(default_factory=list)     # FX partition ids involved
    xla: list[str] = field(default_factory=list)    # xcviz cluster ids involved
    detail: str = ""


@dataclass
class FxComparison:
    fx_partitions: dict[str, list[str]]   # "fx_0" -> node names in FX order
    clusters: dict[str, list[str]]        # "cluster_0" -> FX node names (xcviz's own consts left out)
    differences: list[Difference]
    options: dict

    @property
    def rules(self) -> set[str]:
        return {d.rule for d in self.differences}


def parse_fx_options(text: str | None) -> dict:
    """`k=v,k=v` for CapabilityBasedPartitioner's boolean options."""
    opts = dict(FX_OPTIONS)
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        key, sep, value = item.partition("=")
        if key not in FX_OPTIONS or not sep or value.lower() not in ("true", "false", "1", "0"):
            raise XcvizError(f"bad --fx-options item {item!r}", hint="write " + ",".join(f"{k}=true|false" for k in FX_OPTIONS))
        opts[key] = value.lower() in ("true", "1")
    return opts


def fx_partitions(ep, graph, clustering, options: dict) -> list[list[str]]:
    """CapabilityBasedPartitioner's partitions (FX node names), a node supported where xcviz finds it a candidate."""
    import operator

    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    index = graph.index
    candidate = clustering.candidate

    class SameSupport(OperatorSupport):
        def is_node_supported(self, submodules, node) -> bool:
            if node.op != "call_function":
                return False
            if node.target is operator.getitem:  # with its producer, as xcviz reads it
                node = node.args[0]
            j = index.get(node.name)
            return j is not None and bool(candidate[j])

    gm = ep.graph_module
    parts = CapabilityBasedPartitioner(gm, SameSupport(), **options).propose_partitions()
    order = {n.name: k for k, n in enumerate(gm.graph.nodes)}
    out = [sorted((n.name for n in p.nodes), key=order.__getitem__) for p in parts]
    return sorted(out, key=lambda names: order[names[0]])


def compare(ep, graph, clustering, options: dict | None = None) -> FxComparison:
    options = {**FX_OPTIONS, **(options or {})}
    fx_names = {n.name for n in ep.graph.nodes if n.op == "call_function"}
    getitems = {n.name for n in ep.graph.nodes if n.op == "call_function" and "getitem" in str(n.target)}
    parts = fx_partitions(ep, graph, clustering, options)
    fx_of = {name: f"fx_{k}" for k, names in enumerate(parts) for name in names}
    xla_of: dict[str, str] = {}
    clusters: dict[str, list[str]] = {}
    for k, members in enumerate(clustering.clusters):
        cid = clustering.cluster_id(k)
        names = [graph.nodes[j].name for j in members if graph.nodes[j].name in fx_names]
        clusters[cid] = names
        xla_of.update(dict.fromkeys(names, cid))
    diffs: list[Difference] = []
    compute = [n for n in graph.nodes if n.name in fx_names]
    only_fx = [n.name for n in compute if n.name in fx_of and n.name not in xla_of]
    only_xla = [n.name for n in compute if n.name in xla_of and n.name not in fx_of]
    if only_fx:
        codes = {n: clustering.code[graph.index[n]] for n in only_fx}
        small = [n for n in only_fx if codes[n] == "min-size"]
        if small:
            diffs.append(Difference("tf-min-cluster-size", small, _ids(small, fx_of)))
        for n in only_fx:
            if codes[n] != "min-size":
                diffs.append(Difference("tf-other", [n], _ids([n], fx_of), detail=clustering.reason[graph.index[n]] or ""))
    if only_xla:
        diffs.append(Difference("fx-single-node", only_xla, xla=_ids(only_xla, xla_of)))
    diffs += _split_groups(graph, parts, fx_of, xla_of, clusters)
    items = sorted(getitems & set(fx_of))
    if items:
        diffs.append(Difference("fx-getitem", items, _ids(items, fx_of)))
    fx_parts = {f"fx_{k}": names for k, names in enumerate(parts)}
    return FxComparison(fx_parts, clusters, diffs, options)


def _ids(names, of: dict) -> list[str]:
    return sorted({of[n] for n in names}, key=lambda s: int(s.rpartition("_")[2]))


def _split_groups(graph, parts, fx_of, xla_of, clusters) -> list[Difference]:
    """An FX partition over several clusters (horizontal fusion, or a merge TF refused), and a cluster over
    several FX partitions (a merge FX refused)."""
    out, users = [], None
    for k, names in enumerate(parts):
        cids = sorted({xla_of[n] for n in names if n in xla_of})
        if len(cids) < 2:
            continue
        users = users or _users(graph)
        independent = all(not _connected(users, clusters[a], clusters[b]) for i, a in enumerate(cids) for b in cids[i + 1:])
        rule = "fx-horizontal-fusion" if independent else "tf-phase-order"
        out.append(Difference(rule, [n for n in names if n in xla_of], [f"fx_{k}"], cids))
    for cid, names in clusters.items():
        fids = sorted({fx_of[n] for n in names if n in fx_of}, key=lambda s: int(s[3:]))
        if len(fids) >= 2:
            out.append(Difference("fx-merge-order", [n for n in names if n in fx_of], fids, [cid]))
    return out


def _users(graph) -> dict[str, list[str]]:
    users: dict[str, list[str]] = {}
    for j, n in enumerate(graph.nodes):
        for ref in graph.input_refs(j):
            users.setdefault(ref.node if ref is not None else "", []).append(n.name)
    return users


def _connected(users, a: list[str], b: list[str]) -> bool:
    """A path from one group to the other, either way."""
    return _reaches(users, a, set(b)) or _reaches(users, b, set(a))


def _reaches(users, start: list[str], targets: set[str]) -> bool:
    seen, todo = set(start), deque(start)
    while todo:
        for u in users.get(todo.popleft(), ()):
            if u in targets:
                return True
            if u not in seen:
                seen.add(u)
                todo.append(u)
    return False
