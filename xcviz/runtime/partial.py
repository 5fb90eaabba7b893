"""What can run when not everything can: the ops a graph cannot execute, a native run that keeps going past
them, and a cluster's entry tensors and native reference (real where computed, else synthetic, seeded)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import XcvizError
from ..ir import Graph, format_ref
from .missing import cannot_execute, missing_text, preflight  # noqa: F401  (re-exported for callers)
from ..ops.values import as_value
from .node import eval_node


@dataclass
class PartialRun:
    env: dict                   # every tensor that could be computed natively
    failed: dict[str, str]      # node name -> why its outputs are missing (its own error, or an input's)
    # a TF1 graph with frames: cluster members -> (entry values, exit values) of the cluster's last run
    clusters: dict = field(default_factory=dict)


def execute_tolerant(graph: Graph, feeds: dict, clustering=None) -> PartialRun:
    """Run every node natively in topological order; a node that cannot run leaves its outputs missing and
    its consumers are skipped with the first cause, so one missing op never stops the rest of the graph.
    A TF1 graph with control flow v1 runs in the frame executor, `clustering`'s clusters as units (run
    natively), each cluster's inputs and outputs of its last run kept (a cluster in a loop runs per iteration)."""
    from .frames import has_v1_flow

    if has_v1_flow(graph):
        return _tolerant_frames(graph, feeds, clustering)
    env: dict = dict(feeds)
    failed: dict[str, str] = {}
    for j, node in enumerate(graph.nodes):
        if node.op == "placeholder":
            if node.name in feeds:
                env[node.name] = feeds[node.name]
            continue
        absent = [k for k, r in enumerate(node.inputs) if r and r not in env]
        if absent:
            up = graph.input_refs(j)[absent[0]].node
            failed[node.name] = failed.get(up, f"input {node.inputs[absent[0]]!r} is missing")
            continue
        try:
            outs = eval_node(node, [env[r] if r else None for r in node.inputs])
        except Exception as e:  # noqa: BLE001 - every failure is recorded; the rest of the graph goes on
            failed[node.name] = f"node {node.name!r} ({node.op_type}): {_first_line(e)}"
            continue
        for k, v in enumerate(outs):
            env[format_ref(node.name, k)] = as_value(v)
    return PartialRun(env, failed)


def _tolerant_frames(graph: Graph, feeds: dict, clustering) -> PartialRun:
    """The frame executor, natively: up to the first node that fails (frames cannot skip a node and go on)."""
    from .execute import units
    from .frames import Schedule, run_frames
    from .jit import cluster_specs

    n = len(clustering.clusters) if clustering is not None else 0
    specs = dict(enumerate(cluster_specs(graph, clustering.clusters))) if n else {}
    sched = Schedule(graph, units(graph, clustering.cluster_of if n else [-1] * len(graph.nodes), n), specs)
    env: dict = dict(feeds)
    seen: dict = {}

    def run_unit(uid: int, vals: list) -> dict:
        kind, u = sched.units[uid]
        members = specs[u].members if kind == "cluster" else (u,)
        local = dict(zip(sched.inputs[uid], vals)) if kind == "cluster" else {}
        for i in members:
            node = graph.nodes[i]
            args = vals if kind == "node" else [local[r] if r else None for r in node.inputs]
            try:
                outs = eval_node(node, args)
            except Exception as e:  # noqa: BLE001 - recorded: the run stops here
                raise _NodeFailed(node.name, _node_error(node, e)) from None
            local.update({format_ref(node.name, k): as_value(v) for k, v in enumerate(outs)})
        if kind == "node":
            return local
        spec = specs[u]
        out = {r: local[r] for r in spec.exits}
        env.update(local)
        seen[tuple(spec.members)] = ({r: local[r] for r in spec.entries}, out)
        return out

    failed: dict[str, str] = {}
    try:
        run_frames(sched, feeds, run_unit, env=env)
    except _NodeFailed as e:
        failed[e.args[0]] = e.args[1]
    except XcvizError as e:
        failed[graph.name] = _first_line(e)
    return PartialRun(env, failed, seen)


class _NodeFailed(Exception):
    """(node name, why): a node of a frame run failed."""


def _first_line(e: Exception) -> str:
    text = str(e) if isinstance(e, XcvizError) else f"{e.__class__.__name__}: {e}"
    return (text.splitlines() or [""])[0][:300]


class Skip(Exception):
    """A cluster that cannot be validated; the message says why."""


def _index_bound(graph: Graph, ref: str) -> int:
    """The largest value an integer entry may take and stay in range: the smallest dim it could index (>= 1)."""
    bound = 8
    for node in graph.nodes:
        if ref in node.inputs:
            for r in node.inputs:
                if r and r != ref:
                    for d in graph.tensor_type(r).shape or ():
                        if isinstance(d, int) and d > 0:
                            bound = min(bound, d)
    return max(1, bound)


def synthetic(graph: Graph, ref: str, rng: np.random.Generator) -> np.ndarray:
    """A seeded tensor of the entry's inferred type; integers stay below every dim they could index."""
    t = graph.tensor_type(ref)  # TensorType() (shape None) for a name the graph does not have
    dims = graph.dims
    if t.shape is None or any(isinstance(d, str) and d not in dims for d in t.shape):
        raise Skip(f"entry {ref!r} is not computable and its shape is not known ({t})")
    shape = [dims[d] if isinstance(d, str) else d for d in t.shape]
    dt = t.dtype or "float32"
    if dt in ("string", "bfloat16"):
        raise Skip(f"entry {ref!r} is not computable and has dtype {dt}")
    dt = np.dtype(dt)
    if dt.kind == "f":
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(0, _index_bound(graph, ref), size=shape).astype(dt)


def cluster_inputs(graph: Graph, spec, run: PartialRun, seed: int = 0) -> tuple[dict, str, dict]:
    """(entry values, 'real' | 'synthetic', native reference of the exits) for one cluster, or Skip."""
    last = run.clusters.get(tuple(spec.members))
    if last is not None:  # a cluster of a TF1 graph with frames: the values of its last run
        return dict(last[0]), "real", dict(last[1])
    values: dict = {}
    kind = "real"
    rng = np.random.default_rng([seed, len(spec.entries), len(spec.members)])
    for r in spec.entries:
        if r in run.env:
            values[r] = run.env[r]
        else:
            values[r] = synthetic(graph, r, rng)
            kind = "synthetic"
    if kind == "real" and all(r in run.env for r in spec.exits):
        return values, kind, {r: run.env[r] for r in spec.exits}
    local = dict(values)
    for i in spec.members:
        node = graph.nodes[i]
        try:
            outs = eval_node(node, [local[r] if r else None for r in node.inputs])
        except Exception as e:  # noqa: BLE001 - no reference, no validation: the reason is the status
            why = _first_line(e) if isinstance(e, XcvizError) else _node_error(node, e)
            raise Skip(f"no native reference: {why}") from None
        for k, v in enumerate(outs):
            local[format_ref(node.name, k)] = as_value(v)
    return values, kind, {r: local[r] for r in spec.exits}


def _node_error(node, e: Exception) -> str:
    return f"node {node.name!r} ({node.op_type}): {_first_line(e)}"
