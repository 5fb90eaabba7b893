"""Execute a whole graph in topological order, like TF's executor: native, hybrid or jit.

hybrid: every kept cluster runs as one compiled XLA executable, every other node natively (NumPy).
native: every node natively. jit: every node with a JAX lowering joins a cluster (min size 1, `compile:
false` ignored), so the graph runs under as few jax.jit executables as its fallback ops allow (one, when
every op compiles). Symbolic dimensions are bound from the given inputs.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import msgspec
import numpy as np

from ..errors import XcvizError
from ..ir import Graph, format_ref, unit_order
from .identity import Same
from .inputs import bind_inputs
from .jit import CompileCache, Compiled, baked_entries, cluster_specs
from ..ops.values import as_value
from .node import run_node
from .missing import preflight
from .frames import Schedule, has_v1_flow, run_frames
from .subgraphs import BodyRun, body_caches, bodies_run, run_failures, run_stats

MODES = ("hybrid", "native", "jit")


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    mode: str
    seconds: float                       # wall time of this run (compiles included when they happened)
    compile_seconds: float = 0.0
    cache: dict = field(default_factory=dict)
    env: dict | None = None              # every tensor (keep_all=True), for validation; else each is freed after its last use
    fallbacks: list = field(default_factory=list)  # clusters XLA could not compile, run natively: {cluster, graph, error}
    by_ref: dict = field(default_factory=dict)   # the outputs by the graph's refs (a body's results, in its order)


def units(graph: Graph, cluster_of: list[int], n_clusters: int) -> list[tuple[str, int]]:
    """Topological order of clusters (contracted) and lone nodes: [('cluster', k) | ('node', i)] (ir.unit_order)."""
    order = unit_order(graph, cluster_of, n_clusters)
    if order is None:
        raise XcvizError("clusters form a cycle; this clustering cannot execute", hint="this is a bug in the clustering pass")
    return order


def jit_clustering(graph: Graph):
    """Every node with a JAX lowering is a candidate, min size 1, `compile: false` ignored."""
    from ..clustering import ClusterOptions, run_clustering
    from ..ops import LISTS, REGISTRY

    g2 = dataclasses.replace(graph, nodes=[msgspec.structs.replace(n, compile=None) for n in graph.nodes])
    # in a graph with frames a TensorList lives between ops of the frame executor: never inside a cluster
    skip = LISTS if has_v1_flow(graph) else None
    ops = frozenset(o.name for o in REGISTRY if o.jax is not None and skip not in o.groups)
    return run_clustering(g2, ClusterOptions(strategy="mark", min_cluster_size=1, supported_ops=ops, record=False))


@dataclass
class Plan:
    """What execution needs that depends only on the graph and its clustering, computed once per graph.

    units (clusters contracted, in topological order), each cluster's entry/exit tensors and baked inputs,
    and per cluster the executables already bound to an input signature, so a repeated run does no
    clustering, no structural hashing, no tracing and no compiling: it looks up and calls."""

    clustering: object | None
    units: list[tuple[str, int]]
    specs: dict[int, object] = field(default_factory=dict)
    baked: dict[int, frozenset] = field(default_factory=dict)
    bound: dict[int, dict] = field(default_factory=dict)   # cluster -> input signature -> Compiled
    bodies: dict = field(default_factory=dict)   # body (ir.Body) -> its CompileCache (bodies run per iteration)
    frames: object | None = None   # a TF1 graph's frames.Schedule (control flow v1), made on its first run
    lifetimes: "Lifetimes | None" = None   # when each value is read for the last time, made on the first run


@dataclass(frozen=True)
class Lifetimes:
    """When a run may free each value, as torch.fx's Interpreter does: `release[p]`, the refs that unit p reads
    for the last time (freed once it ran); `read`, every ref some unit reads or the graph returns (a value outside
    it, e.g. an output nobody uses, is never stored). The graph's outputs are never released."""

    release: tuple[tuple[str, ...], ...]
    read: frozenset


def lifetimes(graph: Graph, units: list, specs: dict) -> Lifetimes:
    """Each ref's last reader among the units in order (a cluster reads its members' inputs: its entries, and the
    values its members pass each other when it runs natively); the graph's outputs are kept."""
    nodes = graph.nodes
    reads = [[r for i in (specs[u].members if kind == "cluster" else (u,)) for r in nodes[i].inputs]
             for kind, u in units]
    return last_reads(reads, graph.outputs)


def last_reads(reads: list, keep) -> Lifetimes:
    """The Lifetimes of a run of steps in order, `reads[p]` the refs step p reads ('' an absent input), `keep`
    the refs never released: each other ref is released by the last step that reads it. (Every run that frees
    values computes them here: execute's units, native.NumpyRuntime's nodes, wholemodel.Hybrid's steps.)"""
    last: dict[str, int] = {}
    for p, refs in enumerate(reads):
        for r in refs:
            if r:
                last[r] = p
    kept = set(keep)
    release: list[list[str]] = [[] for _ in reads]
    for r, p in last.items():
        if r not in kept:
            release[p].append(r)
    return Lifetimes(tuple(map(tuple, release)), frozenset(last) | kept)


def make_plan(graph: Graph, clustering) -> Plan:
    n_clusters = len(clustering.clusters) if clustering is not None else 0
    cluster_of = clustering.cluster_of if clustering is not None else [-1] * len(graph.nodes)
    plan = Plan(clustering, units(graph, cluster_of, n_clusters))
    if n_clusters:
        for k, spec in enumerate(cluster_specs(graph, clustering.clusters)):
            plan.specs[k], plan.baked[k], plan.bound[k] = spec, frozenset(baked_entries(graph, spec)), {}
    return plan


def _signature(spec, baked: frozenset, env: dict) -> tuple:
    """Shapes and dtypes of the arguments, values of the baked (compile-time constant) entries."""
    sig = []
    for r in spec.entries:
        v = env[r]
        if r in baked:
            a = np.asarray(v)
            sig.append((a.shape, a.dtype.str, a.tobytes() if a.size <= 4096 else _digest(a)))
        else:
            try:
                sig.append((v.shape, v.dtype.str))
            except AttributeError:  # a sequence or an empty optional (ops.values): no XLA type
                from ..ops.arrays import Unsupported

                raise Unsupported(f"{r!r} is a sequence or an empty optional: it cannot enter an XLA cluster") from None
    return tuple(sig)


def _digest(a: np.ndarray) -> str:
    import hashlib

    return hashlib.sha1(np.ascontiguousarray(a).tobytes()).hexdigest()


_PLANS_PER_CACHE = 16


def plan_for(graph: Graph, mode: str, clustering, cache, options=None) -> Plan:
    """The cached plan for (graph, mode, clustering or options); the clustering pass runs on a miss only."""
    if mode == "native":
        key: tuple = ("native",)
    elif mode == "jit":
        key = ("jit",)
    elif clustering is not None:
        key = ("hybrid", "clustering", Same(clustering))   # the clustering itself (not its id: see identity.Same)
    else:
        key = ("hybrid", "options", options)
    plans = cache.plans
    plan = plans.get(key)
    if plan is not None:
        plans[key] = plans.pop(key)  # most recently used last
        return plan
    preflight(graph)  # every op it cannot execute, in one line, before anything runs
    if mode == "jit":
        clustering = jit_clustering(graph)
    elif mode == "hybrid" and clustering is None:
        from ..clustering import ClusterOptions, run_clustering

        clustering = run_clustering(graph, options or ClusterOptions())
    plan = make_plan(graph, clustering if mode != "native" else None)
    plans[key] = plan
    while len(plans) > _PLANS_PER_CACHE:
        plans.pop(next(iter(plans)))
    return plan


# Default caches for callers that pass none (the Python API): one per graph object, kept on the graph itself
# (Graph.run_state, as its index is), so it lives as long as the graph and a new graph never sees a stale one.
_GENERATION = [0]   # bumped by clear_caches: a cache made before it is not handed out again


def graph_cache(graph: Graph):
    """The default CompileCache of this graph object (its plans and executables survive between runs; a
    Graph never changes, and a changed one is a new object with a cache of its own)."""
    state = graph.run_state
    entry = state.get("compile_cache")
    if entry is None or entry[0] != _GENERATION[0]:
        entry = state["compile_cache"] = (_GENERATION[0], CompileCache())
    return entry[1]


def clear_caches() -> None:
    """Drop every default per-graph cache (plans and compiled executables)."""
    _GENERATION[0] += 1


def execute(graph: Graph, feeds: dict[str, np.ndarray], mode: str = "hybrid", clustering=None, cache=None,
            keep_all: bool = False, options=None) -> RunResult:
    """Run the graph once. `cache` (a CompileCache) keeps plans and executables between calls; without one
    the graph's default cache is used, so repeated runs never cluster, trace or compile again."""
    if mode not in MODES:
        raise XcvizError(f"unknown mode {mode!r}", hint="use --mode hybrid, native or jit")
    cache = cache if cache is not None else graph_cache(graph)
    compile_before = cache.compile_seconds
    failed_before = len(run_failures(cache))
    t0 = time.perf_counter()
    plan = plan_for(graph, mode, clustering if mode == "hybrid" else None, cache, options)
    bodies_before = _body_compile_seconds(plan)
    with bodies_run(_body_run(graph, plan, mode, options)):
        if has_v1_flow(graph):  # (jit too falls back, said in `fallbacks`: a TensorList may pass an Identity)
            env = _run_frames(graph, feeds, plan, cache, lazy=True, keep_all=keep_all)
        else:
            env = _run_units(graph, feeds, plan, cache, lazy=mode != "jit", keep_all=keep_all)
    seconds = time.perf_counter() - t0
    outputs = {graph.output_names.get(ref, ref): env[ref] for ref in graph.outputs}  # the model's own names
    compiled = cache.compile_seconds - compile_before + _body_compile_seconds(plan) - bodies_before
    return RunResult(outputs, mode, seconds, compiled, run_stats(cache), env if keep_all else None,
                     run_failures(cache)[failed_before:], {ref: env[ref] for ref in graph.outputs})


def _body_run(graph: Graph, plan: Plan, mode: str, options) -> BodyRun | None:
    """How bodies of Loop / If / Scan nodes left outside every cluster run: in a hybrid run, per iteration with
    their own clusters compiled (the body's clustering with the run's options); else natively (in a jit run,
    such a node holds what no cluster can, e.g. sequences, that jit's clustering would push into one)."""
    if mode != "hybrid":
        return None
    clusterings: dict = {}
    if plan.clustering is not None:
        options = plan.clustering.options
        for b in plan.clustering.bodies:  # the pass clustered each body once: a body runs with its clustering
            j = graph.index.get(b.node)
            if j is not None and b.attr in graph.nodes[j].attrs:
                clusterings.setdefault(graph.nodes[j].attrs[b.attr], b.clustering)
    return BodyRun(options, plan.bodies, execute, clusterings, new_cache=CompileCache)


def _body_compile_seconds(plan: Plan) -> float:
    return sum(c.compile_seconds for c in body_caches(plan.bodies)) if plan.bodies else 0.0


def _run_units(graph: Graph, feeds: dict, plan: Plan, cache, lazy: bool = True, keep_all: bool = False) -> dict:
    """The graph's outputs (every tensor with `keep_all`): lone nodes natively, clusters through their bound
    executables, each value freed after its last reader ran (Plan.lifetimes). `lazy` (a hybrid run): a cluster XLA
    cannot compile runs natively, as TF's lazy compilation; a jit run, which asks for XLA everywhere, raises."""
    if plan.lifetimes is None:
        plan.lifetimes = lifetimes(graph, plan.units, plan.specs)
    release, read = plan.lifetimes.release, (None if keep_all else plan.lifetimes.read)
    env: dict = {}
    for v in graph.inputs:
        if v.name in feeds:  # (an input nothing reads may have no value)
            env[v.name] = feeds[v.name]
    nodes = graph.nodes
    for p, (kind, u) in enumerate(plan.units):
        if kind == "node":
            node = nodes[u]
            if node.op == "placeholder":
                env[node.name] = feeds[node.name]
            else:
                outs = run_node(node, [env[r] if r else None for r in node.inputs])
                for k, v in enumerate(outs):
                    ref = format_ref(node.name, k)
                    if read is None or ref in read:
                        env[ref] = as_value(v)  # sequences and empty optionals stay as they are
                del outs
        else:
            _run_cluster(graph, plan, u, env, cache, lazy, read)
        if read is not None:
            for r in release[p]:
                env.pop(r, None)
    return env


def _run_cluster(graph: Graph, plan: Plan, u: int, env: dict, cache, lazy: bool, read: frozenset | None = None) -> None:
    """Cluster `u` through its bound executable (compiled on a first signature), its exits into `env`; natively
    when XLA cannot compile it and the run is lazy (storing only the values in `read`, when given)."""
    spec = plan.specs[u]
    sig = None
    try:
        sig = _signature(spec, plan.baked[u], env)
        comp = plan.bound[u].get(sig)
        if comp is None:
            comp, _ = cache.get(graph, spec, env, plan.baked[u])
            plan.bound[u][sig] = comp
        elif isinstance(comp, Compiled):
            cache.hit(comp)
        outs = comp(env, spec) if isinstance(comp, Compiled) else None
    except Exception as e:  # noqa: BLE001 - TF's lazy compilation: a cluster XLA cannot compile runs natively
        if not lazy:
            raise
        outs = None
        comp = cache.failed(graph, plan.clustering.cluster_id(u), e)
        if sig is not None:
            plan.bound[u][sig] = comp
    if outs is None:
        _run_natively(graph.nodes, spec, env, read)
        return
    for r, v in zip(spec.exits, outs):
        env[r] = v


def _run_frames(graph: Graph, feeds: dict, plan: Plan, cache, lazy: bool, keep_all: bool = False) -> dict:
    """A TF1 graph with control flow v1: frames and deadness (runtime/frames.py); clusters run per iteration. A
    value lives while a unit still waits for it; the env keeps only the graph's outputs unless `keep_all`."""
    if plan.frames is None:
        plan.frames = Schedule(graph, plan.units, plan.specs)
    sched = plan.frames

    def run_unit(uid: int, vals: list) -> dict:
        kind, u = sched.units[uid]
        if kind == "node":
            node = graph.nodes[u]
            return {format_ref(node.name, k): as_value(v) for k, v in enumerate(run_node(node, vals))}
        spec = plan.specs[u]
        local = dict(zip(spec.entries, vals))
        _run_cluster(graph, plan, u, local, cache, lazy)
        return {r: local[r] for r in spec.exits}

    outputs = frozenset(graph.outputs) | {str(r) for r in graph.output_refs}
    return run_frames(sched, feeds, run_unit, keep=None if keep_all else outputs)


def _run_natively(nodes, spec, env: dict, read: frozenset | None = None) -> None:
    """A cluster's members one by one with their native implementations (the fallback of a failed compile); only
    the values in `read` are stored, when given."""
    for i in spec.members:
        node = nodes[i]
        for k, v in enumerate(run_node(node, [env[r] if r else None for r in node.inputs])):
            ref = format_ref(node.name, k)
            if read is None or ref in read:
                env[ref] = as_value(v)


def run_graph(graph: Graph, inputs: dict | None = None, mode: str = "hybrid", clustering=None, seed: int | None = None,
              cache=None, **cluster_kw) -> dict[str, np.ndarray]:
    """Python API: outputs keyed by graph output name (random inputs from `seed` for any not given).

    Repeated calls on the same Graph reuse its plan and executables (see `execute`)."""
    options = None
    if clustering is None and cluster_kw and mode == "hybrid":
        from ..clustering import ClusterOptions

        options = ClusterOptions(**cluster_kw, op_names="graph")  # (xcviz.run: names an opaque op of the graph may be)
    feeds = bind_inputs(graph, inputs, seed if seed is not None or inputs else 0)
    result = execute(graph, feeds, mode, clustering, cache, options=options)
    for f in result.fallbacks:
        import warnings

        warnings.warn(fallback_line(f), RuntimeWarning, stacklevel=2)
    return result.outputs


def fallback_line(f: dict) -> str:
    """The warning for a cluster that ran natively because XLA could not compile it."""
    return f"{f['cluster']} of {f['graph']} did not compile and ran natively (as TF's lazy compilation falls " \
           f"back): {f['error']}"
