"""Model Explorer node-data overlays: one JSON file per question (cluster, reason, bytes, speedup, error).

Each file is Model Explorer's single-graph node-data form (`GraphNodeData`: results keyed by node id, plus
thresholds or a gradient), keyed by the ids Model Explorer's ONNX adapter (`model-explorer-onnx`) gives the same
.onnx file: the ONNX node's name, or `<node_{i}>` (i = its position in the file) when it has none. For other
formats the keys are xcviz's node names, which `write_graph_json` (model_explorer_graph.py) uses as node ids.
Writing needs no Model Explorer install; tests/render/test_model_explorer.py checks the files against it."""
from __future__ import annotations

import json
import os

from ..fileio import write_atomic
from .model_explorer_ids import me_node_ids
from .names import file_stem
from .params import is_stored, stored_params
from .tables import FALLBACK, cluster_color

FALLBACK_BG = "#FDE3E3"
BOUNDARY_GRADIENT = [{"stop": 0, "bgColor": "#FFFFFF"}, {"stop": 1, "bgColor": "#FFB000"}]
SPEEDUP_THRESHOLDS = [{"value": 0.95, "bgColor": "#F4B6B6"}, {"value": 1.05, "bgColor": "#EEEEEE"},
                      {"value": 1.5, "bgColor": "#C7E9C0"}, {"value": 1e300, "bgColor": "#74C476"}]
ERROR_THRESHOLDS = [{"value": 1e-6, "bgColor": "#C7E9C0"}, {"value": 1e-4, "bgColor": "#FFF2CC"},
                    {"value": 1e300, "bgColor": "#F4B6B6"}]


def _data(name: str, results: dict, **scale) -> dict:
    """One GraphNodeData document: results sorted by key (deterministic files), optional colour scale."""
    return {"name": name, "results": dict(sorted(results.items())), **scale}


def cluster_value(clustering, i: int) -> str:
    k = clustering.cluster_of[i]
    return clustering.cluster_id(k) if k >= 0 else f"fallback:{clustering.code[i] or 'fallback'}"


def activation_boundary_bytes(graph, clustering) -> dict[int, int]:
    """Bytes of activations each producer sends across a cluster boundary (each tensor once, parameters not)."""
    params = stored_params(graph)
    inputs = {v.name: k for k, v in enumerate(graph.inputs)}
    sent: dict[int, dict[str, int]] = {}
    for j, node in enumerate(graph.nodes):
        for ref, p in zip(node.inputs, graph.input_sources(j)):
            if not ref or ref in inputs or is_stored(graph, ref, params, inputs):
                continue
            a, b = clustering.cluster_of[p], clustering.cluster_of[j]
            if a != b and (a >= 0 or b >= 0):
                sent.setdefault(p, {})[ref] = graph.tensor_type(ref).bind(graph.dims).nbytes() or 0
    return {p: sum(refs.values()) for p, refs in sent.items()}


def overlays(analysis, source: str | None = None, validation=None, reader=None) -> dict[str, dict]:
    """{overlay name: GraphNodeData dict}: cluster, fallback_reason, boundary_bytes, speedup_estimate and,
    given a ValidationReport, speedup_measured and max_error. `reader`: (trust_pickle, limits) for a .pt2."""
    graph, clustering, stats = analysis.graph, analysis.clustering, analysis.stats
    ids = me_node_ids(graph, source, reader)
    n = len(graph.nodes)
    clusters, reasons = {}, {}
    for i in range(n):
        if ids[i] is None:
            continue
        k = clustering.cluster_of[i]
        value = cluster_value(clustering, i)
        clusters[ids[i]] = {"value": value, "bgColor": cluster_color(k) if k >= 0 else FALLBACK,
                            "textColor": "#FFFFFF"}
        if k < 0:
            reasons[ids[i]] = {"value": clustering.reason[i] or value, "bgColor": FALLBACK_BG, "textColor": "#8B0000"}
    out = {"cluster": _data("xcviz cluster", clusters),
           "fallback_reason": _data("xcviz fallback reason", reasons)}
    sent = activation_boundary_bytes(graph, clustering)
    out["boundary_bytes"] = _data("xcviz boundary bytes (activations)",
                                  {ids[p]: {"value": b} for p, b in sent.items() if ids[p] is not None},
                                  gradient=BOUNDARY_GRADIENT)
    speed = {}
    for k, members in enumerate(clustering.clusters):
        detail = stats.clusters_detail[k] if k < len(stats.clusters_detail) else None
        if detail is not None and detail.speedup_estimate is not None:
            speed.update({ids[i]: {"value": round(float(detail.speedup_estimate), 4)} for i in members
                          if ids[i] is not None})
    out["speedup_estimate"] = _data("xcviz est. speedup", speed, thresholds=SPEEDUP_THRESHOLDS)
    if validation is not None:
        index = {clustering.cluster_id(k): members for k, members in enumerate(clustering.clusters)}
        measured, error = {}, {}
        for check in validation.clusters:
            for i in index.get(check.id, []):
                if ids[i] is None:
                    continue
                if check.speedup_measured is not None:
                    measured[ids[i]] = {"value": round(float(check.speedup_measured), 4)}
                if check.max_abs_error is not None:
                    error[ids[i]] = {"value": float(check.max_abs_error)}
        out["speedup_measured"] = _data("xcviz measured speedup", measured, thresholds=SPEEDUP_THRESHOLDS)
        out["max_error"] = _data("xcviz max abs error", error, thresholds=ERROR_THRESHOLDS)
    return out


def write_overlays(analysis, folder: str, source: str | None = None, validation=None, reader=None) -> list[str]:
    """Write `<stem>.<overlay>.json` per overlay into `folder` (made if missing); returns the paths written."""
    from ..errors import XcvizError

    if os.path.exists(folder) and not os.path.isdir(folder):
        raise XcvizError("--model-explorer needs a folder", where=folder, hint="name a folder (it is made if missing)")
    os.makedirs(folder, exist_ok=True)
    stem = file_stem(source, analysis.graph.name)
    paths = []
    for name, data in overlays(analysis, source, validation, reader).items():
        path = os.path.join(folder, f"{stem}.{name}.json")
        write_atomic(path, (json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"))
        paths.append(path)
    return paths


def write_graph_json(analysis, path: str, validation=None) -> None:
    from .model_explorer_graph import graph_json

    write_atomic(path, (json.dumps(graph_json(analysis), indent=1, ensure_ascii=False, allow_nan=False)
                        + "\n").encode("utf-8"))
