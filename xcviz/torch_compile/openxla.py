"""The openxla backend's own partition of a captured graph, beside xcviz's clusters: torch_xla's dynamo bridge
runs torch.fx's CapabilityBasedPartitioner (allows_single_node_partition=True) with every aten call it lowers
supported; xcviz follows TensorFlow's support set and rules. Compared where the two support sets differ."""
from __future__ import annotations

import operator

from .openxla_ops import LOWERED


def openxla_supported(target) -> tuple[bool, str]:
    """(supported, why): lowered by torch_xla (name or name.overload in its list), or CompositeImplicitAutograd
    (decomposed into other aten ops before XLA sees it, as the backend's aot_autograd does)."""
    if target is operator.getitem:
        return True, "getitem (always with its producer)"
    schema = getattr(target, "_schema", None)
    if schema is None:
        return False, "not an aten op"
    base = schema.name.split("::")[-1]
    overload = getattr(target, "_overloadname", "default")
    if (base if overload == "default" else f"{base}.{overload}") in LOWERED or (overload == "default" and base in LOWERED):
        return True, "lowered by torch_xla"
    if base.endswith("_") and base[:-1] in LOWERED | {n.split(".")[0] for n in LOWERED}:
        return True, "lowered by torch_xla (functionalized in-place op)"
    try:
        import torch

        if torch._C._dispatch_has_kernel_for_dispatch_key(target.name(), "CompositeImplicitAutograd"):
            return True, "decomposed before XLA (CompositeImplicitAutograd)"
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
    return {"partitioner": "torch.fx CapabilityBasedPartitioner (allows_single_node_partition=True), torch_xla's support",
            "partitions": [{"id": f"xla_{k}", "nodes": p} for k, p in enumerate(partitions)],
            "support_differs": differs}
