"""Bodies of control-flow nodes (ONNX Loop / If / Scan): interpreted natively, run hybrid per iteration, or traced with their JAX lowerings."""
from __future__ import annotations

import contextlib
import contextvars
import weakref
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..ir import Body
from .missing import preflight

_CHECKED: weakref.WeakSet = weakref.WeakSet()  # bodies preflighted already (each once)


@dataclass(frozen=True)
class BodyRun:
    """How a hybrid run executes the bodies of control-flow nodes that run natively: the clustering options of
    its bodies, one CompileCache per body (held by the caller's plan), the executor (execute.execute, handed
    down: this module sits below it) and each body's clustering, as the clustering pass made it
    (Clustering.bodies, by Body); `new_cache` makes a body's CompileCache (runtime.jit's, handed down:
    this module sits below it)."""

    options: object
    caches: dict
    execute: Callable
    clusterings: dict = field(default_factory=dict)
    new_cache: Callable | None = None


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


def current_body_run() -> BodyRun | None:
    """How bodies run in the run now in progress (None: natively, node by node)."""
    return _BODY_RUN.get()


def body_graph(sub: Body):
    """The body's Graph (the loader's), refused at once (one line) when it holds ops xcviz cannot run."""
    g = sub.body()
    if sub not in _CHECKED:
        preflight(g)  # a body op xcviz cannot run: one clear 'unsupported' line, before any iteration
        _CHECKED.add(sub)
    return g


def run_compiled(sub: Body, g, feeds: dict, run: BodyRun) -> list:
    """A body under a hybrid run: its own clusters compiled, one CompileCache per body (each new input shape,
    a growing token tensor, compiles once; repeats are hits)."""
    cache = run.caches.get(sub)
    if cache is None:
        cache = run.caches[sub] = run.new_cache()
    full = {v.name: feeds[v.name] if v.name in feeds else np.asarray(v.data) for v in g.inputs}
    out = run.execute(g, full, "hybrid", run.clusterings.get(sub), cache, keep_all=False, options=run.options).by_ref
    return [out[r] for r in g.outputs]  # by reference: one tensor may be two outputs
