"""One model of a census, in a worker process: build, torch.export in-process, from_torch, analyse, what-if, row."""
from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..errors import XcvizError
from .libraries import LibraryUnavailable, import_failure
from .sources import Task

# the fallback codes that mean "XLA (as configured) does not compile this op"; the others (min-size, cycle,
# forced, argument...) are consequences of the partition, not of the op
BLOCKING = ("unsupported", "unknown", "denied")
MAX_WHAT_IF = 16     # blocking ops per model re-clustered with the op allowed (the most frequent first)
ERROR_CHARS = 400


@dataclass(frozen=True)
class Settings:
    """What every task of a census shares: the analysis options' fields, validation, the per-model timeout."""

    options: dict = field(default_factory=dict)   # AnalysisOptions fields (plain values: they travel to workers)
    validate: bool = False
    timeout_s: float | None = None
    threads: int = 1                              # torch and JAX threads per worker
    report_dir: str | None = None                 # write each model's `xcviz report` page here
    stage_dir: str | None = None                  # where the pool finds the stage of a model it killed (census.pool)


def stage_file(stage_dir: str, task: Task) -> str:
    """The file a model's stage is kept in, under the pool's folder."""
    import hashlib
    import os

    return os.path.join(stage_dir, hashlib.sha1(repr(task.key).encode()).hexdigest()[:16] + ".stage")


class Stage(list):
    """The stage a model is at (`stage[0]`), also written to `path` as it changes: when the model's process is
    killed at its timeout (census.pool), the row still says where."""

    def __init__(self, first: str, path: str | None) -> None:
        super().__init__([None])
        self.path = path
        self[0] = first

    def __setitem__(self, i, value) -> None:
        super().__setitem__(i, value)
        if self.path:
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(str(value))


def census_one(task: Task, settings: Settings) -> dict:
    """The row of one model; every failure (bad file, export refused, timeout) is a row with its stage."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")   # nothing is downloaded, whatever a library would try
    _quiet()
    _threads(settings.threads)
    row = empty_row(task)
    if task.unavailable:
        return unavailable_row(task, task.unavailable)
    timings: dict[str, float] = {}
    stage = Stage("load" if task.kind == "file" else "create",
                  stage_file(settings.stage_dir, task) if settings.stage_dir else None)
    t_all = time.perf_counter()
    try:
        with _silenced():   # (the time limit is the pool's: census.pool kills the process)
            graph, row["weights"], row["params"], row["config"] = _graph(task, settings, timings, stage)
            stage[0] = "analyse"
            t = time.perf_counter()
            analysis = _analyse(task, graph, settings)
            row.update(analysis_fields(analysis))
            row["what_if"] = what_if(analysis, row["blocking_ops"], settings.options)
            timings["analyse_s"] = time.perf_counter() - t
            checks = None
            if settings.validate:
                stage[0] = "validate"
                t = time.perf_counter()
                checks = validate(analysis, settings)
                row.update(validation_fields(checks))
                timings["validate_s"] = time.perf_counter() - t
            if settings.report_dir:
                t = time.perf_counter()
                model_report(task, analysis, checks, settings.report_dir)
                timings["report_s"] = time.perf_counter() - t
        row["status"] = "ok"
    except LibraryUnavailable as e:
        row = unavailable_row(task, str(e))
    except XcvizError as e:
        row = empty_row(task) | {"status": "error", "stage": stage[0], "error": _short(str(e))}
    except MemoryError:
        row = empty_row(task) | {"status": "error", "stage": stage[0], "error": "out of memory"}
    except Exception as e:  # noqa: BLE001 - one model's surprise must not stop a census of hundreds
        # (a library the model's library imports lazily, as transformers imports torchvision for a vision model)
        lazy = import_failure(e, "timm" if task.kind == "timm" else "transformers") if task.kind != "file" else None
        row = unavailable_row(task, lazy) if lazy else \
            empty_row(task) | {"status": "error", "stage": stage[0], "error": _short(f"{type(e).__name__}: {e}")}
    timings["total_s"] = time.perf_counter() - t_all
    row["timings"] = {k: round(v, 3) for k, v in sorted(timings.items())}
    return row


def unavailable_row(task: Task, message: str) -> dict:
    """The row of a model whose library (or one it imports) does not import: stage "import", the one line
    naming the library and the fix."""
    return empty_row(task) | {"status": "error", "stage": "import", "error": _short(message)}


def empty_row(task: Task) -> dict:
    return {"source": task.source, "model": task.model, "kind": task.kind, "status": None, "stage": None,
            "nodes": None, "coverage": None, "coverage_flops": None, "clusters": None, "cluster_sizes": [],
            "fallback_ops": {}, "blocking_ops": {}, "fallback_reasons": [], "est_speedup": None,
            "boundary_bytes": None, "what_if": {}, "measured_speedup": None, "validation": None,
            "weights": None, "params": None, "config": None, "error": None, "timings": {}}


def _short(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "failed"
    return line[:ERROR_CHARS]


def _quiet() -> None:
    """The libraries' own logging off in a worker: a failure is the row's one-line error, not a traceback
    torch logs on stderr across the progress bar."""
    import logging
    import warnings

    for name in ("torch", "transformers", "timm"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore")


@contextmanager
def _silenced():
    """The task's stdout and stderr (file descriptors: torch prints whole graphs from native code) go to
    /dev/null; the worker's own output comes back after it."""
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def _threads(n: int) -> None:
    import os

    os.environ.setdefault("OMP_NUM_THREADS", str(n))
    try:
        import torch

        if torch.get_num_threads() != n:
            torch.set_num_threads(n)
    except (ImportError, RuntimeError):
        pass


def _graph(task: Task, settings: Settings, timings: dict, stage: list[str]):
    """(graph, weights kind, parameter count, config: which of the library's configs was built; see
    sources.build_hf): a file through xcviz's loaders; a library model exported here,
    in this process, and handed to from_torch as the ExportedProgram (no file, no pickle)."""
    from ..pipeline import AnalysisOptions, load_graph

    if task.kind == "file":
        t = time.perf_counter()
        graph = load_graph(task.ref, AnalysisOptions(**settings.options))
        timings["load_s"] = time.perf_counter() - t
        return graph, "file", None, None
    import torch

    from ..loaders.torch_export import from_torch
    from .sources import build_hf, build_timm

    t = time.perf_counter()
    model, args, kwargs, weights, config = (build_timm if task.kind == "timm" else build_hf)(task.ref)
    params = sum(p.numel() for p in model.parameters())
    timings["create_s"] = time.perf_counter() - t
    t = time.perf_counter()
    stage[0] = "export"
    try:
        with torch.no_grad():
            ep = torch.export.export(model, args, kwargs=kwargs, strict=False)
    except Exception as e:  # noqa: BLE001 - torch's message says what in the model cannot be exported
        raise XcvizError(f"torch.export failed: {type(e).__name__}: {e}".splitlines()[0][:ERROR_CHARS]) from None
    timings["export_s"] = time.perf_counter() - t
    t = time.perf_counter()
    stage[0] = "convert"
    from ..ir import relabel

    graph = relabel(from_torch(ep, dims=dict(settings.options.get("dims") or {})), name=task.model)
    timings["convert_s"] = time.perf_counter() - t
    return graph, weights, params, config


def _analyse(task: Task, graph, settings: Settings):
    from ..pipeline import AnalysisOptions, analyse

    return analyse(graph, AnalysisOptions(**settings.options))


def analysis_fields(a) -> dict:
    """The row's analysis columns: size, partition, what falls back by op and by (reason, op)."""
    graph, cl, st = a.graph, a.clustering, a.stats
    ops: Counter = Counter()
    blocking: Counter = Counter()
    reasons: Counter = Counter()
    example: dict = {}
    for node, k, code, reason in zip(graph.nodes, cl.cluster_of, cl.code, cl.reason):
        if k >= 0:
            continue
        code = code or "other"
        ops[node.op_type] += 1
        if code in BLOCKING:
            blocking[node.op_type] += 1
        reasons[(code, node.op_type)] += 1
        example.setdefault((code, node.op_type), reason or "")
    return {
        "nodes": st.nodes, "clusters": st.clusters, "cluster_sizes": [len(c) for c in cl.clusters],
        "coverage": _round(st.coverage), "coverage_flops": _round(st.coverage_flops),
        "est_speedup": _round(st.speedup_estimate, 4), "hardware": st.hardware, "estimate_runtime": st.native,
        "boundary_bytes": _int(st.boundary_bytes),
        "fallback_ops": dict(sorted(ops.items())), "blocking_ops": dict(sorted(blocking.items())),
        "fallback_reasons": [{"code": c, "op": op, "nodes": n, "reason": example[(c, op)]}
                             for (c, op), n in sorted(reasons.items(), key=lambda t: (-t[1], t[0]))],
    }


def what_if(a, blocking: dict, fields: dict) -> dict:
    """For each blocking op (the most frequent MAX_WHAT_IF): the partition re-clustered with that op allowed
    (coverage, clusters, estimated speedup), so the ranking can say what supporting it would buy."""
    from ..pipeline import AnalysisOptions, analyse

    base = AnalysisOptions(**fields)
    out = {}
    for op, _ in sorted(blocking.items(), key=lambda t: (-t[1], t[0]))[:MAX_WHAT_IF]:
        options = allowing(base, op)
        b = analyse(a.graph, options)
        out[op] = {"coverage": _round(b.stats.coverage), "clusters": b.stats.clusters,
                   "est_speedup": _round(b.stats.speedup_estimate, 4)}
    return dict(sorted(out.items()))


def allowing(options, op: str):
    """The options with `op` supported: allowed (and no longer denied), or added to a --supported-ops set."""
    from ..ops import REGISTRY

    def canon(name: str) -> str:   # deny may spell it `add`, the row says `Add`
        opdef = REGISTRY.get(name)
        return opdef.name if opdef is not None else name

    if options.supported_ops is not None:
        return options.replace(supported_ops=options.supported_ops | {op}, allow_unknown=True)
    deny = frozenset(d for d in options.deny if canon(d) != canon(op))
    return options.replace(allow=options.allow | {op}, deny=deny, allow_unknown=True)


def validate(a, settings: Settings):
    """--validate: every kept cluster compiled with JAX and run against the native reference."""
    from ..runtime.validate import validate_graph

    return validate_graph(a.graph, a.clustering, hardware=settings.options.get("hardware"))


def validation_fields(report) -> dict:
    """The measured speedup of the clustered part (native time / XLA time summed over the clusters both
    ran) and the clusters' verdicts."""
    native = sum(c.native_ms for c in report.clusters if c.native_ms and c.xla_ms)
    xla = sum(c.xla_ms for c in report.clusters if c.native_ms and c.xla_ms)
    return {"measured_speedup": round(native / xla, 4) if xla else None,
            "validation": {"ok": report.ok, **report.counts()}}


def model_report(task: Task, a, checks, folder: str) -> None:
    """The model's own `xcviz report` page, for the census page to link to. Not part of the row (a census
    with and without pages gives the same rows); a page that cannot be drawn is left out, not an error."""
    import os

    from ..fileio import write_atomic
    from ..render.census_html import model_report_name
    from ..render.report_html import build_report

    try:
        page = build_report(a.graph, a.clustering, a.stats, validation=checks)
    except (XcvizError, OSError):   # e.g. the layout's time bound on a huge graph
        return
    os.makedirs(folder, exist_ok=True)
    write_atomic(os.path.join(folder, model_report_name(task.source, task.model)), page)


def _round(v, digits: int = 6):
    return None if v is None else round(float(v), digits)


def _int(v):
    try:
        return int(v)
    except (TypeError, ValueError):  # a symbolic size stays a formula: not a column of numbers
        return None
