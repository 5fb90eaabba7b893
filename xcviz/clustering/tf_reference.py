"""A reference partition carried by the graph itself (TF's `_XlaCluster` attributes), compared with xcviz's."""
from __future__ import annotations

REFERENCE_ATTR = "_XlaCluster"


def reference_partition(graph) -> list[list[int]] | None:
    """Node positions grouped by their `_XlaCluster` value; None when no node carries one."""
    groups: dict[str, list[int]] = {}
    for j, node in enumerate(graph.nodes):
        name = node.attrs.get(REFERENCE_ATTR) if node.attrs else None
        if isinstance(name, str) and name:
            groups.setdefault(name, []).append(j)
    return [groups[k] for k in sorted(groups)] if groups else None


def compare_with_reference(graph, clustering) -> dict | None:
    """{source, identical, differing_nodes}: the nodes whose fellow members differ between the partitions
    (membership only: TF's cluster numbers are a process-wide counter)."""
    ref = reference_partition(graph)
    if ref is None:
        return None
    mates_ref: dict[int, frozenset] = {j: frozenset(m) for m in ref for j in m}
    mates_ours: dict[int, frozenset] = {j: frozenset(m) for m in clustering.clusters for j in m}
    differing = sorted(graph.nodes[j].name for j in set(mates_ref) | set(mates_ours)
                       if mates_ref.get(j) != mates_ours.get(j))
    return {"source": f"{REFERENCE_ATTR} attributes in {graph.source or graph.name}", "identical": not differing,
            "differing_nodes": differing}


def reference_line(ref: dict) -> str:
    if ref["identical"]:
        return f"Reference partition ({ref['source']}): identical"
    shown = ", ".join(ref["differing_nodes"][:10]) + (" …" if len(ref["differing_nodes"]) > 10 else "")
    return f"Reference partition ({ref['source']}): differs at {len(ref['differing_nodes'])} nodes: {shown}"
