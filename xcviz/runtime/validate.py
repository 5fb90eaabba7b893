"""Validate every kept cluster: compile it with JAX, compare it with the native reference, time both.

The graph first runs natively once (given or seeded random inputs), so every cluster is fed the real
tensors it would see; its native outputs are the reference. Times are medians of repeats after a warm-up;
compile time is reported separately. Returns data; only the CLI prints.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..errors import XcvizError
from ..ir import format_ref
from .execute import execute
from .inputs import DEFAULT_MAX_ELEMENTS, bind_inputs
from .jit import CompileCache, cluster_spec
from .measure import compare, median_ms
from .node import eval_node


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
    status: str                 # ok | mismatch | compile-error
    message: str | None = None
    culprit: str | None = None  # node named by a compile error
    kernels_predicted: int | None = None  # the cost model's fusion model, beside XLA's own count (kernels_after)


@dataclass
class ValidationReport:
    graph: str
    clusters: list[ClusterCheck]
    cache: dict
    denied: list[str] = field(default_factory=list)   # ops denied by --auto-fallback
    rounds: int = 1
    clustering: object = None

    @property
    def ok(self) -> bool:
        return all(c.status == "ok" for c in self.clusters)

    def to_json(self) -> dict:
        return {"schema_version": 1, "graph": self.graph, "ok": self.ok, "cache": self.cache,
                "auto_fallback": {"denied": self.denied, "rounds": self.rounds},
                "clusters": [dataclasses.asdict(c) for c in self.clusters]}


def check_clusters(graph, clustering, env: dict, stats, cache, repeats=None, progress=None) -> list[ClusterCheck]:
    rows = []
    total = len(clustering.clusters)
    for k, members in enumerate(clustering.clusters):
        cid = clustering.cluster_id(k)
        if progress:
            progress(k, total, cid)
        detail = stats.clusters_detail[k]
        spec = cluster_spec(graph, members)
        row = ClusterCheck(cid, detail.nodes, detail.ops, detail.effective_size, None, None, {}, None, False, None,
                           None, None, detail.speedup_estimate, None, None, "compile-error",
                           kernels_predicted=detail.kernels)
        try:
            comp, hit = cache.get(graph, spec, env)
        except Exception as e:  # noqa: BLE001 - any failure to trace/lower/compile is this cluster's status
            row.message = f"{e.__class__.__name__}: {e}".splitlines()[0][:300]
            where = getattr(e, "where", None) or ""
            row.culprit = where.split("'")[1] if where.count("'") >= 2 else None
            rows.append(row)
            continue
        row.kernels_after, row.fusions, row.memory, row.cache_hit = comp.kernels, comp.fusions, comp.memory, hit
        row.compile_ms = 0.0 if hit else comp.compile_seconds * 1e3
        try:
            outs = comp(env, spec)
        except Exception as e:  # noqa: BLE001
            row.status, row.message = "run-error", f"{e.__class__.__name__}: {e}".splitlines()[0][:300]
            rows.append(row)
            continue
        worst_abs = worst_rel = 0.0
        bad = None
        for ref, got in zip(spec.exits, outs):
            cmp = compare(got, env[ref])
            if cmp["max_abs"] is not None:
                worst_abs, worst_rel = max(worst_abs, cmp["max_abs"]), max(worst_rel, cmp["max_rel"])
            if not cmp["ok"] and bad is None:
                bad = f"{ref}: {cmp['why']}"
        row.max_abs_error, row.max_rel_error = worst_abs, worst_rel
        row.status, row.message = ("ok", None) if bad is None else ("mismatch", bad)
        nodes = [graph.nodes[i] for i in members]

        def native():
            local = {r: env[r] for r in spec.entries}
            for node in nodes:
                for j, v in enumerate(eval_node(node, [local[r] if r else None for r in node.inputs])):
                    local[format_ref(node.name, j)] = v

        row.native_ms = median_ms(native, repeats)
        row.xla_ms = median_ms(lambda: comp(env, spec), repeats)
        row.speedup_measured = row.native_ms / row.xla_ms if row.xla_ms else None
        rows.append(row)
    if progress:
        progress(total, total, "done")
    return rows


def validate_graph(graph, clustering=None, inputs: dict | None = None, seed: int | None = 0, hardware=None,
                   repeats: int | None = None, progress=None, auto_fallback: bool = False, options=None,
                   max_rounds: int = 8, max_elements: int | None = DEFAULT_MAX_ELEMENTS) -> ValidationReport:
    """JIT-compile every kept cluster and compare it with the native reference; see ValidationReport."""
    from ..clustering import ClusterOptions, run_clustering
    from ..cost import compute_stats, load_hardware

    if clustering is None:
        clustering = run_clustering(graph, options or ClusterOptions())
    opts = clustering.options
    feeds = bind_inputs(graph, inputs, seed, max_elements)
    env = execute(graph, feeds, "native", keep_all=True).env
    hw = load_hardware(hardware, opts.device)
    cache = CompileCache()
    denied: list[str] = []
    for rnd in range(1, max_rounds + 1):
        stats = compute_stats(graph, clustering, hw)
        rows = check_clusters(graph, clustering, env, stats, cache, repeats, progress)
        failing = [r for r in rows if r.status != "ok"]
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
    return ValidationReport(graph.name, rows, cache.stats(), denied, rnd, clustering)
