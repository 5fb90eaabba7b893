"""Strategy `mark`: TensorFlow's MarkForCompilationPass on integer ids and arrays, by the compiled kernel (_kernel/).

One implementation for every graph, TensorFlow's rules included; mark_reference.py is its executable
specification (the tests check identical clusters and every attempt record, on random DAGs, graphs/ and
TF's own dumps). Attempts are kept as an integer table (attempts.AttemptLog) and turned into Attempt
objects only when read; the per-node lists are made from the kernel's arrays only when read (deferred.py).
"""
from __future__ import annotations

import numpy as np

from ..errors import XcvizError
from ..ops import NOOP, REGISTRY, SHAPE_CONSUMER, ZERO_SIZE
from .attempts import AttemptLog
from .deferred import Deferred
from .options import Candidates, ClusterOptions
from .result import MIN_SIZE, Clustering, below_min_size, keeps_cluster, kept

_MAX = np.int64(2**62)


def edges_in_order(graph, base: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """Data and control edges in the order the reference inserts them (node order, inputs, controls), for
    cycle_graph.graph_edges: (sources, count per node, whether the sources are the graph's positions)."""
    pos = graph.columns
    control = pos.column("control_inputs", keep=False)
    if control.count(()) == len(control):  # (identity first: one shared empty tuple is cheap to count)
        return pos.src, pos.lens, True  # the common case: the graph's integer edges, made ids by the kernel
    idx = graph.index
    n = len(pos.lens)
    srcl: list[int] = []
    lens = np.zeros(n, np.int64)
    sa = srcl.append
    for j, ctl in enumerate(control):
        k = len(srcl)
        for s in graph.input_sources(j):  # (a node's position, n + i for graph input i, -1 absent)
            if s >= 0:
                sa(base + s if s < n else 2 + s - n)
        for ref in ctl:
            sa(base + idx[ref])
        lens[j] = len(srcl) - k
    return np.array(srcl, np.int64), lens, False


def mark_for_compilation(graph, cands: Candidates, opts: ClusterOptions, progress=None) -> Clustering:
    from . import _kernel as K

    cols = graph.columns
    n = len(cols.op)
    base = 2 + len(graph.inputs)
    tf = getattr(cands, "tf", None)      # TensorFlow's own cycle graph, deadness and resource rules (tf_rules.py)
    N = base + n + (tf.extra_nodes if tf is not None else 0)

    if cands.kind_of is not None and len(cands.kind_of) == n:
        # devices, ops and candidacy from the few distinct decisions find_candidates made
        kind_of = np.asarray(cands.kind_of, np.int64)
        kinds = cands.kinds
        dev_code: dict = {}
        kind_dev = np.array([dev_code.setdefault(k[0], len(dev_code)) for k in kinds], np.int64)
        op_code: dict = {}
        kind_op = np.array([op_code.setdefault((k[1], k[2]), len(op_code)) for k in kinds], np.int64)
        ok = np.array([k[3] for k in kinds], np.bool_)[kind_of] if kinds else np.zeros(0, np.bool_)
        device = np.full(N, -1, np.int32)
        device[base:base + n] = kind_dev[kind_of] if kinds else []
        codes = kind_op[kind_of] if kinds else np.zeros(0, np.int64)
        node_forced = np.array([keeps_cluster(REGISTRY.ops.get(k[1]) if k[2] else None, k[4]) for k in kinds],
                               np.bool_)[kind_of] if kinds else []
    else:
        ok = np.array(cands.ok, dtype=np.bool_)
        dev_code = {}
        device = np.full(N, -1, np.int32)
        device[base:base + n] = [dev_code.setdefault(d, len(dev_code)) for d in cands.device]
        op_code = {}
        codes = np.array([op_code.setdefault(k, len(op_code)) for k in zip(cols.op, cols.known)], np.int64)
        node_forced = tf.keep if tf is not None else [
            keeps_cluster(REGISTRY.ops.get(op) if known else None, c)
            for op, known, c in zip(cols.op, cols.known, cols.column("compile"))]
    dev_names = list(dev_code)
    scope = np.full(N, -1, np.int32)
    scope_id, scope_vals = cols.codes("scope")
    scope_names = [sc for sc in scope_vals if sc is not None]
    if scope_names:  # numbered in order of first appearance, None as -1
        number = {sc: k for k, sc in enumerate(scope_names)}
        scope[base:base + n] = np.array([number.get(sc, -1) for sc in scope_vals], np.int32)[scope_id]
    # per-op facts looked up once per distinct op, then spread to nodes by an op code
    op_groups = [REGISTRY.ops[op].groups if known and op in REGISTRY.ops else frozenset() for op, known in op_code]
    zero = np.array([ZERO_SIZE in g for g in op_groups] + [False], np.bool_)[codes]
    shape_c = np.array([SHAPE_CONSUMER in g for g in op_groups] + [False], np.bool_)[codes]
    noop = np.array([NOOP in g for g in op_groups] + [False], np.bool_)[codes]
    eff = np.zeros(N, np.int32)
    eff[base:base + n] = ~zero
    forced = np.zeros(N, np.uint8)
    forced[base:base + n] = node_forced
    groups = np.where(shape_c, 1, np.where(noop, 2, 0)).astype(np.int32)  # (2 stays where no successor: the kernel)
    max_size = _MAX if opts.max_cluster_size is None else np.int64(opts.max_cluster_size)

    G, has_out = _cycle_graph(graph, tf, base, n, N)
    changed, table, paths, grouped, sizes, g_root = K.run_pass(
        G, has_out, ok.view(np.uint8), base, device, scope, eff, forced, groups, max_size, bool(opts.record),
        n + n // 4 + 16 if opts.record else 16, _tf_arrays(tf, n) if tf is not None else None)
    del G
    if progress:
        progress(4)
    if changed:
        raise XcvizError("edge contraction is not idempotent (a bug in xcviz)", code=1)
    attempts = AttemptLog(table, paths, cols, dev_names, scope_names, opts.max_cluster_size,
                          tf.dead_text if tf is not None else None)
    return _assemble(opts, cands, n, grouped, sizes, eff[g_root], forced[g_root].astype(np.bool_), attempts)


def _cycle_graph(graph, tf, base: int, n: int, N: int):
    """The kernel's cycle graph before contraction and whether each node has a successor (a no-op with one is
    not a lone no-op): from the graph's edges, or from TF's cycle graph as tf_rules.py lists it (frames
    lifted, back edges dropped; inserted edge by edge, as the reference does)."""
    from . import _kernel as K

    if tf is None:
        src, lens, positions = edges_in_order(graph, base)
        es, ed = K.graph_edges(N, base, np.asarray(src, np.int64), np.asarray(lens, np.int64), positions)
        esrc, edst, has_out = K.cycle_edges(es, ed, N)
        return K.build(N, esrc, edst, len(es), base), has_out
    edges = np.array([(0, 1)] + list(tf.edges), np.int64).reshape(-1, 2)
    esrc, edst = np.ascontiguousarray(edges[:, 0]), np.ascontiguousarray(edges[:, 1])
    has_out = np.zeros(N, np.uint8)
    has_out[esrc[1:][(edst[1:] != 1) & (esrc[1:] < base + n)]] = 1
    return K.build(N, esrc, edst, 0, base, False), has_out


def _tf_arrays(tf, n: int) -> tuple:
    """TF's rules for the kernel: deadness predicates as codes (equal codes, equal predicates), the nodes not
    merged from in phase 1, the resource operations, and the unsafe pairs (a, b) as sorted keys a * n + b."""
    code: dict = {}
    dead = np.array([code.setdefault(p, len(code)) for p in tf.deadness], np.int32)
    unsafe = np.array(sorted(a * n + b for a, b in tf.unsafe), np.int64)
    return dead, np.array(tf.no_phase1_from, np.uint8), np.array(tf.resource_op, np.bool_), unsafe


def _assemble(opts: ClusterOptions, cands: Candidates, n: int, grouped: np.ndarray, sizes: np.ndarray,
              g_eff: np.ndarray, g_forced: np.ndarray, attempts) -> Clustering:
    """result.finish() on the kernel's groups (in order of first member, members ascending, back to back): the
    same Clustering after the min-size rule, whose per-node lists are made from these arrays only when read
    (see deferred.py)."""
    min_size = opts.min_size
    keep = kept(g_eff, g_forced, min_size)
    g_at = np.cumsum(sizes) - sizes
    k_sizes = sizes[keep]
    kept_members = grouped[_runs(g_at[keep], k_sizes)]
    # cluster index per node: -1 unless in a kept cluster
    cluster_at = np.full(n, -1, np.int64)
    cluster_at[kept_members] = np.repeat(np.arange(len(k_sizes), dtype=np.int64), k_sizes)
    # the nodes of the groups below the minimum size, each with its group's effective size
    drop = ~keep
    d_sizes = sizes[drop]
    dropped = grouped[_runs(g_at[drop], d_sizes)]
    d_eff = np.repeat(g_eff[drop], d_sizes)

    def decisions(name: str, fill):
        """code or reason per node: the candidates', with the min-size rule's."""
        out = cands.values(name)
        if len(dropped):
            out[dropped] = fill
        return out

    def min_size_reasons():
        effs, at = np.unique(d_eff, return_inverse=True)
        why = np.array([below_min_size(e, min_size) for e in effs.tolist()] + [None], object)
        return why[at.reshape(-1)]

    code = Deferred(lambda: decisions("code", MIN_SIZE).tolist())
    reason = Deferred(lambda: decisions("reason", min_size_reasons()).tolist())
    out = Clustering(opts, Deferred(lambda: _split(kept_members, k_sizes)), Deferred(lambda: _int_list(cluster_at)),
                     Deferred(lambda: list(cands.ok)), code, reason, Deferred(lambda: list(cands.device)), attempts,
                     Deferred(lambda: _split(grouped, sizes)))
    out._arrays = (cluster_at, kept_members, k_sizes.astype(np.int64))
    return out


def _runs(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The positions start, start + 1, ..., start + size - 1 of every run, back to back."""
    total = int(sizes.sum())
    return np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(total, dtype=np.int64)


def _split(flat: np.ndarray, sizes: np.ndarray) -> list[list[int]]:
    """Consecutive runs of `flat` of the given sizes, as lists."""
    items = flat.tolist()
    ends = np.cumsum(sizes).tolist()
    return [items[a:b] for a, b in zip([0] + ends[:-1], ends)]


def _int_list(values: np.ndarray) -> list[int]:
    """A list of ints with one int object per distinct value (10^6 separate ints would take 32 MB)."""
    if not len(values):
        return []
    lo = int(values.min())
    ints = np.empty(int(values.max()) - lo + 1, object)
    ints[:] = range(lo, lo + len(ints))
    return ints[values - lo].tolist()
