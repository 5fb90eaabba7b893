"""A Loop / If / Scan outside the clusters in a hybrid run on a native runtime: its bodies hybrid too.

onnxruntime runs a Loop's body itself and cannot call back into XLA from inside it; so a control-flow node
whose bodies hold clusters of their own is run by xcviz (the op's NumPy implementation iterates), and each
time it runs a body, the body runs as a hybrid program of its own (wholemodel.Hybrid): the body's clusters
on XLA, the rest of the body on the native runtime. A body program is built once per body and input
signature (onnxruntime's sessions and XLA's executables are typed by shape; a growing token tensor makes one
per length), checked against the NumPy reference on its first inputs as every part is.
"""
from __future__ import annotations

import numpy as np

from ..ops import BODY_CONTROL, REGISTRY

_KEPT = 256   # body programs held per run (one per body and input signature)


def control_ops() -> frozenset:
    return frozenset(REGISTRY.names(BODY_CONTROL))


def bodies_have_clusters(node, options) -> bool:
    """Whether any body of this control-flow node keeps a cluster under `options` (then XLA runs part of it)."""
    from ..clustering import run_clustering
    from ..clustering.bodies import node_bodies
    from .subgraphs import body_graph

    for _, sub in node_bodies(node):
        try:
            g = body_graph(sub)
        except Exception:  # noqa: BLE001 - a body xcviz cannot build: the runtime runs the node whole
            continue
        if run_clustering(g, options).clusters:
            return True
    return False


def _signature(feeds: dict) -> tuple:
    # (dtype objects hash as they are: str() of one costs more than the rest of the key)
    return tuple((k, getattr(v, "shape", None), getattr(v, "dtype", type(v))) for k, v in sorted(feeds.items()))


class _Outputs:
    """What subgraphs.BodyRun.execute returns: the body's outputs by ref (as execute's RunResult.by_ref)."""

    def __init__(self, by_ref: dict) -> None:
        self.by_ref = by_ref


class BodyPrograms:
    """The BodyRun executor (subgraphs.BodyRun.execute) of a hybrid run on a native runtime: each body run as
    a Hybrid program, its clusters on XLA (the body's own CompileCache), its other ops on `rt`."""

    def __init__(self, rt, options, program) -> None:
        self.rt, self.options, self.program = rt, options, program   # program: wholemodel.Hybrid
        self.programs: dict = {}
        self.caches: dict = {}                 # body (ir.Body) -> CompileCache (subgraphs.BodyRun.caches)
        self.segments_on: dict[str, int] = {}  # runtime name -> body segments it ran (each program counted once)
        self.why: list[str] = []

    def body_run(self):
        from .jit import CompileCache
        from .subgraphs import BodyRun

        return BodyRun(self.options, self.caches, self.execute, new_cache=CompileCache)

    def execute(self, g, feeds: dict, mode: str, clustering, cache, keep_all: bool = False, options=None):
        from .execute import execute, plan_for
        from .identity import Same

        key = (Same(g), _signature(feeds))   # the body's graph itself (not its id: see identity.Same)
        h = self.programs.get(key)
        if h is None:
            plan = plan_for(g, "hybrid", None, cache, options or self.options)
            ref = execute(g, feeds, "native", keep_all=True).env   # the NumPy reference: types, and the check
            h = self.program(g, plan.clustering, self.rt, ref, cache)
            for name, n in h.segments_on.items():
                self.segments_on[name] = self.segments_on.get(name, 0) + n
            self.why += h.why
            if len(self.programs) >= _KEPT:
                self.programs.pop(next(iter(self.programs)))
            self.programs[key] = h
        return _Outputs(h(feeds))


def run_control(node, env: dict, programs: BodyPrograms) -> list:
    """One control-flow node with its bodies hybrid (BodyPrograms); its outputs."""
    from ..ops.values import as_value
    from .node import eval_node
    from .subgraphs import bodies_run

    with bodies_run(programs.body_run()):
        outs = eval_node(node, [env[r] if r else None for r in node.inputs])
    return [as_value(v) if not isinstance(v, np.ndarray) else v for v in outs]
