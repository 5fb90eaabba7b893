"""Decompositions for live torch.export programs: the aten ops outside xcviz's table, and only those, rewritten
by torch's default decomposition table (ExportedProgram.run_decompositions)."""
from __future__ import annotations


def _unknown(ep) -> set:
    """The aten overloads of the program outside xcviz's op table."""
    from ..ops.aten import ADAPTERS

    out = set()
    for n in ep.graph.nodes:
        schema = getattr(n.target, "_schema", None) if n.op == "call_function" else None
        if schema is not None and schema.name.startswith("aten::") and schema.name[6:] not in ADAPTERS:
            out.add(n.target)
    return out


def decompose_unknown(ep):
    """ep with every aten op outside xcviz's table decomposed by torch's default table (run_decompositions),
    the ops xcviz has rows for kept as they are; ep itself when there is none, or torch cannot decompose them."""
    unknown = _unknown(ep)
    if not unknown:
        return ep
    import torch

    table = torch.export.default_decompositions()
    if not any(o in table for o in unknown):
        return ep
    from ..ops.aten import ADAPTERS

    for o in list(table.keys()):
        if o not in unknown and o.name().split("::")[-1].split(".")[0] in ADAPTERS:
            del table[o]  # (xcviz runs it as it is: one row, not its decomposition)
    try:
        return ep.run_decompositions(table)
    except Exception:  # noqa: BLE001 - a decomposition torch cannot trace leaves those ops unknown, said per node
        return ep
