"""Validate every kept cluster: compile it with JAX, compare it with the NumPy reference, time it against the native runtime.

The graph first runs natively once (given or seeded random inputs), so every cluster is fed the real
tensors it would see; its native outputs are the reference. Where a tensor cannot be computed (an op xcviz
cannot execute upstream), the cluster gets seeded synthetic entry tensors of the inferred types instead
(`inputs: synthetic`); a cluster that still cannot be checked is `skipped` with the reason: one failing
cluster never stops the others. Each cluster's native time is its subgraph on the native runtime
(native.resolve: onnxruntime op by op unless asked otherwise; NumPy where it cannot take it, and said so);
the whole model runs all-native and hybrid (wholemodel). Times are medians of repeats after a warm-up;
compile time is reported separately. Returns data; only the CLI prints.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..errors import XcvizError
from ..ir import bind_dims, format_ref
from .inputs import DEFAULT_MAX_ELEMENTS, bind_inputs
from .jit import CompileCache, cluster_spec
from .measure import compare, interleaved, machine_load, resident
from .node import eval_node
from .native import NumpyRuntime, describe, prepare_or_numpy, resolve
from .partial import PartialRun, Skip, cannot_execute, cluster_inputs, execute_tolerant

# Skips that are xcviz's own failure (its JAX lowering does not compile or run): validation fails on them and
# --auto-fallback denies their ops. Other skips (no native reference, inputs impossible to build) are reported.
FAILURES = ("compile-error", "run-error")
FOLDS = "folds to a constant: its values depend on no runtime input (XLA folds it, as the native runtime does)"
CLUSTER_BUDGET_S = 0.5   # seconds of interleaved native/XLA runs per cluster when no --repeats is given


@dataclass
class ClusterCheck:
    id: str
    nodes: list[str]
    ops: dict[str, int]
    kernels_before: int
    kernels_after: int | None
    fusions: int | None
    memory: dict
    compile_ms: float | None
    cache_hit: bool
    native_ms: float | None
    xla_ms: float | None
    speedup_measured: float | None
    speedup_estimate: float | None
    max_abs_error: float | None
    max_rel_error: float | None
    status: str                 # ok | mismatch | compile_failed (XLA's message; a run executes it natively) | skipped
    message: str | None = None
    culprit: str | None = None  # node named by a compile error
    inputs: str = "real"        # real: the tensors the graph computes; synthetic: seeded, of the inferred types
    reason: str | None = None   # why skipped: compile-error | run-error | no-reference | no-inputs
    kernels_predicted: int | None = None  # the cost model's fusion model, beside XLA's own count (kernels_after)
    undefined: int | None = None  # exit elements left out of the comparison: integers cast from non-finite floats
    native_runtime: str | None = None     # what native_ms ran on (numpy where the runtime asked for cannot take it)
    native_note: str | None = None        # why it fell back to numpy
    # its values depend on no runtime input: it folds to a constant (XLA's, as natively), checked but not timed,
    # its speedups null (cost.params.constant_clusters)
    constant: bool = False
    timing: dict | None = None            # measure.Interleaved.to_json: native and xla runs, spread, stable

    @property
    def failed(self) -> bool:
        return self.status == "mismatch" or self.reason in FAILURES


@dataclass
class ValidationReport:
    graph: str
    clusters: list[ClusterCheck]
    cache: dict
    denied: list[str] = field(default_factory=list)   # ops denied by --auto-fallback
    rounds: int = 1
    clustering: object = None
    cannot_execute: dict = field(default_factory=dict)  # op_type -> (count, first node, why)
    native: dict = field(default_factory=dict)          # native.describe: runtime, version, threads, mode
    model: object = None                                # wholemodel.ModelTimes (None: not measured)
    dims: dict = field(default_factory=dict)            # the sizes the run bound (the estimates count bytes at them)
    load: dict | None = None                            # measure.machine_load when the timing began

    @property
    def status(self) -> str:
        """failed: some cluster failed; nothing_checked: no cluster was compared with a native reference (all
        skipped, or none kept); ok: at least one was, and none failed (the others honestly skipped)."""
        if any(c.failed for c in self.clusters):
            return "failed"
        return "ok" if any(c.status == "ok" for c in self.clusters) else "nothing_checked"

    @property
    def ok(self) -> bool:
        """Something was checked and nothing failed (never true when nothing could be compared)."""
        return self.status == "ok"

    def timing_note(self) -> str | None:
        """Said when the times are less than solid: the machine loaded, or a spread wide (measure.timing_note)."""
        from .measure import timing_note

        spreads = [max(c.timing["native"]["spread"], c.timing["xla"]["spread"]) for c in self.clusters if c.timing]
        t = getattr(self.model, "timing", None)
        if t:
            spreads += [v["spread"] for v in t.values() if isinstance(v, dict) and "spread" in v]
        return timing_note(self.load, spreads)

    def counts(self) -> dict[str, int]:
        return {s: sum(c.status == s for c in self.clusters) for s in ("ok", "mismatch", "skipped", "compile_failed")}

    def _repr_html_(self) -> str:
        """In a notebook: the status and one row per cluster (measured against estimated, error), compact."""
        from ..htmltable import pairs, table

        def num(x, fmt="{:.3g}"):
            return "" if x is None else fmt.format(x)

        head = pairs([("graph", self.graph), ("status", self.status),
                      ("clusters", ", ".join(f"{n} {s}" for s, n in self.counts().items() if n))],
                     caption="xcviz validation")
        rows = [[c.id, len(c.nodes), c.status, num(c.speedup_measured, "{:.2f}×"), num(c.speedup_estimate, "{:.2f}×"),
                 num(c.max_abs_error), num(c.native_ms), num(c.xla_ms), c.message or ""] for c in self.clusters]
        return "<div>" + head + table(["cluster", "nodes", "status", "measured", "estimated", "max abs error",
                                       "native ms", "XLA ms", "message"], rows, numeric={1, 3, 4, 5, 6, 7}) + "</div>"

    def to_json(self) -> dict:
        return {"schema_version": 1, "graph": self.graph, "ok": self.ok, "status": self.status, "cache": self.cache,
                "counts": self.counts(), "auto_fallback": {"denied": self.denied, "rounds": self.rounds},
                "cannot_execute": [{"op": op, "count": n, "node": first, "why": why}
                                   for op, (n, first, why) in sorted(self.cannot_execute.items())],
                "native": self.native, "load": self.load, "timing_note": self.timing_note(), "model": self.model.to_json() if self.model is not None else None,
                "clusters": [{**dataclasses.asdict(c), "failed": c.failed, "speedup": c.speedup_measured,
                              "est_speedup": c.speedup_estimate} for c in self.clusters]}


def check_clusters(graph, clustering, run: PartialRun, stats, cache, repeats=None, progress=None,
                   seed: int = 0, rt=None) -> list[ClusterCheck]:
    rows = []
    total = len(clustering.clusters)
    for k, members in enumerate(clustering.clusters):
        cid = clustering.cluster_id(k)
        if progress:
            progress(k, total, cid)
        detail = stats.clusters_detail[k]
        row = ClusterCheck(cid, detail.nodes, detail.ops, detail.effective_size, None, None, {}, None, False, None,
                           None, None, detail.speedup_estimate, None, None, "skipped",
                           kernels_predicted=detail.kernels, constant=detail.constant)
        check_cluster(graph, cluster_spec(graph, members), run, cache, repeats, seed, row, rt)
        rows.append(row)
    if progress:
        progress(total, total, "done")
    return rows


def _skip(row: ClusterCheck, reason: str, e: Exception) -> None:
    row.status, row.reason = "skipped", reason
    row.message = str(e) if isinstance(e, (Skip, XcvizError)) else f"{e.__class__.__name__}: {e}"
    row.message = (row.message.splitlines() or [""])[0][:300]


def check_cluster(graph, spec, run: PartialRun, cache, repeats, seed: int, row: ClusterCheck, rt=None) -> None:
    """Fill `row`: entries (real or synthetic), compile, compare with the NumPy reference, time the cluster
    compiled against its subgraph on the native runtime `rt` (the NumPy reference when None)."""
    try:
        values, row.inputs, reference = cluster_inputs(graph, spec, run, seed)
    except Skip as e:
        _skip(row, "no-reference" if str(e).startswith("no native") else "no-inputs", e)
        return
    try:
        comp, hit = cache.get(graph, spec, values)
    except Exception as e:  # noqa: BLE001 - any failure to trace/lower/compile is this cluster's status
        _skip(row, "compile-error", e)
        row.status = "compile_failed"  # (a run falls back to native execution for it, as TF's lazy compilation)
        where = getattr(e, "where", None) or ""
        row.culprit = where.split("'")[1] if where.count("'") >= 2 else None
        return
    row.kernels_after, row.fusions, row.memory, row.cache_hit = comp.kernels, comp.fusions, comp.memory, hit
    row.compile_ms = 0.0 if hit else comp.compile_seconds * 1e3
    try:
        outs = comp(values, spec)
    except Exception as e:  # noqa: BLE001
        _skip(row, "run-error", e)
        return
    nodes = [graph.nodes[i] for i in spec.members]

    def native():
        local = {r: values[r] for r in spec.entries}
        for node in nodes:
            for j, v in enumerate(eval_node(node, [local[r] if r else None for r in node.inputs])):
                local[format_ref(node.name, j)] = v
        return local

    masks = _undefined(nodes, native, reference)
    worst_abs = worst_rel = 0.0
    bad = None
    for ref, got in zip(spec.exits, outs):
        cmp = compare(got, reference[ref], masks.get(ref))
        if cmp["max_abs"] is not None:
            worst_abs, worst_rel = max(worst_abs, cmp["max_abs"]), max(worst_rel, cmp["max_rel"])
        if not cmp["ok"] and bad is None:
            bad = f"{ref}: {cmp['why']}"
        if "undefined" in cmp:
            row.undefined = (row.undefined or 0) + cmp["undefined"]
    row.max_abs_error, row.max_rel_error = worst_abs, worst_rel
    row.status, row.message = ("ok", None) if bad is None else ("mismatch", bad)
    if row.undefined:
        from .undefined import WHY

        row.message = (row.message + "; " if row.message else "") + f"{row.undefined} element(s): {WHY}"
    if row.constant:   # folded at compile time, as natively: no work per call to time, no speedup to claim
        row.message = (row.message + "; " if row.message else "") + FOLDS
        return

    timed, row.native_runtime, row.native_note = prepare_or_numpy(rt or NumpyRuntime(), graph, spec.members, spec.entries,
                                                    spec.exits, {**values, **reference})
    fed = resident(graph, spec, values)  # parameters stay on the device, as XLA keeps them
    t = interleaved({"native": lambda: timed(values), "xla": lambda: comp(fed, spec)}, repeats, CLUSTER_BUDGET_S)
    row.native_ms, row.xla_ms = t["native"].median_ms, t["xla"].median_ms
    row.speedup_measured = row.native_ms / row.xla_ms if row.xla_ms else None
    row.timing = {**t.to_json(), "speedup_quartiles": t.ratio("native", "xla")}


def _undefined(nodes, native, reference: dict) -> dict:
    """The undefined elements of the exits (runtime.undefined), from a native run of the members; none when the
    cluster casts no float to an integer (the common case costs nothing)."""
    from .undefined import undefined_masks

    if not any(n.op == "cast" for n in nodes):
        return {}
    try:
        env = native()
    except Exception:  # noqa: BLE001 - the reference exists; without masks every element is compared
        return {}
    return undefined_masks(nodes, {**env, **reference})


def validate_graph(graph, clustering=None, inputs: dict | None = None, seed: int | None = 0, hardware=None,
                   repeats: int | None = None, progress=None, auto_fallback: bool = False, options=None,
                   max_rounds: int = 8, max_elements: int | None = DEFAULT_MAX_ELEMENTS, native: str | None = None,
                   threads: int | None = None, model: bool = True) -> ValidationReport:
    """JIT-compile every kept cluster, compare it with the NumPy reference and time it against the native
    runtime (`native`: onnxruntime, numpy, ...; None: the graph's default), then the whole model all-native
    against hybrid (`model`); see ValidationReport."""
    from ..clustering import ClusterOptions, run_clustering
    from ..cost import compute_stats, hardware_for

    if clustering is None:
        clustering = run_clustering(graph, options or ClusterOptions())
    opts = clustering.options
    feeds = bind_inputs(graph, inputs, seed, max_elements)
    graph = bind_dims(graph, feeds.dims)  # (its reports count bytes at the sizes it ran with)
    run = execute_tolerant(graph, feeds, clustering)
    load = machine_load()
    hw = hardware_for(graph, hardware, opts.device, native)  # the program's runtime's profile, as every command's
    rt = resolve(native, graph, threads)
    cache = CompileCache()
    denied: list[str] = []
    for rnd in range(1, max_rounds + 1):
        stats = compute_stats(graph, clustering, hw)
        rows = check_clusters(graph, clustering, run, stats, cache, repeats, progress, seed or 0, rt)
        failing = [r for r in rows if r.failed]
        if not auto_fallback or not failing:
            break
        new = set()
        for r in failing:
            if r.culprit and r.culprit in graph.index:
                new.add(graph.node(r.culprit).op)
            else:
                new.update(graph.node(n).op for n in r.nodes)
        new -= set(denied)
        if not new:
            break
        denied.extend(sorted(new))
        opts = dataclasses.replace(opts, deny=frozenset(opts.deny) | new)
        clustering = run_clustering(graph, opts)
    else:
        raise XcvizError("auto-fallback did not converge", hint=f"denied so far: {', '.join(denied)}")
    report = ValidationReport(graph.name, rows, cache.stats(), denied, rnd, clustering, cannot_execute(graph),
                              native=describe(rt), dims=dict(graph.dims), load=load)
    if model:
        constant = frozenset(k for k, d in enumerate(stats.clusters_detail) if d.constant)
        report.model = model_times(graph, clustering, rt, run, cache, repeats, stats.speedup_estimate, constant)
        if report.model is not None:
            report.model.est_hardware, report.model.est_native = hw.name, hw.native
    return report


def model_times(graph, clustering, rt, run: PartialRun, cache, repeats, est, constant: frozenset = frozenset()):
    """The whole model all-native against hybrid (wholemodel), or why it could not run."""
    from .frames import has_v1_flow
    from .wholemodel import ModelTimes, time_model

    # frames: the frame executor's runs (runtime/frames_timing.py); with no cluster, the hybrid run is the
    # whole graph on TensorFlow, which runs v1 control flow itself, as all-native is
    whole_on_tf = rt.name == "tensorflow" and not len(clustering.clusters)
    if has_v1_flow(graph) and not whole_on_tf and not run.failed:
        from .frames_timing import frames_model_times

        return frames_model_times(graph, clustering, {v.name: run.env[v.name] for v in graph.inputs
                                                      if v.name in run.env}, repeats, est)
    if run.failed:
        first = next(iter(run.failed.values()))
        return ModelTimes(None, None, None, est, rt.name, why=f"cannot run natively: {first}"[:300])
    try:
        return time_model(graph, clustering, rt, run.env, cache, repeats, est, constant)[0]
    except Exception as e:  # noqa: BLE001 - a failing cluster or segment: the per-cluster rows say which
        return ModelTimes(None, None, None, est, rt.name, why=f"{e.__class__.__name__}: {e}".splitlines()[0][:300])
