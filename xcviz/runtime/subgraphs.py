"""Bodies of control-flow nodes (ONNX Loop / If / Scan): interpreted natively, run hybrid per iteration, or traced with their JAX lowerings."""
from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..ops.control import Subgraph, set_runner
from .missing import preflight
from .node import run_graph_nodes

_CHECKED: set[str] = set()


@dataclass(frozen=True)
class BodyRun:
    """How a hybrid run executes the bodies of control-flow nodes that run natively: the clustering options of
    its bodies, one CompileCache per body (held by the caller's plan), the executor (execute.execute, handed
    down: this module sits below it) and each body's clustering, as the clustering pass made it
    (Clustering.bodies, by Subgraph)."""

    options: object
    caches: dict
    execute: Callable
    clusterings: dict = field(default_factory=dict)


# Set by execute for the duration of one run (a context, not a global: nested and concurrent runs keep theirs);
# None (native, or no run) interprets bodies node by node.
_BODY_RUN: contextvars.ContextVar[BodyRun | None] = contextvars.ContextVar("xcviz_body_run", default=None)


@contextlib.contextmanager
def bodies_run(run: BodyRun | None):
    """Bodies reached while this block runs execute as `run` says (natively, node by node, when None)."""
    token = _BODY_RUN.set(run)
    try:
        yield
    finally:
        _BODY_RUN.reset(token)


def body_caches(caches: dict) -> list:
    """Every CompileCache in a plan's `bodies`, those of nested bodies included (for counts and timings)."""
    out = []
    for c in list(caches.values()):
        out.append(c)
        for plan in list(c.plans.values()):
            out += body_caches(plan.bodies)
    return out


def run_stats(cache) -> dict:
    """A run's cache counts: the graph's CompileCache plus the caches of the bodies its plans ran per iteration."""
    stats = cache.stats()
    for body in [c for plan in list(cache.plans.values()) for c in body_caches(plan.bodies)]:
        for k, v in body.stats().items():
            stats[k] += v
    return stats


def run_failures(cache) -> list[dict]:
    """The clusters that did not compile and ran natively: the graph's, then those of the bodies its plans ran."""
    out = list(cache.failures)
    for body in [c for plan in list(cache.plans.values()) for c in body_caches(plan.bodies)]:
        out += body.failures
    return out


def body_graph(sub: Subgraph):
    """The body's Graph (the loader's), refused at once (one line) when it holds ops xcviz cannot run."""
    g = sub.body()
    if sub not in _CHECKED:
        preflight(g)  # a body op xcviz cannot run: one clear 'unsupported' line, before any iteration
        _CHECKED.add(sub)
    return g


def run_subgraph(sub: Subgraph, feeds: dict, use_jax: bool = False) -> list:
    """Run a body on `feeds` (its inputs and outer-scope names); its outputs in order. With use_jax the
    values may be tracers (inside lax.while_loop / scan / cond) and each node runs its JAX lowering. Under a
    hybrid run, a body its node could not take into a cluster runs its own clusters compiled."""
    g = body_graph(sub)
    run = None if use_jax else _BODY_RUN.get()
    if run is not None:
        return _run_compiled(sub, g, feeds, run)
    env: dict = {}
    for v in g.inputs:
        env[v.name] = feeds[v.name] if v.name in feeds else np.asarray(v.data)
    return run_graph_nodes(g, env, use_jax)


def _run_compiled(sub: Subgraph, g, feeds: dict, run: BodyRun) -> list:
    # one cache per body: each new input shape (a growing token tensor) compiles once, repeats are hits
    from .jit import CompileCache

    cache = run.caches.get(sub)
    if cache is None:
        cache = run.caches[sub] = CompileCache()
    full = {v.name: feeds[v.name] if v.name in feeds else np.asarray(v.data) for v in g.inputs}
    out = run.execute(g, full, "hybrid", run.clusterings.get(sub), cache, keep_all=False, options=run.options).by_ref
    return [out[r] for r in g.outputs]  # by reference: one tensor may be two outputs


set_runner(run_subgraph)
