"""The whole model on the native runtime against hybrid (XLA clusters + the fallback ops on that same runtime).

all-native: every op on the native runtime, op by op (onnxruntime with its graph optimizations off), and
once more with its own optimizations on ("vs optimized": what a user of that runtime has today). hybrid:
each kept cluster as one XLA executable (parameters resident, as XLA keeps them), and every run of
consecutive ops outside the clusters (a fallback segment) as one model on the native runtime, so the
figure is what a user would get. Where the runtime cannot take a part, the NumPy reference runs it and the
result says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..cost.params import VOLATILE_OPS
from ..ir import Graph, format_ref
from ..ops.values import Seq
from .jit import baked_entries, cluster_specs
from .measure import interleaved, median_ms
from .hybrid_bodies import run_control
from .execute import last_reads
from .native import NativeRuntime, prepare_or_numpy, runtime_named


MODEL_BUDGET_S = 3.0   # seconds of interleaved whole-model runs (all-native, optimized, hybrid) without --repeats


@dataclass
class ModelTimes:
    native_ms: float | None
    native_optimized_ms: float | None
    hybrid_ms: float | None
    est_speedup: float | None
    runtime: str                      # what all-native ran on (the fallback's name when it had to)
    segments: int = 0                 # fallback segments in the hybrid run
    segments_on: dict = field(default_factory=dict)   # runtime name -> segments it ran
    why: str | None = None            # why all-native could not use the runtime asked for, or why nothing ran
    optimized_note: str | None = None  # why native_optimized_ms is null (torch: no cheap optimized mode)
    est_hardware: str | None = None    # the profile est_speedup comes from, and the runtime its native numbers
    est_native: str | None = None      # are of (validate fills them in)
    timing: dict | None = None         # measure.Interleaved.to_json: runs, spread and stability of each

    @property
    def speedup(self) -> float | None:
        return self.native_ms / self.hybrid_ms if self.native_ms and self.hybrid_ms else None

    @property
    def speedup_vs_optimized(self) -> float | None:
        return self.native_optimized_ms / self.hybrid_ms if self.native_optimized_ms and self.hybrid_ms else None

    def to_json(self) -> dict:
        return {"native_ms": self.native_ms, "native_optimized_ms": self.native_optimized_ms,
                "hybrid_ms": self.hybrid_ms, "speedup": self.speedup, "speedup_vs_optimized": self.speedup_vs_optimized,
                "est_speedup": self.est_speedup, "native_runtime": self.runtime,
                "fallback_segments": self.segments, "fallback_segments_on": dict(sorted(self.segments_on.items())),
                "note": self.why, "native_optimized_note": self.optimized_note,
                "est_hardware": self.est_hardware, "est_native": self.est_native, "timing": self.timing}


def model_feeds(graph: Graph, env: dict) -> dict:
    """What a run is given: the graph's inputs and its placeholder nodes (TF graphs feed those)."""
    names = [v.name for v in graph.inputs] + [n.name for n in graph.nodes if n.op == "placeholder"]
    return {name: env[name] for name in names if name in env}


def native_program(graph: Graph, rt: NativeRuntime, env: dict, folded: frozenset = frozenset()):
    """(callable of the graph inputs -> outputs, runtime name, why it fell back) for the whole graph; the nodes
    `folded` (of the clusters that fold to constants) are left out: their values are fed, as constants."""
    members = [i for i, n in enumerate(graph.nodes) if n.op != "placeholder" and i not in folded]
    spec = cluster_specs(graph, [members])[0]
    given = {r for r, parsed in zip(graph.outputs, graph.output_refs) if graph.position(parsed.node) in folded} \
        if folded else set()
    exits = [r for r in graph.outputs if r not in given]
    fn, name, why = prepare_or_numpy(rt, graph, members, spec.entries, exits, env)
    if given:   # outputs of a folded cluster: fed (the caller gives every folded value), not computed
        run = fn

        def fn(values: dict) -> list:
            outs = iter(run(values))
            return [values[r] if r in given else next(outs) for r in graph.outputs]
    return fn, name, why


class Hybrid:
    """The hybrid program of a clustering: steps in topological order, clusters compiled by `cache`."""

    def __init__(self, graph: Graph, clustering, rt: NativeRuntime, env: dict, cache,
                 constant: frozenset = frozenset()) -> None:
        from .execute import units
        from .hybrid_bodies import BodyPrograms, bodies_have_clusters, control_ops
        from .measure import resident

        n_clusters = len(clustering.clusters)
        order = units(graph, clustering.cluster_of, n_clusters)
        groups: list[tuple[str, object]] = []
        control = control_ops()
        self.bodies = BodyPrograms(rt, clustering.options, Hybrid)
        for kind, u in order:
            if kind == "node":
                node = graph.nodes[u]
                if node.op == "placeholder":
                    groups.append(("feed", node.name))
                elif node.op in control and bodies_have_clusters(node, clustering.options):
                    groups.append(("control", u))   # the runtime would run its bodies whole, their clusters too
                elif groups and groups[-1][0] == "segment":
                    groups[-1][1].append(u)
                else:
                    groups.append(("segment", [u]))
            else:
                groups.append(("cluster", u))
        seg_members = [g[1] for g in groups if g[0] == "segment"]
        specs = cluster_specs(graph, list(clustering.clusters) + seg_members)
        cluster_spec_of, seg_specs = specs[:n_clusters], iter(specs[n_clusters:])
        self.steps: list = []
        self.segments_on: dict[str, int] = {}
        self.why: list[str] = []
        for kind, u in groups:
            if kind == "feed":
                self.steps.append((kind, u, None))
            elif kind == "control":
                self.steps.append((kind, cluster_specs(graph, [[u]])[0], graph.nodes[u]))
            elif kind == "segment":
                spec = next(seg_specs)
                if not spec.entries and not any(graph.nodes[i].op in VOLATILE_OPS for i in spec.members):
                    # it reads nothing a call feeds (variables' handles and reads, constants, NoOps): its values
                    # are there before any call, resident as the clusters' parameters are (no native call per run)
                    self.steps.append(("constant", spec, [env[r] for r in spec.exits]))
                    continue
                fn, name, why = prepare_or_numpy(rt, graph, spec.members, spec.entries, spec.exits, env)
                self.segments_on[name] = self.segments_on.get(name, 0) + 1
                if why:
                    self.why.append(why)
                self.steps.append((kind, spec, fn))
            elif u in constant:   # folded when compiled, as natively: its values are there before any call
                spec = cluster_spec_of[u]
                self.steps.append(("constant", spec, [env[r] for r in spec.exits]))
            else:
                spec = cluster_spec_of[u]
                try:
                    comp, _ = cache.get(graph, spec, env)
                except Exception as e:  # noqa: BLE001 - as TF's lazy compilation: the cluster runs natively
                    cache.failed(graph, clustering.cluster_id(u), e)
                    fn, name, why = prepare_or_numpy(rt, graph, spec.members, spec.entries, spec.exits, env)
                    self.segments_on[name] = self.segments_on.get(name, 0) + 1
                    self.steps.append(("segment", spec, fn))
                    continue
                fed = resident(graph, spec, {r: env[r] for r in spec.entries})
                params = {r: v for r, v in fed.items() if v is not env[r]}   # resident on the device
                # an entry compiled in as a value that is no parameter (a loop body's iteration number reaching
                # a Slice's start) can change from run to run: the executable is looked up by its value each run
                varying = sorted(r for r in baked_entries(graph, spec) if r not in params)
                host = {r: env[r] for r in params} if varying else {}   # the key's values: NumPy, not the device's
                self.steps.append((kind, spec, (comp, params, varying, host)))
        self.graph, self.cache = graph, cache
        # per step, the refs it reads for the last time (a feed, a constant read none; the outputs stay)
        self.release = last_reads([spec.entries if kind in ("segment", "control", "cluster") else ()
                                   for kind, spec, _ in self.steps], graph.outputs).release

    def runtimes(self) -> tuple[dict, list]:
        """(runtime name -> segments it ran, the reasons parts fell back), the segments of the bodies run so
        far included (a body's program is built on its first run)."""
        on = dict(self.segments_on)
        for k, v in self.bodies.segments_on.items():
            on[k] = on.get(k, 0) + v
        return on, self.why + self.bodies.why

    def body_caches(self) -> list:
        """The CompileCaches of the bodies run so far (one per body, nested bodies' included)."""
        out = list(self.bodies.caches.values())
        for h in list(self.bodies.programs.values()):
            out += [c for c in h.body_caches() if all(c is not o for o in out)]
        return out

    def __call__(self, feeds: dict) -> dict:
        """The graph's outputs; each value leaves the env once the last step reading it ran (self.release)."""
        env = dict(feeds)
        for step, (kind, spec, fn) in enumerate(self.steps):
            if kind == "feed":
                env[spec] = feeds[spec]
                continue
            if kind == "segment":
                outs = fn(env)
            elif kind == "constant":
                outs = fn
            elif kind == "control":   # every output by its port (the spec's exits are a subset, in its order)
                outs = run_control(fn, env, self.bodies)
            else:
                comp, params, varying, host = fn
                if varying:
                    comp, _ = self.cache.get(self.graph, spec, {r: _host(host.get(r, env.get(r))) for r in spec.entries})
                outs = comp({r: params.get(r, env.get(r)) for r in spec.entries}, spec)
            exits = spec.exits if kind != "control" else [format_ref(fn.name, k) for k in range(len(outs))]
            for r, v in zip(exits, outs):
                env[r] = v
            for r in self.release[step]:
                env.pop(r, None)
        return {r: env[r] for r in self.graph.outputs}


def _host(v):
    """A value as the compile cache keys it: a device array (an earlier cluster's output) copied to NumPy."""
    return v if isinstance(v, (np.ndarray, np.generic)) or not hasattr(v, "__array__") else np.asarray(v)


def time_model(graph: Graph, clustering, rt: NativeRuntime, env: dict, cache, repeats: int | None,
               est_speedup: float | None, constant: frozenset = frozenset()) -> tuple[ModelTimes, dict]:
    """(the whole-model times, the outputs of each program run: {'native', 'optimized', 'hybrid'}). The
    clusters `constant` (that fold to constants: cost.params.constant_clusters) are left out of every side:
    their values are given, as a compiler folding them would have them, in the native runs and the hybrid."""
    missing = [r for r in graph.outputs if r not in env]
    if missing:
        return ModelTimes(None, None, None, est_speedup, rt.name,
                          why=f"output {missing[0]!r} cannot be computed natively"), {}
    feeds = model_feeds(graph, env)
    folded = frozenset(i for k in constant for i in clustering.clusters[k])
    if folded:
        feeds.update((r, env[r]) for r in cluster_specs(graph, [sorted(folded)])[0].exits)
    outputs: dict = {}
    native_fn, native_name, why = native_program(graph, rt, env, folded)
    use = runtime_named(rt, native_name)  # hybrid's segments on the runtime all-native ran on
    outputs["native"] = dict(zip(graph.outputs, native_fn(feeds)))
    fns = {"native": lambda: native_fn(feeds)}
    twin = getattr(use, "optimized_twin", None)
    if twin is not None:
        opt_fn, _, _ = native_program(graph, twin(), env, folded)
        outputs["optimized"] = dict(zip(graph.outputs, opt_fn(feeds)))
        fns["optimized"] = lambda: opt_fn(feeds)
    hybrid = Hybrid(graph, clustering, use, env, cache, constant)
    outputs["hybrid"] = {r: np.asarray(v) for r, v in hybrid(feeds).items()}
    fns["hybrid"] = lambda: hybrid(feeds)
    t = interleaved(fns, repeats, MODEL_BUDGET_S)   # all-native, optimized and hybrid in turn
    native_ms, hybrid_ms = t["native"].median_ms, t["hybrid"].median_ms
    optimized_ms = t["optimized"].median_ms if "optimized" in t else None
    on, whys = hybrid.runtimes()
    times = ModelTimes(native_ms, optimized_ms, hybrid_ms, est_speedup, native_name,
                       sum(on.values()), on, why or (whys[0] if whys else None),
                       getattr(use, "optimized_note", None) if twin is None else None)
    times.timing = {**t.to_json(), "speedup_quartiles": t.ratio("native", "hybrid")}
    return times, outputs


def run_on(graph: Graph, clustering, feeds: dict, mode: str, rt: NativeRuntime, cache, repeats: int | None,
           timed: bool = True) -> dict:
    """`run --mode native|hybrid` on the runtime `rt`: {outputs (by the model's names), first_run_ms (sessions
    made and clusters compiled), median_ms, runtime (what ran the native parts), fallback_segments, note}."""
    import time

    from .execute import execute

    # every value once on the NumPy reference: the types of the parts' boundaries, and what each part is checked against
    env = execute(graph, feeds, "native", keep_all=True).env
    t0 = time.perf_counter()
    if mode == "native":
        fn, name, why = native_program(graph, rt, env)

        def call() -> dict:
            return dict(zip(graph.outputs, fn(feeds)))
        segments: dict = {}
    else:
        h = Hybrid(graph, clustering, rt, env, cache)

        def call() -> dict:
            return h(feeds)
    first = call()
    bodies: list = []
    if mode != "native":
        bodies = h.body_caches()
        segments, whys = h.runtimes()
        why = whys[0] if whys else None
        name = rt.name if set(segments) <= {rt.name} else "+".join(sorted(segments))
    first_ms = (time.perf_counter() - t0) * 1e3
    ms = median_ms(call, repeats) if timed else None
    outputs = {graph.output_names.get(r, r): v if v is None or isinstance(v, Seq) else np.asarray(v)
               for r, v in first.items()}   # (a sequence stays one: run writes it as numbered tensors)
    stats = cache.stats()
    for c in bodies:   # (as subgraphs.run_stats counts a NumPy-path run's bodies)
        for k, v in c.stats().items():
            stats[k] += v
    return {"outputs": outputs, "fallbacks": list(cache.failures) + [f for c in bodies for f in c.failures],
            "cache": stats, "compile_ms": stats.get("compile_seconds", 0.0) * 1e3,
            "first_run_ms": first_ms, "median_ms": ms, "runtime": name,
            "fallback_segments": sum(segments.values()), "fallback_segments_on": dict(sorted(segments.items())),
            "note": why}
