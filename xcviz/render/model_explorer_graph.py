"""Model Explorer's graph JSON (a GraphCollection) for graphs it cannot open itself (xcviz YAML/JSON, TensorFlow).

Clusters are layers (namespaces `cluster_k`, collapsible, in the cluster's colour), fallback nodes sit at the
top level in red, parameters fold into their consumer's attributes, and the boundary edges are an edge
overlay labelled with shape and bytes. Node ids are xcviz's node names, so the node-data overlays of
model_explorer.py apply to this file unchanged."""
from __future__ import annotations

from .dot_parts import FALLBACK_FILL
from .params import is_stored, param_line, param_value, stored_params
from .tables import BOUNDARY, FALLBACK, cluster_color
from .units import fmt_bytes, fmt_speedup


def _kv(key: str, value) -> dict:
    return {"key": key, "value": str(value)}


def graph_json(analysis) -> dict:
    graph, clustering, stats = analysis.graph, analysis.clustering, analysis.stats
    params = stored_params(graph)
    inputs = {v.name: k for k, v in enumerate(graph.inputs)}
    dims = graph.dims
    nodes, boundary = [], []

    def source(ref: str, parsed) -> tuple[str, str, int]:
        """(node id, output id, cluster) of the tensor `ref` (parsed: its ir.Ref)."""
        if ref in inputs:
            return f"input:{ref}", "0", -1
        return parsed.node, str(parsed.index), clustering.cluster_of[graph.position(parsed.node)]

    for k, v in enumerate(graph.inputs):
        if k not in params.inputs:
            t = v.type.bind(dims)
            nodes.append({"id": f"input:{v.name}", "label": "Input", "namespace": "", "attrs": [_kv("name", v.name)],
                          "outputsMetadata": [{"id": "0", "attrs": [_kv("__tensor_tag", v.name), _kv("tensor_shape", t)]}]})
    for j, node in enumerate(graph.nodes):
        k = clustering.cluster_of[j]
        attrs = [_kv("op", node.op), _kv("device", clustering.device[j])]
        if k >= 0:
            attrs.append(_kv("cluster", clustering.cluster_id(k)))
        else:
            attrs += [_kv("fallback", clustering.code[j] or "fallback"), _kv("reason", clustering.reason[j] or "")]
        edges = []
        for pos, (ref, parsed) in enumerate(zip(node.inputs, graph.input_refs(j))):
            if not ref:
                continue
            if is_stored(graph, ref, params, inputs) and ref in inputs:
                attrs.append(_kv(f"param {pos}", param_line(ref, graph.tensor_type(ref).bind(dims), param_value(graph, ref, inputs))))
                continue
            src, out, sk = source(ref, parsed)
            edges.append({"sourceNodeId": src, "sourceNodeOutputId": out, "targetNodeInputId": str(pos)})
            if sk != k and (sk >= 0 or k >= 0):
                t = graph.tensor_type(ref).bind(dims)
                boundary.append({"sourceNodeId": src, "targetNodeId": node.name,
                                 "label": f"{t} · {fmt_bytes(t.nbytes())}"})
        for key in sorted(node.attrs)[:16]:
            attrs.append(_kv(f"attr {key}", str(node.attrs[key])[:200]))
        entry = {"id": node.name, "label": node.op_type, "namespace": clustering.cluster_id(k) if k >= 0 else "",
                 "attrs": attrs, "incomingEdges": edges,
                 "outputsMetadata": [{"id": str(o), "attrs": [_kv("__tensor_tag", node.name if o == 0 else f"{node.name}:{o}"),
                                                              _kv("tensor_shape", t.bind(dims))]}
                                     for o, t in enumerate(node.outputs)]}
        if k < 0:
            entry["style"] = {"backgroundColor": FALLBACK_FILL, "borderColor": FALLBACK, "hoveredBorderColor": FALLBACK}
        nodes.append(entry)
    for o, (ref, parsed) in enumerate(zip(graph.outputs, graph.output_refs)):
        src, out, sk = source(ref, parsed)
        if sk >= 0:   # leaving a cluster for the caller crosses a boundary too (the stats count it)
            t = graph.tensor_type(ref).bind(dims)
            boundary.append({"sourceNodeId": src, "targetNodeId": f"output:{o}", "label": f"{t} · {fmt_bytes(t.nbytes())}"})
        nodes.append({"id": f"output:{o}", "label": "Output", "namespace": "", "attrs": [_kv("name", ref)],
                      "incomingEdges": [{"sourceNodeId": src, "sourceNodeOutputId": out, "targetNodeInputId": "0"}]})
    group_attrs, group_configs = {}, []
    for k, members in enumerate(clustering.clusters):
        cid = clustering.cluster_id(k)
        detail = stats.clusters_detail[k] if k < len(stats.clusters_detail) else None
        group_attrs[cid] = {"ops": str(len(members)),
                            "est. speedup": fmt_speedup(detail.speedup_estimate if detail else None)}
        group_configs.append({"namespaceRegex": f"^{cid}$", "backgroundColor": cluster_color(k) + "30",
                              "borderColor": cluster_color(k)})
    g = {"id": graph.name, "nodes": nodes, "groupNodeAttributes": group_attrs, "groupNodeConfigs": group_configs,
         "tasksData": {"edgeOverlaysDataListLeftPane": [{
             "name": "xcviz", "type": "edge_overlays",
             "overlays": [{"name": "boundary edges (shape · bytes)", "edgeColor": BOUNDARY, "edges": boundary}]}]}}
    return {"label": "xcviz", "graphs": [g]}
