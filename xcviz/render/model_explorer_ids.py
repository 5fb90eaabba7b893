"""The node ids Model Explorer gives a graph, per xcviz node, so overlays land on the right nodes.

Model Explorer's ONNX adapter (model-explorer-onnx) runs onnx_ir's NameFixPass before it builds the graph: an
unnamed node becomes `node`, `node_1`, `node_2`, ... and a repeated name `n`, `n_1`, ... in file order, with
one counter shared with the nodes of If/Loop bodies (visited right after their node, each body with its own
set of used names). xcviz's ONNX loader names an unnamed node `{op_type}_{i}` instead. Reading the file's
node list again maps one naming onto the other. Its ExportedProgram adapter (.pt2) names a node by its fx
name, as xcviz's torch loader does; nodes the loader adds (`<name>_const`) have no id there (None). For any
other format the id is xcviz's node name (the ids write_graph_json uses)."""
from __future__ import annotations

import collections
import os


def _fix_names(graph, counter: collections.Counter, used: set[str]) -> list[str]:
    """NameFixPass's node names for `graph`'s own nodes (bodies are named too, for the shared counter)."""
    from onnx import AttributeProto

    out = []
    for n in graph.node:
        if n.name and n.name not in used:
            name = n.name
        else:
            preferred = n.name or "node"
            name = preferred
            while name in used:
                counter[preferred] += 1
                name = f"{preferred}_{counter[preferred]}"
        used.add(name)
        out.append(name)
        for attr in n.attribute:
            bodies = [attr.g] if attr.type == AttributeProto.GRAPH else list(attr.graphs) \
                if attr.type == AttributeProto.GRAPHS else []
            for body in bodies:
                _fix_names(body, counter, set())
    return out


def onnx_ids(source: str) -> dict[str, str]:
    """{xcviz node name: Model Explorer node id} for the main graph of the .onnx file at `source`."""
    import onnx

    model = onnx.load(source, load_external_data=False)
    me_names = _fix_names(model.graph, collections.Counter(), set())
    ids, names = {}, set()
    for i, (n, me) in enumerate(zip(model.graph.node, me_names)):
        base = n.name or f"{n.op_type}_{i}"    # as loaders/onnx_model.py names it
        name, k = base, 1
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.add(name)
        ids[name] = me
    return ids


def fx_names(source: str, trust_pickle: bool = False, limits=None) -> set[str]:
    """The fx node names of the torch.export program at `source` (the ExportedProgram adapter's ids), read by
    xcviz's own reader (torch.export.load, which unpickles, only with the user's `trust_pickle`)."""
    from ..loaders.torch_export import program_for_graph

    return {n.name for n in program_for_graph(source, trust_pickle, limits).graph.nodes}


def me_node_ids(graph, source: str | None, reader=None) -> list[str | None]:
    """Model Explorer's id of each node of `graph` (in xcviz's node order); None: Model Explorer has no such node."""
    names = [nd.name for nd in graph.nodes]
    suffix = str(source or "").lower()
    if suffix.endswith(".onnx") and os.path.isfile(source):
        mapping = onnx_ids(str(source))
        return [mapping.get(name, name) for name in names]
    if suffix.endswith(".pt2") and os.path.isfile(source):
        known = fx_names(str(source), *(reader or ()))
        return [name if name in known else None for name in names]
    return names
