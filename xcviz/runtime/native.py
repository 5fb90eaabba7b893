"""The native runtime speedups are measured against: onnxruntime's kernels, or xcviz's NumPy reference (said so).

A runtime is small: `prepare(graph, members, entries, exits, values)` returns a callable that takes the
entry values (by ref) and returns the exit values (in order); `name`, `version`, `threads` and `mode`
("op-by-op": onnxruntime with its graph optimizations off, the analogue of TensorFlow's executor;
"optimized": its defaults) describe it. A part of the graph a runtime cannot take (an op with no ONNX
form, a node that is no aten call) raises Unmappable, and the caller runs that part on onnxruntime or the
NumPy reference and names it so. torch eager is in torch_eager, TensorFlow in tf_native.
"""
from __future__ import annotations

import os
from typing import Callable, Protocol

from ..errors import XcvizError
from ..ir import Graph, format_ref
from ..ops.ort_exactness import ort_inexact
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


def apply_threads(threads: int | None) -> tuple[int, bool]:
    """(the thread count, whether XLA got it): XLA reads its thread count from XLA_FLAGS when JAX loads, so
    it is set here before that; once JAX is loaded (an API caller imported it) it keeps what it has."""
    import sys

    n = threads or default_threads()
    if n < 1:
        raise XcvizError(f"--threads must be at least 1, not {n}", hint="--threads 1")
    if "jax" in sys.modules:
        return n, _XLA_THREADS.get("n") == n
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()
             if not f.startswith(("--xla_cpu_multi_thread_eigen", "intra_op_parallelism_threads"))]
    flags += [f"--xla_cpu_multi_thread_eigen={'true' if n > 1 else 'false'}", f"intra_op_parallelism_threads={n}"]
    os.environ["XLA_FLAGS"] = " ".join(flags)
    _pin(n)
    _XLA_THREADS["n"] = n
    return n, True


_XLA_THREADS: dict[str, int] = {}


def _pin(n: int) -> None:
    """Keep this process (its threads, and those it starts from now on: XLA's pool, onnxruntime's) on n of its CPUs.
    XLA:CPU's flags do not bound every kernel: its YNNPACK convolutions and dots ran on both cores of a
    2-core machine under `intra_op_parallelism_threads=1`; the pool JAX creates is sized by, and its threads
    inherit, the CPU affinity, so the affinity is what makes `--threads N` hold for XLA as for the native
    runtime."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux: the flags alone
        return
    if n < len(cpus):
        # every thread there is (numpy's BLAS pool starts at import) and, inherited, every one started later
        tids = [int(t) for t in os.listdir("/proc/self/task")] if os.path.isdir("/proc/self/task") else [0]
        for tid in tids:
            try:
                os.sched_setaffinity(tid, cpus[:n])
            except OSError:   # a thread that ended meanwhile
                pass


class NumpyRuntime:
    """xcviz's own interpreter, op by op: the reference for numerics, not a production runtime."""

    name, mode, note = "numpy", "op-by-op", None

    def __init__(self, threads: int | None = None) -> None:
        import numpy as np

        self.version, self.threads = np.__version__, threads or default_threads()

    def prepare(self, graph, members, entries, exits, values):
        """Each value is freed after its last reader ran, and one no member reads is never stored (the
        lifetimes execute's runs use, runtime.execute.Lifetimes); the exits are kept."""
        from .execute import last_reads

        nodes = [graph.nodes[i] for i in members]
        life = last_reads([node.inputs for node in nodes], exits)
        steps, read = list(zip(nodes, life.release)), life.read

        def run(feed: dict) -> list:
            local = {r: feed[r] for r in entries}
            for node, done in steps:
                for j, v in enumerate(eval_node(node, [local[r] if r else None for r in node.inputs])):
                    ref = format_ref(node.name, j)
                    if ref in read:
                        local[ref] = v
                for r in done:
                    local.pop(r, None)
            return [local[r] for r in exits]
        return run


class OnnxRuntime:
    """onnxruntime's CPU provider, `threads` intra-op threads, one inter-op (ops run one after another)."""

    name, note = "onnxruntime", None

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
        # no spinning after a run: its idle threads would otherwise take the cores XLA runs on next, and on a
        # machine with few cores the following XLA call then waits for them
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.log_severity_level = 3   # its warnings (unused initializers...) are not the user's business here
        return so

    def prepare(self, graph, members, entries, exits, values):
        import onnxruntime as ort

        for i in members:
            why = ort_inexact(graph.nodes[i])
            if why:
                raise Unmappable(why)
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


def resolve(requested: str | None, graph: Graph | None = None, threads: int | None = None) -> NativeRuntime:
    """The runtime to time against: `requested`, or the graph's default: torch eager for a torch program (when
    torch is installed), TensorFlow for a TF graph (when TF is installed), else onnxruntime; parts a runtime
    cannot take run on onnxruntime, else on the NumPy reference, said so per part; without a graph (calibrate)
    torch and tensorflow are calibrate's programs as their calls (calibrate_torch, calibrate_tf). torch or tensorflow asked
    for a graph they cannot run (not a torch program, not a TF file) is onnxruntime with a note saying so;
    numpy when onnxruntime is absent."""
    if requested is not None and requested not in RUNTIMES:
        raise XcvizError(f"unknown native runtime {requested!r}", hint="use --native " + " | ".join(RUNTIMES))
    n = threads or default_threads()
    if requested == "numpy":
        return NumpyRuntime(n)
    if requested in ("torch", "tensorflow") and not _available(requested):
        raise XcvizError(f"--native {requested} needs {requested} installed", hint="install it, or use --native onnxruntime")
    torch_program = graph is not None and bool(getattr(graph, "aten_calls", None))
    if torch_program and (requested == "torch" or (requested is None and _available("torch"))):
        from .torch_eager import TorchRuntime

        return TorchRuntime(n)
    if requested == "torch" and graph is None:   # calibrate's programs: the ops as torch's own calls make them
        from .calibrate_torch import TorchOps

        return TorchOps(n)
    if requested == "tensorflow" and graph is None:   # calibrate's programs: the ops as TF graphs make them
        from .calibrate_tf import TfOps

        return TfOps(n)
    if requested in ("tensorflow", None) and graph is not None and _available("tensorflow"):
        from .tf_native import tf_runtime

        rt = tf_runtime(graph, n)
        if rt is not None:
            return rt
    if not _available("onnxruntime"):
        if requested == "onnxruntime":
            raise XcvizError("--native onnxruntime needs onnxruntime installed", hint="pip install onnxruntime")
        rt: NativeRuntime = NumpyRuntime(n)
    else:
        rt = OnnxRuntime(n)
    rest = f"native = {rt.name}" + (" where the ops map, else xcviz's NumPy reference" if rt.name != "numpy" else "")
    what = "this graph is not one" if graph is not None else "calibrate's op programs are not"
    if requested == "torch":
        rt.note = ("torch eager replays the aten calls of a torch program (.pt2, from_torch) and this graph is not "
                   f"one: {rest}")
    elif requested == "tensorflow":
        rt.note = f"TensorFlow runs the NodeDefs of a TF GraphDef file or SavedModel and {what}: {rest}"
    elif requested is None and graph is not None and _stand_in(graph):
        rt.note = f"{_stand_in(graph)} is not installed, so {rest} stands in ({STAND_IN_HINT[_stand_in(graph)]})"
    return rt


STAND_IN_HINT = {"TensorFlow": "pip install tensorflow-cpu to time it on TF's own executor",
                 "torch": "pip install torch to time it on torch eager"}


def _stand_in(graph) -> str | None:
    """'TensorFlow' or 'torch' when `graph` is a program of that framework and the framework is not installed."""
    src = getattr(graph, "source", "") or ""
    tf_file = src.lower().endswith((".pb", ".pbtxt", ".pbtext", ".pb.gz", ".pbtxt.gz")) or (
        os.path.isdir(src) and os.path.isfile(os.path.join(src, "saved_model.pb")))
    if tf_file and any(n.op_type.startswith("tf.") for n in graph.nodes) and not _available("tensorflow"):
        return "TensorFlow"
    if getattr(graph, "aten_calls", None) and not _available("torch"):
        return "torch"
    return None


def fallbacks(rt: NativeRuntime) -> list:
    """The runtimes a part goes to when `rt` cannot take it: onnxruntime (for torch or TF), then NumPy."""
    chain = getattr(rt, "_fallbacks", None)
    if chain is None:
        chain = []
        if rt.name not in ("onnxruntime", "numpy") and _available("onnxruntime"):
            chain.append(OnnxRuntime(rt.threads))
        chain.append(NumpyRuntime(rt.threads))
        try:
            rt._fallbacks = chain
        except AttributeError:  # (a runtime with slots) a fresh chain each time
            pass
    return chain


def runtime_named(rt: NativeRuntime, name: str) -> NativeRuntime:
    """`rt`, or the one of its fallbacks called `name` (what ran the whole model: the hybrid's parts go there too)."""
    return next((r for r in [rt, *fallbacks(rt)] if r.name == name), rt)


def _agrees(fn, entries, exits, values) -> None:
    from .measure import compare

    if not all(r in values for r in exits):
        return
    try:
        outs = fn({r: values[r] for r in entries})
    except Exception as e:  # noqa: BLE001 - a runtime failing on real inputs is a fallback too
        raise Unmappable(f"it failed to run: {str(e).splitlines()[0][:200]}") from None
    for r, got in zip(exits, outs):
        cmp = compare(got, values[r])
        if not cmp["ok"]:
            raise Unmappable(f"its output {r!r} differs from the NumPy reference ({cmp['why']})")


def describe(rt: NativeRuntime) -> dict:
    """The JSON `native` object: the runtime, its version, threads (XLA's too: `xla_threads`, null when JAX was
    loaded before xcviz could set them) and mode; `note` says in words when it is the NumPy reference."""
    xla = _XLA_THREADS.get("n")
    return {"runtime": rt.name, "version": rt.version, "threads": rt.threads, "mode": rt.mode,
            "xla_threads": xla if xla == rt.threads else None,
            "note": NUMPY_NOTE if rt.name == "numpy" else getattr(rt, "note", None)}


def prepare_or_numpy(rt: NativeRuntime, graph, members, entries, exits, values) -> tuple[Callable, str, str | None]:
    """(callable, runtime name, why it fell back): `rt`'s, or where `rt` cannot take the part or its outputs
    differ from the reference's in `values` (a part emitted wrongly is never timed), onnxruntime's (for torch
    and TF), else the NumPy reference's. `why` is the first runtime's reason."""
    why = None
    for cand in [rt, *fallbacks(rt)] if rt.name != "numpy" else [rt]:
        if cand.name == "numpy":
            return cand.prepare(graph, members, entries, exits, values), cand.name, why
        try:
            try:
                fn = cand.prepare(graph, members, entries, exits, values)
            except Unmappable:
                raise
            except Exception as e:  # noqa: BLE001 - a runtime failing to take a part is a fallback, not a crash
                raise Unmappable(f"{cand.name} could not take it: {type(e).__name__}: "
                                 f"{(str(e).splitlines() or [''])[0][:200]}") from None
            _agrees(fn, entries, exits, values)
            return fn, cand.name, why
        except Unmappable as e:
            why = why or str(e)
    raise AssertionError("the NumPy reference ends every chain")
