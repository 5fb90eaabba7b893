"""The clustering as a TensorFlow GraphDef with `_XlaCluster` on cluster members (TensorBoard: Color by XLA Cluster)."""
from __future__ import annotations

import os

import numpy as np

from ..errors import XcvizError

CLUSTER_ATTR = "_XlaCluster"
_TF_SOURCES = (".pb", ".pbtxt", ".pbtext")


def cluster_names(analysis) -> dict[str, str]:
    """Node name -> `cluster_<i>` for every member of a kept cluster (clusters in xcviz's order)."""
    nodes = analysis.graph.nodes
    return {nodes[j].name: f"cluster_{i}" for i, members in enumerate(analysis.clustering.clusters) for j in members}


def graph_def_of(analysis):
    """A GraphDef message: the TensorFlow file itself when the graph came from one (every attribute kept),
    else one NodeDef per node and graph input; `_XlaCluster` set on members, removed from the rest."""
    from ..loaders.tensorflow.protos import message_classes

    graph = analysis.graph
    source = graph.source or ""
    graph_def = None
    if source.endswith(_TF_SOURCES) and os.path.isfile(source):
        from ..loaders.tensorflow import read_graphdef

        with open(source, "rb") as f:
            data = f.read()
        if data[:1] == b"\x0a" or source.endswith(("txt", "text")):
            graph_def = read_graphdef(source, data, data[:1] != b"\x0a")
            if {nd.name for nd in graph_def.node} < {n.name for n in graph.nodes}:
                graph_def = None  # (the graph is not that file's nodes)
    if graph_def is None:
        graph_def = _synthesised(graph, message_classes())
    names = cluster_names(analysis)
    for nd in graph_def.node:
        if CLUSTER_ATTR in nd.attr:
            del nd.attr[CLUSTER_ATTR]
        if nd.name in names:
            nd.attr[CLUSTER_ATTR].s = names[nd.name].encode()
    return graph_def


def _synthesised(graph, classes):
    from ..loaders.tensorflow.attrs import tf_dtype_enum

    gd = classes["GraphDef"]()
    for v in graph.inputs:
        nd = gd.node.add(name=v.name, op="Placeholder")
        if v.type.dtype:
            nd.attr["dtype"].type = tf_dtype_enum(v.type.dtype)
    for node in graph.nodes:
        op = node.op_type[3:] if node.op_type.startswith("tf.") else node.op_type
        nd = gd.node.add(name=node.name, op=op, device=node.device or "")
        nd.input.extend(r for r in node.inputs if r)
        nd.input.extend(node.attrs.get("_back_edges", ()) if isinstance(node.attrs.get("_back_edges"), list) else ())
        nd.input.extend("^" + c for c in node.control_inputs)
        for key, value in sorted(node.attrs.items()):
            if key != "_back_edges":
                _set_attr(nd.attr[key], value)
        shapes = [t.shape for t in node.outputs]
        if shapes and all(s is not None for s in shapes):
            lst = nd.attr["_output_shapes"].list
            for s in shapes:
                proto = lst.shape.add()
                for d in s:
                    proto.dim.add(size=d if isinstance(d, int) else -1)
    return gd


def _set_attr(attr, value) -> None:
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, (int, np.integer)):
        attr.i = int(value)
    elif isinstance(value, (float, np.floating)):
        attr.f = float(value)
    elif isinstance(value, str):
        attr.s = value.encode()
    elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        attr.list.i.extend(int(v) for v in value)
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        attr.list.s.extend(v.encode() for v in value)
    else:  # tensors and nested values: their text, so the attribute still says what it was
        attr.s = str(value).encode()[:1000]


def write_graphdef(analysis, path: str) -> None:
    """`.pbtxt`/`.pbtext`: protobuf text form; anything else: binary."""
    from google.protobuf import text_format

    graph_def = graph_def_of(analysis)
    try:
        if path.endswith((".pbtxt", ".pbtext")):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text_format.MessageToString(graph_def))
        else:
            with open(path, "wb") as f:
                f.write(graph_def.SerializeToString(deterministic=True))
    except OSError as e:
        raise XcvizError(f"cannot write {path}: {e.strerror}", where=path, hint="check the folder exists and is writable") from None
