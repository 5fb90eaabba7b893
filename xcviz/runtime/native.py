"""The native runtime speedups are measured against: onnxruntime's kernels, or xcviz's NumPy reference (said so).

A runtime is small: `prepare(graph, members, entries, exits, values)` returns a callable that takes the
entry values (by ref) and returns the exit values (in order); `name`, `version`, `threads` and `mode`
("op-by-op": onnxruntime with its graph optimizations off, the analogue of TensorFlow's executor;
"optimized": its defaults) describe it. A part of the graph onnxruntime cannot take (an op with no ONNX
form) raises Unmappable, and the caller runs that part on the NumPy reference and names it so.
"""
from __future__ import annotations

import os
from typing import Callable, Protocol

from ..errors import XcvizError
from ..ir import Graph, format_ref
from .node import eval_node
from .onnx_emit import Unmappable, subgraph_model

RUNTIMES = ("onnxruntime", "torch", "tensorflow", "numpy")
NUMPY_NOTE = "native = xcviz's NumPy reference, not a production runtime"


class NativeRuntime(Protocol):
    name: str
    version: str
    threads: int
    mode: str

    def prepare(self, graph: Graph, members: list[int], entries: list[str], exits: list[str],
                values: dict) -> Callable[[dict], list]: ...


def default_threads() -> int:
    """The thread count both runtimes get when none is given: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


class NumpyRuntime:
    """xcviz's own interpreter, op by op: the reference for numerics, not a production runtime."""

    name, mode = "numpy", "op-by-op"

    def __init__(self, threads: int | None = None) -> None:
        import numpy as np

        self.version, self.threads = np.__version__, threads or default_threads()

    def prepare(self, graph, members, entries, exits, values):
        nodes = [graph.nodes[i] for i in members]

        def run(feed: dict) -> list:
            local = {r: feed[r] for r in entries}
            for node in nodes:
                for j, v in enumerate(eval_node(node, [local[r] if r else None for r in node.inputs])):
                    local[format_ref(node.name, j)] = v
            return [local[r] for r in exits]
        return run


class OnnxRuntime:
    """onnxruntime's CPU provider, `threads` intra-op threads, one inter-op (ops run one after another)."""

    name = "onnxruntime"

    def __init__(self, threads: int | None = None, optimized: bool = False) -> None:
        import onnxruntime as ort

        self.version, self.threads = ort.__version__, threads or default_threads()
        self.optimized = optimized
        self.mode = "optimized" if optimized else "op-by-op"
        self.sessions: list = []   # kept for inspection (tests read their options back)

    def session_options(self):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = self.threads, 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL if self.optimized
                                       else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        # no spinning after a run: its idle threads would otherwise take the cores XLA runs on next (on a
        # 2-core machine a spinning pool slowed the following XLA call 10-20x)
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.log_severity_level = 3   # its warnings (unused initializers...) are not the user's business here
        return so

    def prepare(self, graph, members, entries, exits, values):
        import onnxruntime as ort

        model, feeds, outs = subgraph_model(graph, members, entries, exits, values)
        try:
            sess = ort.InferenceSession(model.SerializeToString(), self.session_options(),
                                        providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - onnxruntime refusing a part is a fallback, not a crash
            raise Unmappable(f"onnxruntime refused it: {str(e).splitlines()[0][:200]}") from None
        self.sessions.append(sess)
        names = list(feeds.items())

        def run(feed: dict) -> list:
            return sess.run(outs, {n: feed[r] for r, n in names})
        return run

    def optimized_twin(self) -> "OnnxRuntime":
        return OnnxRuntime(self.threads, optimized=True)


def _available(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def resolve(requested: str | None, graph: Graph, threads: int | None = None) -> NativeRuntime:
    """The runtime to time against: `requested`, or the default for the graph (onnxruntime when it can take
    every op; torch/tensorflow are not timed op by op yet and fall back the same way); numpy otherwise."""
    if requested is not None and requested not in RUNTIMES:
        raise XcvizError(f"unknown native runtime {requested!r}", hint="use --native " + ", ".join(RUNTIMES))
    if requested == "numpy":
        return NumpyRuntime(threads)
    if requested in (None, "onnxruntime", "torch", "tensorflow"):
        if requested in ("torch", "tensorflow") and not _available(requested):
            raise XcvizError(f"--native {requested} needs {requested} installed",
                             hint="install it, or use --native onnxruntime")
        if not _available("onnxruntime"):
            if requested is None:
                return NumpyRuntime(threads)
            raise XcvizError("--native onnxruntime needs onnxruntime installed", hint="pip install onnxruntime")
        return OnnxRuntime(threads)
    return NumpyRuntime(threads)


def describe(rt: NativeRuntime) -> dict:
    """The JSON `native` object."""
    return {"runtime": rt.name, "version": rt.version, "threads": rt.threads, "mode": rt.mode}


def prepare_or_numpy(rt: NativeRuntime, graph, members, entries, exits, values) -> tuple[Callable, str, str | None]:
    """(callable, runtime name, why it fell back) : `rt`'s, or the NumPy reference's where `rt` cannot take it."""
    if rt.name != "numpy":
        try:
            return rt.prepare(graph, members, entries, exits, values), rt.name, None
        except Unmappable as e:
            fallback = NumpyRuntime(rt.threads)
            return fallback.prepare(graph, members, entries, exits, values), fallback.name, str(e)
    return rt.prepare(graph, members, entries, exits, values), rt.name, None
