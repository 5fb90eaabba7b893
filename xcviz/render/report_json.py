"""The machine-readable reports (JSON schema version 1): plain data built from analyses and runs, never printed here."""
from __future__ import annotations

import math

from ..clustering import Clustering
from ..clustering.result import PHASE_NAMES
from ..cost import Stats
from ..ir import Graph, gc_paused
from ..ir.scopes import scope_tree
from . import symbolic_view
from .bodies_view import bodies_json, bodies_key
from .json_text import NoFloats, NoFloatsList
from .scope_view import scopes_json

SCHEMA_VERSION = 1
# the metrics a diff compares (its "delta" keys), in table order: (stats key, label)
DIFF_METRICS = [("clusters", "clusters"), ("coverage", "coverage η (ops)"), ("coverage_flops", "coverage (FLOPs)"),
                ("boundary_bytes", "boundary bytes D"), ("parameter_bytes", "parameter bytes"),
                ("kernel_launches_after", "kernel launches"), ("speedup_estimate", "est. speedup S")]


def _num(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def graph_info(graph: Graph) -> dict:
    return {
        "name": graph.name,
        "source": graph.source,
        "nodes": len(graph.nodes),
        "inputs": [{"name": v.name, "shape": _shape(v.type.shape), "dtype": v.type.dtype} for v in graph.inputs],
        "outputs": list(graph.outputs),
        "dims": dict(sorted(graph.dims.items())),
    }


def _shape(shape):
    return None if shape is None else list(shape)


def options_info(clustering: Clustering, hardware: str | None) -> dict:
    o = clustering.options
    return {
        "strategy": o.strategy, "device": o.device, "min_cluster_size": o.min_size,
        "max_cluster_size": o.max_cluster_size, "allow": sorted(o.allow), "deny": sorted(o.deny),
        "supported_ops": None if o.supported_ops is None else sorted(o.supported_ops), "hardware": hardware,
    }


def cluster_report(graph: Graph, clustering: Clustering, stats: Stats) -> dict:
    # millions of new dicts: without a pause the cyclic GC rescans them all, again and again
    with gc_paused():
        return _cluster_report(graph, clustering, stats)


def _cluster_report(graph: Graph, clustering: Clustering, stats: Stats) -> dict:
    names = graph.nodes.column("name")
    ids = [clustering.cluster_id(k) for k in range(len(clustering.clusters))]
    clusters = [{
        "id": c.id, "nodes": c.nodes, "ops": c.ops,
        "entry_points": c.entry_points, "exit_points": c.exit_points,
        "inputs": c.inputs, "outputs": c.outputs,
        "boundary_bytes_in": c.boundary_bytes_in, "boundary_bytes_out": c.boundary_bytes_out,
        "parameter_bytes_in": c.parameter_bytes_in,
        "flops": c.flops, "effective_size": c.effective_size, "kernels": c.kernels,
        "speedup_estimate": _num(c.speedup_estimate, 4),
        "constant": c.constant,   # folds to a constant (no runtime input): speedup_estimate null, out of S
    } for c in stats.clusters_detail]
    refused = [{
        "from": names[a.src], "to": names[a.dst], "phase": a.phase, "phase_name": PHASE_NAMES.get(a.phase),
        "reason": a.reason, "reason_code": a.code, "path": [names[p] for p in a.path],
    } for a in clustering.refused()]
    edges, float_free = _edges(stats, ids)
    return {
        "schema_version": SCHEMA_VERSION,
        "graph": graph_info(graph),
        "options": options_info(clustering, stats.hardware),
        "clusters": clusters,
        "nodes": _node_table(graph, clustering, names, ids),
        "stats": stats_dict(stats) | symbolic_view.json_keys(graph, clustering, stats),
        "boundary_edges": NoFloatsList(edges) if float_free else edges,
        "merges_refused": refused,
    } | scopes_json(graph, clustering) | bodies_key(graph, clustering)


def _node_table(graph: Graph, clustering: Clustering, names: list, ids: list) -> dict:
    """Each node's entry, read column by column (no Node objects), in the graph's order."""
    nodes = graph.nodes
    ops, op_types, modules = (nodes.column(f) for f in ("op", "op_type", "module"))
    # one JSON value per distinct output type (the loader shares equal types as one object; a value may
    # appear many times in the report, as aliasing is invisible in JSON), one list per distinct type list
    type_json: dict[int, dict] = {}
    lists: dict[int, list] = {}

    def outputs(types) -> list:
        out = lists.get(id(types))
        if out is None:
            out = lists[id(types)] = []
            for t in types:
                j = type_json.get(id(t))
                if j is None:
                    j = type_json[id(t)] = {"shape": _shape(t.shape), "dtype": t.dtype}
                out.append(j)
        return out

    raw = nodes.column_raw("outputs")
    if type(raw) is tuple:  # (rid, results): node j's outputs are results[rid[j]], made once per distinct list
        per_result = [outputs(types) for types in raw[1]]
        out_json = list(map(per_result.__getitem__, raw[0].tolist()))
    else:
        out_json = list(map(outputs, nodes.column("outputs")))
    table = {}
    tree = scope_tree(graph)
    paths = None if tree.flat else tree.paths
    for name, op, op_type, out_j, module, k, reason, code, cand, dev in zip(
            names, ops, op_types, out_json, modules, clustering.cluster_of, clustering.reason,
            clustering.code, clustering.candidate, clustering.device):
        out = k < 0
        entry = table[name] = {
            "op": op, "op_type": op_type,
            "cluster": None if out else ids[k],
            "reason": reason if out else None,
            "reason_code": code if out else None,
            "candidate": cand,
            "device": dev,
            "outputs": out_j,
        }
        if module:  # a PyTorch program's module path, for display (only where the loader knows one)
            entry["module"] = module
    if paths is not None:  # the model's layer (ir.scopes) of every node, "" at the top, where the graph has any
        for entry, path in zip(table.values(), paths):
            entry["scope"] = path
    text = (str, type(None))
    float_free = (_types_in(names) <= {str} and _types_in(ids) <= {str} and _types_in(ops) <= set(text)
                  and _types_in(op_types) <= set(text) and _types_in(modules) <= set(text)
                  and _types_in(clustering.reason) <= set(text) and _types_in(clustering.code) <= set(text)
                  and _types_in(clustering.device) <= set(text) and _types_in(clustering.candidate) <= {bool}
                  and all(_plain_type(j) for j in type_json.values()))
    return NoFloats(table) if float_free else table


def _types_in(values) -> set:
    return set(map(type, values))


def _plain_type(j: dict) -> bool:
    return type(j["dtype"]) in (str, type(None)) and (j["shape"] is None or _types_in(j["shape"]) <= {int, str, type(None)})


def _edges(stats: Stats, ids: list) -> tuple[list, bool]:
    """The boundary edges' entries (one pass over the cost model's lazy list), and whether they hold no float."""
    shapes: dict[int, tuple] = {}  # one shape list per distinct type object (kept alive here: ids stay unique)
    edges = []
    for e in stats.edges:
        t = shapes.get(id(e.type))
        if t is None:
            t = shapes[id(e.type)] = (_shape(e.type.shape), e.type.dtype, e.type)
        edges.append({
            "from": e.src, "to": e.dst, "tensor": e.tensor, "shape": t[0], "dtype": t[1], "bytes": e.bytes,
            "from_cluster": ids[e.src_cluster] if e.src_cluster >= 0 else None,
            "to_cluster": ids[e.dst_cluster] if e.dst_cluster >= 0 else None,
        })
    kinds = {(type(d["from"]), type(d["to"]), type(d["tensor"]), type(d["bytes"])) for d in edges}
    return edges, all(a is str and b is str and c is str and n in (int, type(None)) for a, b, c, n in kinds) \
        and all(_plain_type({"shape": shape, "dtype": dtype}) for shape, dtype, _ in shapes.values())


def stats_dict(s: Stats) -> dict:
    return {
        "nodes": s.nodes, "clustered_nodes": s.clustered_nodes,
        "coverage": _num(s.coverage), "coverage_flops": _num(s.coverage_flops),
        "coverage_flops_min": _num(s.coverage_flops_min), "coverage_flops_max": _num(s.coverage_flops_max),
        "unknown_cost_nodes": s.unknown_cost_nodes,
        "boundary_bytes": s.boundary_bytes, "boundary_edges": s.boundary_edges,
        "boundary_bytes_activations": s.boundary_bytes_activations, "parameter_bytes": s.parameter_bytes,
        "handoffs": s.handoffs,
        "kernel_launches_before": s.kernel_launches_before, "kernel_launches_after": s.kernel_launches_after,
        "time_before_s": _num(s.time_before, 9), "time_after_s": _num(s.time_after, 9),
        "speedup_estimate": _num(s.speedup_estimate, 4),
        "clusters": s.clusters, "fallback_nodes": s.fallback_nodes, "hardware": s.hardware,
        "estimate_runtime": s.native, "constant_clusters": s.constant_clusters,
    }


def stats_report(graph: Graph, clustering: Clustering, stats: Stats) -> dict:
    return {"schema_version": SCHEMA_VERSION, "graph": graph_info(graph),
            "options": options_info(clustering, stats.hardware),
            "stats": stats_dict(stats) | symbolic_view.json_keys(graph, clustering, stats)}


def explain_report(story: dict) -> dict:
    """`explain --json`: the node's story (clustering.explain.story) with each merge step as a mapping."""
    extra = {"bodies": bodies_json(story["bodies"])} if "bodies" in story else {}
    return dict(story, **extra, schema_version=SCHEMA_VERSION, steps=[
        {"phase": x.phase, "merged": x.merged, "producer_side": x.producer_side, "consumer_side": x.consumer_side,
         "reason": x.reason, "path": x.path} for x in story["steps"]])


def ops_report(registry, devices) -> dict:
    """`ops --json`: every op's names, groups, per-device verdict (with the reason where XLA does not compile it)
    and its source, JSON-able attribute defaults and note."""
    return {"schema_version": SCHEMA_VERSION, "ops": [
        {"name": o.name, "aliases": list(o.aliases), "groups": sorted(o.groups),
         "compilable": {d: o.compilable_on(d) for d in devices},
         "why_not": {d: o.why_not(d) for d in devices if not o.compilable_on(d)},
         "source": o.source, "reason": o.reason, "attrs": _jsonable(o.attrs), "doc": o.doc} for o in registry]}


def _jsonable(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if v is None or isinstance(v, (int, float, str, bool, list))}


def clean(data):
    """JSON has no NaN/Inf: non-finite floats become None (shown as unknown)."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: clean(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [clean(v) for v in data]
    return data
