"""Control-flow bodies on screen and in JSON: each Loop/If/Scan body's clusters, nested under its node."""
from __future__ import annotations

from ..clustering.bodies import BodyClustering


def bodies_of(graph, clustering, node: str | None = None) -> list[BodyClustering]:
    """The bodies of every control-flow node (or only `node`'s), as the clustering pass clustered them."""
    return [b for b in clustering.bodies if node is None or b.node == node]


def _ops(g, members: list[int]) -> str:
    ops = list(dict.fromkeys(g.nodes[i].op for i in members))
    return " ".join(ops[:8]) + (f" +{len(ops) - 8}" if len(ops) > 8 else "")


def summary(b: BodyClustering) -> str:
    """'Loop 'loop0' body: 1 cluster, 12/12 ops' (its own clusters: they apply when its node runs natively),
    or 'Loop 'loop0' body: 12 ops; compiled whole inside cluster_0 (an XLA While)'."""
    if b.compiled_in:
        n = len(b.graph.nodes)
        return f"{b.label}: {n} op{'s' if n != 1 else ''}; {b.compiled_note}"
    n = len(b.clustering.clusters)
    return f"{b.label}: {n} cluster{'s' if n != 1 else ''}, {b.clustered}/{len(b.graph.nodes)} ops"


def body_lines(bodies: list[BodyClustering], indent: int = 0) -> list[str]:
    """'Loop 'loop0' body: 1 cluster, 12/12 ops', then one line per cluster and per fallback op, nested bodies
    indented under the node that holds them."""
    lines: list[str] = []
    pad = "  " * indent
    for b in bodies:
        c, g = b.clustering, b.graph
        lines.append(f"{pad}{summary(b)}")
        if b.compiled_in:  # it runs inside its node's cluster: its own clusters and fallbacks do not apply
            lines += body_lines(b.children, indent + 1)
            continue
        for k, members in enumerate(c.clusters):
            names = [g.nodes[i].name for i in members]
            shown = ", ".join(names[:4]) + (f", ... {len(names) - 4} more" if len(names) > 4 else "")
            lines.append(f"{pad}  {c.cluster_id(k)}  {len(members)} ops: {_ops(g, members)}  ({shown})")
        for i, node in enumerate(g.nodes):
            if c.cluster_of[i] < 0:
                lines.append(f"{pad}  fallback {node.name} ({node.op_type}): {c.reason[i]}")
        lines += body_lines(b.children, indent + 1)
    return lines


def bodies_json(bodies: list[BodyClustering]) -> dict:
    """{control-flow node: [one entry per body]}: its clusters by node name, its fallbacks, nested bodies."""
    out: dict[str, list] = {}
    for b in bodies:
        c, g = b.clustering, b.graph
        out.setdefault(b.node, []).append({
            "attribute": b.attr, "op_type": b.op_type, "graph": g.name, "nodes": len(g.nodes),
            "clustered_nodes": b.clustered, "compiled_in": b.compiled_in,
            "clusters": [{"id": c.cluster_id(k), "nodes": [g.nodes[i].name for i in m],
                          "ops": [g.nodes[i].op for i in m]} for k, m in enumerate(c.clusters)],
            "fallback": [{"node": nd.name, "op_type": nd.op_type, "reason": c.reason[i], "reason_code": c.code[i]}
                         for i, nd in enumerate(g.nodes) if c.cluster_of[i] < 0],
            "bodies": bodies_json(b.children),
        })
    return out


def body_section(graph, clustering) -> list:
    """`cluster`'s table section: a heading and the nested lines, or nothing when the graph has no bodies."""
    bodies = bodies_of(graph, clustering)
    if not bodies:
        return []
    from rich.text import Text

    return [Text(""), Text("Control-flow bodies", style="bold"), *(Text(line) for line in body_lines(bodies))]


def bodies_key(graph, clustering) -> dict:
    """The JSON report's `bodies` key, present only when the graph has control-flow nodes with bodies."""
    bodies = bodies_of(graph, clustering)
    return {"bodies": bodies_json(bodies)} if bodies else {}
