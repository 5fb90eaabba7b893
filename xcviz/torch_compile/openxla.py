"""The openxla backend's own partition of a captured graph, beside xcviz's clusters: torch_xla's dynamo bridge
runs torch.fx's CapabilityBasedPartitioner (allows_single_node_partition=True) with every aten call it lowers
supported; xcviz follows TensorFlow's support set and rules. Compared where the two support sets differ."""
from __future__ import annotations

import operator

from .openxla_ops import FACTORIES, LOWERED


def _lowered(base: str, overload: str) -> str | None:
    """The entry of torch_xla's list that lowers `base.overload`, or None."""
    for name in (f"{base}.{overload}",) + ((base,) if overload == "default" else ()):
        if name in LOWERED:
            return name
    return None


def openxla_supported(target) -> tuple[bool, str]:
    """(supported, why), in the order torch_xla's bridge meets an op: lowered as it is; an in-place op through its
    functional twin and a view through its `_copy` twin (its functionalization rewrites both); a function that
    torch runs through its `out=` kernel (`arange` -> `arange.start_out`); a factory torch composes of lowered
    ops; CompositeImplicitAutograd (decomposed before XLA sees it, as the backend's aot_autograd does); another
    CompositeExplicitAutograd op (its kernel, registered for every backend, calls other aten ops: batch norm's
    `_native_batch_norm_legit_no_training` calls `_native_batch_norm_legit`)."""
    if target is operator.getitem:
        return True, "getitem (always with its producer)"
    schema = getattr(target, "_schema", None)
    if schema is None:
        return False, "not an aten op"
    base = schema.name.split("::")[-1]
    overload = getattr(target, "_overloadname", "default")
    if _lowered(base, overload):
        return True, "lowered by torch_xla"
    if base.endswith("_") and not base.startswith("_") and _lowered(base[:-1], overload):
        return True, f"lowered by torch_xla as {_lowered(base[:-1], overload)} (functionalized in-place op)"
    if _lowered(f"{base}_copy", overload):
        return True, f"lowered by torch_xla as {_lowered(base + '_copy', overload)} (a view, functionalized)"
    outs = sorted(n for n in LOWERED if n.startswith(base + ".") and n.rpartition(".")[2].endswith("out"))
    if outs:
        return True, f"lowered by torch_xla as {outs[0]} (torch runs it through its out= kernel)"
    if base in FACTORIES:
        return True, f"a factory torch composes of torch_xla's {FACTORIES[base]}"
    try:
        import torch

        if torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeImplicitAutograd"):
            return True, "decomposed before XLA (CompositeImplicitAutograd)"
        if torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeExplicitAutograd"):
            return True, ("a composite torch runs on every backend as the aten ops its kernel calls "
                          "(CompositeExplicitAutograd)")
    except Exception:  # noqa: BLE001 - an op torch cannot look up: not known to be supported
        pass
    return False, "no torch_xla lowering (runs through its CPU fallback)"


def compare_openxla(captured, clustering) -> dict:
    """The openxla partitions, and each aten call where the two support sets disagree with both verdicts."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    ep, graph = captured.program, captured.graph
    index = graph.index

    class XlaSupport(OperatorSupport):
        def is_node_supported(self, submodules, node) -> bool:
            return node.op == "call_function" and openxla_supported(node.target)[0]

    gm = ep.graph_module
    order = {n.name: k for k, n in enumerate(gm.graph.nodes)}
    parts = CapabilityBasedPartitioner(gm, XlaSupport(), allows_single_node_partition=True).propose_partitions()
    partitions = sorted((sorted((n.name for n in p.nodes), key=order.__getitem__) for p in parts),
                        key=lambda names: order[names[0]])
    differs = []
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target is operator.getitem or n.name not in index:
            continue
        ok, why = openxla_supported(n.target)
        j = index[n.name]
        cand = bool(clustering.candidate[j])
        if ok != cand:
            differs.append({"node": n.name, "op": captured.aten.get(n.name, n.name), "openxla": ok, "openxla_why": why,
                            "xcviz": cand, "xcviz_why": "candidate" if cand else (clustering.reason[j] or "")})
    by_op: dict[tuple, dict] = {}
    for d in differs:   # each op once, with its count and nodes (the table and the page print these)
        key = (d["op"], d["openxla"], d["openxla_why"], d["xcviz"], d["xcviz_why"])
        row = by_op.setdefault(key, {"op": d["op"], "count": 0, "openxla": d["openxla"], "openxla_why": d["openxla_why"],
                                     "xcviz": d["xcviz"], "xcviz_why": d["xcviz_why"], "nodes": []})
        row["count"] += 1
        row["nodes"].append(d["node"])
    return {"partitioner": "torch.fx CapabilityBasedPartitioner (allows_single_node_partition=True), torch_xla's support",
            "partitions": [{"id": f"xla_{k}", "nodes": p} for k, p in enumerate(partitions)],
            "support_differs": differs, "support_differs_ops": sorted(by_op.values(), key=lambda r: r["op"])}
