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

from .errors import XcvizError
from .ir import Graph, TensorType, bind_dims, format_ref, parse_ref, topo_order

MODES = ("hybrid", "native", "jit")


@dataclass
class RunResult:
    outputs: dict[str, np.ndarray]
    mode: str
    seconds: float                       # wall time of this run (compiles included when they happened)
    compile_seconds: float = 0.0
    cache: dict = field(default_factory=dict)
    env: dict | None = None              # every tensor (keep_all=True), for validation


# Random inputs are refused beyond this many elements in all (--max-elements): a --dim typo such as
# seq=100000000 should be one clear error, not a MemoryError after minutes of swapping.
DEFAULT_MAX_ELEMENTS = 50_000_000


def input_shape(t: TensorType, dims: dict, name: str = "") -> list[int]:
    if t.shape is None:
        raise XcvizError(f"input {name!r} has unknown shape", hint="give its values with --inputs FILE.npz")
    shape = []
    for d in t.shape:
        if isinstance(d, str):
            if d not in dims:
                raise XcvizError(f"input {name!r} has symbolic dimension {d!r}", hint=f"bind it with --dim {d}=N or give --inputs")
            d = dims[d]
        shape.append(int(d))
    return shape


def random_array(t: TensorType, rng: np.random.Generator, dims: dict, name: str = "") -> np.ndarray:
    shape = input_shape(t, dims, name)
    dt = np.dtype(t.dtype or "float32") if t.dtype not in ("bfloat16", "string", None) else np.dtype("float32")
    if dt.kind == "f":  # drawn as float64 then cast: the values for a seed stay the same across dtypes
        return rng.standard_normal(shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(0, 4, size=shape).astype(dt)


def _feed_points(graph: Graph) -> list[tuple[str, TensorType, object]]:
    """(name, type, constant data or None) for graph inputs and placeholder nodes."""
    pts = [(v.name, v.type, v.data) for v in graph.inputs]
    pts += [(n.name, n.out(0), None) for n in graph.nodes if n.op == "placeholder"]
    return pts


def _shape_text(shape) -> str:
    return "[" + ",".join(map(str, shape)) + "]"


def _check_given(name: str, t: TensorType, arr: np.ndarray, dims: dict, where: str | None) -> np.ndarray:
    """A given input against its declared type: rank, fixed dims, consistent symbolic dims, dtype."""
    declared = f"the graph declares {name}: {t}"
    if t.shape is not None:
        if arr.ndim != len(t.shape):
            raise XcvizError(f"input {name!r} has shape {_shape_text(arr.shape)} (rank {arr.ndim}), expected rank "
                             f"{len(t.shape)}: {t}", where=where, hint=declared)
        for d, n in zip(t.shape, arr.shape):
            if isinstance(d, str):
                if dims.setdefault(d, n) != n:
                    raise XcvizError(f"input {name!r}: dimension {d!r} is {n} here but {dims[d]} in an earlier input",
                                     where=where, hint=f"every input must agree on {d!r}")
            elif d != n:
                raise XcvizError(f"input {name!r} has shape {_shape_text(arr.shape)}, expected {t}", where=where,
                                 hint=declared)
    if t.dtype and t.dtype not in ("string", "bfloat16") and arr.dtype != np.dtype(t.dtype):
        want = np.dtype(t.dtype)
        # same kind (float64 -> float32) or integers/bools into any numeric type convert; the rest is refused
        if arr.dtype.kind == want.kind or (arr.dtype.kind in "iub" and want.kind in "iufb"):
            return arr.astype(want)
        raise XcvizError(f"input {name!r} has dtype {arr.dtype}, expected {t.dtype}", where=where,
                         hint=f"{declared}; save it with .astype('{t.dtype}')")
    return arr


def bind_inputs(graph: Graph, inputs: dict | None = None, seed: int | None = None,
                max_elements: int | None = DEFAULT_MAX_ELEMENTS) -> dict[str, np.ndarray]:
    """Feeds for every input: given, else the constant, else seeded random (symbolic dims bound from given ones).

    `inputs` may carry a `source` attribute (the .npz path) used as the `where` of its errors. Random
    inputs stop at `max_elements` elements in all (None: no limit)."""
    where = getattr(inputs, "source", None)
    inputs = dict(inputs or {})
    points = _feed_points(graph)
    known = {p[0] for p in points}
    extra = sorted(set(inputs) - known)
    if extra:
        from .errors import did_you_mean

        raise XcvizError(f"unknown input {extra[0]!r}", where=where,
                         hint=did_you_mean(extra[0], known) or "graph inputs: " + ", ".join(sorted(known)))
    dims: dict[str, int] = {}  # bound by these inputs (they win over earlier bindings and --dim)
    feeds: dict[str, np.ndarray] = {}
    for name, t, data in points:
        if name in inputs:
            feeds[name] = _check_given(name, t, np.asarray(inputs[name]), dims, where)
    rng = np.random.default_rng(0 if seed is None else seed)
    positive = _positive_inputs(graph)
    missing = []
    generated = 0
    for name, t, data in points:
        if name in feeds:
            continue
        if data is not None:
            feeds[name] = np.asarray(data)
        elif seed is None and inputs:
            missing.append(name)
        else:
            dims_here = {**{d: 1 for d in _symbols(t)}, **graph.dims, **dims}
            shape = input_shape(t, dims_here, name)
            generated += int(np.prod(shape, dtype=object))
            if max_elements is not None and generated > max_elements:
                raise XcvizError(f"random inputs would need {generated:,} elements, over the limit of {max_elements:,} "
                                 f"(input {name!r} is {t.dtype or 'float32'}{_shape_text(shape)})",
                                 hint="bind smaller symbolic dims with --dim, give --inputs FILE.npz, or raise --max-elements")
            feeds[name] = random_array(t, rng, dims_here, name)
            if name in positive and feeds[name].dtype.kind == "f":
                feeds[name] = np.abs(feeds[name]) + feeds[name].dtype.type(0.5)
            for d, n in zip(t.shape or (), feeds[name].shape):
                if isinstance(d, str):
                    dims.setdefault(d, n)
    if missing:
        raise XcvizError(f"missing input {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
                         where=where, hint="give every graph input in the .npz, or pass --seed N for random ones")
    bind_dims(graph, dims)
    return feeds


def _positive_inputs(graph: Graph) -> set[str]:
    """Inputs whose random values must be positive (variances, square roots, logarithms): the entries say which."""
    from .ops import REGISTRY

    slots = {(o.name, k) for o in REGISTRY for k in o.positive_inputs}
    return {ref for n in graph.nodes for k, ref in enumerate(n.inputs) if (n.op, k) in slots}


def _symbols(t: TensorType) -> list[str]:
    return [d for d in (t.shape or ()) if isinstance(d, str)]


def units(graph: Graph, cluster_of: list[int], n_clusters: int) -> list[tuple[str, int]]:
    """Topological order of clusters (contracted) and lone nodes: [('cluster', k) | ('node', i)]."""
    ids = []
    unit_of = []
    for i, c in enumerate(cluster_of):
        unit_of.append(c if c >= 0 else n_clusters + i)
    present = sorted(set(unit_of))
    pos = {u: p for p, u in enumerate(present)}
    preds: list[set[int]] = [set() for _ in present]
    idx = graph.index
    for j, node in enumerate(graph.nodes):
        for ref in (*node.inputs, *node.control_inputs):
            i = idx.get(parse_ref(ref)[0]) if ref else None
            if i is not None and unit_of[i] != unit_of[j]:
                preds[pos[unit_of[j]]].add(pos[unit_of[i]])
    order = topo_order(len(present), [sorted(p) for p in preds])
    if order is None:
        raise XcvizError("clusters form a cycle; this clustering cannot execute", hint="this is a bug in the clustering pass")
    for p in order:
        u = present[p]
        ids.append(("cluster", u) if u < n_clusters else ("node", u - n_clusters))
    return ids


def jit_clustering(graph: Graph):
    """Every node with a JAX lowering is a candidate, min size 1, `compile: false` ignored."""
    from .clustering import ClusterOptions, run_clustering
    from .ops import REGISTRY
    from .ops.impl import install

    install()
    g2 = dataclasses.replace(graph, nodes=[msgspec.structs.replace(n, compile=None) for n in graph.nodes], _index=None)
    ops = frozenset(o.name for o in REGISTRY if o.jax is not None)
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


def make_plan(graph: Graph, clustering) -> Plan:
    from .jit import baked_entries, cluster_specs

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
            sig.append((v.shape, v.dtype.str))
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
        key = ("hybrid", "clustering", id(clustering))   # the plan holds the clustering: the id stays its own
    else:
        key = ("hybrid", "options", options)
    plans = cache.plans
    plan = plans.get(key)
    if plan is not None and (key[-2:-1] != ("clustering",) or plan.clustering is clustering):
        plans[key] = plans.pop(key)  # most recently used last
        return plan
    if mode == "jit":
        clustering = jit_clustering(graph)
    elif mode == "hybrid" and clustering is None:
        from .clustering import ClusterOptions, run_clustering

        clustering = run_clustering(graph, options or ClusterOptions())
    plan = make_plan(graph, clustering if mode != "native" else None)
    plans[key] = plan
    while len(plans) > _PLANS_PER_CACHE:
        plans.pop(next(iter(plans)))
    return plan


# Default caches for callers that pass none (the Python API): one per graph object, a few graphs kept.
_GRAPH_CACHES: dict[int, tuple] = {}
_GRAPHS_KEPT = 4


def _fingerprint(graph: Graph) -> tuple:
    # a graph is treated as immutable once run; replacing nodes, inputs or outputs starts a new cache
    return (id(graph.nodes), tuple(map(id, graph.nodes)), tuple(map(id, graph.inputs)), tuple(graph.outputs))


def graph_cache(graph: Graph):
    """The default CompileCache of this graph object (its plans and executables survive between runs)."""
    from .jit import CompileCache

    fp = _fingerprint(graph)
    entry = _GRAPH_CACHES.pop(id(graph), None)
    if entry is None or entry[0] is not graph or entry[1] != fp:
        entry = (graph, fp, CompileCache())   # holding the graph keeps its id from being reused
    _GRAPH_CACHES[id(graph)] = entry
    while len(_GRAPH_CACHES) > _GRAPHS_KEPT:
        _GRAPH_CACHES.pop(next(iter(_GRAPH_CACHES)))
    return entry[2]


def clear_caches() -> None:
    """Drop every default per-graph cache (plans and compiled executables)."""
    _GRAPH_CACHES.clear()


def execute(graph: Graph, feeds: dict[str, np.ndarray], mode: str = "hybrid", clustering=None, cache=None,
            keep_all: bool = False, options=None) -> RunResult:
    """Run the graph once. `cache` (a CompileCache) keeps plans and executables between calls; without one
    the graph's default cache is used, so repeated runs never cluster, trace or compile again."""
    from .jit import eval_node

    if mode not in MODES:
        raise XcvizError(f"unknown mode {mode!r}", hint="use --mode hybrid, native or jit")
    cache = cache if cache is not None else graph_cache(graph)
    compile_before = cache.compile_seconds
    t0 = time.perf_counter()
    plan = plan_for(graph, mode, clustering if mode == "hybrid" else None, cache, options)
    env: dict = {}
    for v in graph.inputs:
        env[v.name] = feeds[v.name]
    nodes = graph.nodes
    for kind, u in plan.units:
        if kind == "node":
            node = nodes[u]
            if node.op == "placeholder":
                env[node.name] = feeds[node.name]
                continue
            outs = eval_node(node, [env[r] if r else None for r in node.inputs])
            for k, v in enumerate(outs):
                env[format_ref(node.name, k)] = np.asarray(v)
        else:
            spec = plan.specs[u]
            sig = _signature(spec, plan.baked[u], env)
            comp = plan.bound[u].get(sig)
            if comp is None:
                comp, _ = cache.get(graph, spec, env, plan.baked[u])
                plan.bound[u][sig] = comp
            else:
                cache.hit(comp)
            for r, v in zip(spec.exits, comp(env, spec)):
                env[r] = v
    seconds = time.perf_counter() - t0
    outputs = {graph.output_names.get(ref, ref): env[ref] for ref in graph.outputs}  # the model's own names
    return RunResult(outputs, mode, seconds, cache.compile_seconds - compile_before, cache.stats(),
                     env if keep_all else None)


def run_graph(graph: Graph, inputs: dict | None = None, mode: str = "hybrid", clustering=None, seed: int | None = None,
              cache=None, **cluster_kw) -> dict[str, np.ndarray]:
    """Python API: outputs keyed by graph output name (random inputs from `seed` for any not given).

    Repeated calls on the same Graph reuse its plan and executables (see `execute`)."""
    options = None
    if clustering is None and cluster_kw and mode == "hybrid":
        from .clustering import ClusterOptions

        options = ClusterOptions(**cluster_kw)
    feeds = bind_inputs(graph, inputs, seed if seed is not None or inputs else 0)
    return execute(graph, feeds, mode, clustering, cache, options=options).outputs


def compare(got: np.ndarray, ref: np.ndarray) -> dict:
    """max abs error, relative error (max abs / max |ref|), and ok under dtype-aware tolerances."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return {"max_abs": None, "max_rel": None, "ok": False, "why": f"shape {got.shape} != {ref.shape}"}
    if ref.dtype.kind not in "fc":
        same = bool(np.array_equal(got, ref))
        return {"max_abs": 0.0 if same else float("inf"), "max_rel": 0.0 if same else float("inf"), "ok": same,
                "why": None if same else "values differ"}
    g, r = got.astype(np.float64), ref.astype(np.float64)
    finite = np.isfinite(r)
    if not np.array_equal(finite, np.isfinite(g)) or not np.array_equal(np.isnan(g), np.isnan(r)):
        return {"max_abs": float("inf"), "max_rel": float("inf"), "ok": False, "why": "NaN/Inf pattern differs"}
    if not finite.any():
        return {"max_abs": 0.0, "max_rel": 0.0, "ok": True, "why": None}
    diff = np.abs(g[finite] - r[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(r[finite]).max()) if diff.size else 0.0
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    rtol = {"float64": 1e-9, "float32": 1e-4, "float16": 1e-2, "bfloat16": 2e-2}.get(str(ref.dtype), 1e-4)
    ok = bool(max_abs <= 1e-6 if scale == 0 else rel <= rtol)
    return {"max_abs": max_abs, "max_rel": rel, "ok": ok, "why": None if ok else f"relative error {rel:.2e} > {rtol:g}"}
