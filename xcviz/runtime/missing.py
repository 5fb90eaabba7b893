"""The ops a graph cannot execute at all: found before anything runs, and refused in one line listing them all."""
from __future__ import annotations

from ..ir import Graph
from ..ops.arrays import Unsupported


def cannot_execute(graph: Graph) -> dict[str, tuple[int, str, str]]:
    """op_type -> (count, first node's name, why) for every node xcviz has no implementation for at all."""
    from ..ops import REGISTRY

    found: dict[str, tuple[int, str, str]] = {}
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        refuses = getattr(opdef.impl, "refuses", None) if opdef is not None else None
        if opdef is None or opdef.impl is None or refuses:
            why = node.note or refuses or ("unknown op" if opdef is None else "no implementation in xcviz yet")
            n, first, _ = found.get(node.op_type, (0, node.name, why))
            found[node.op_type] = (n + 1, first, why)
    return found


def missing_text(found: dict[str, tuple[int, str, str]]) -> str:
    """'Range ×1 (node '/Range'), Trilu ×2 (node 't')': every op, most frequent first."""
    items = sorted(found.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return ", ".join(f"{op} ×{n} (node {first!r}: {why})" for op, (n, first, why) in items)


def preflight(graph: Graph) -> None:
    """Refuse at once, in one line, a graph with ops xcviz cannot execute: all of them, counted."""
    found = cannot_execute(graph)
    if found:
        total = sum(n for n, _, _ in found.values())
        raise Unsupported(f"cannot execute {total} node(s) of {len(found)} op(s): {missing_text(found)}",
                         where=graph.source or graph.name,
                         hint="`xcviz cluster` and `xcviz validate` still work on the rest of the graph")
