"""Strategy `mark`, fast path: the reference pass on integer ids and arrays, compiled by numba (_kernel.py).

Identical results to mark_reference.py (clusters and every attempt record, tested on random DAGs and on
graphs/). Attempts are kept as an integer table and turned into Attempt objects (with their reason text)
only when read, so recording 10^6 decisions costs arrays, not objects.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import XcvizError
from ..ir import parse_ref
from ..ops import NOOP, REGISTRY, SHAPE_CONSUMER, ZERO_SIZE
from .options import Candidates, ClusterOptions
from .result import Attempt, Clustering, finish

SOURCE, SINK = 0, 1
_MAX = np.int64(2**62)


class AttemptLog(Sequence):
    """Attempts as an (k, 9) integer table; items are built as Attempt objects on access."""

    def __init__(self, table: np.ndarray, paths: np.ndarray, names: list[str], devices: list[str],
                 scopes: list[str], max_cluster_size) -> None:
        self.table, self.paths = table, paths
        self._names, self._devices, self._scopes, self._max = names, devices, scopes, max_cluster_size

    def __len__(self) -> int:
        return len(self.table)

    def _make(self, row) -> Attempt:
        from . import _kernel as K

        phase, src, dst, merged, code, x1, x2, ps, pl = (int(x) for x in row)
        if merged:
            return Attempt(phase, src, dst, True)
        path: tuple[int, ...] = ()
        if code == K.C_DEVICE:
            c, why = "device", f"incompatible devices ({self._devices[x1]} vs {self._devices[x2]})"
        elif code == K.C_SCOPE:
            c, why = "scope", f"mismatching XLA scopes ({self._scopes[x1]} vs {self._scopes[x2]})"
        elif code == K.C_MAXSIZE:
            c, why = "max-size", f"merged size {x1} > max cluster size {self._max}"
        elif code == K.C_CROSS:
            c, why = "cross-device", f"would introduce a cross-device dependency via {self._names[x1]}"
        else:
            path = tuple(int(p) for p in self.paths[ps:ps + pl])
            names = ", ".join(self._names[p] for p in path) or "a graph input"
            c, why = "cycle", f"would create a cycle via {names}"
        return Attempt(phase, src, dst, False, why, c, path)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._make(r) for r in self.table[i]]
        return self._make(self.table[i])

    def __iter__(self):
        make = self._make
        for row in self.table.tolist():
            yield make(row)

    def refused(self) -> list[Attempt]:
        return [self._make(r) for r in self.table[self.table[:, 3] == 0].tolist()]

    def merged_count(self) -> int:
        return int(self.table[:, 3].sum())

    def __eq__(self, other) -> bool:
        return list(self) == list(other)

    def __repr__(self) -> str:
        return f"AttemptLog({len(self)} attempts)"


def _groups_of(op_groups: dict, node) -> frozenset:
    key = (node.op, node.known)
    g = op_groups.get(key)
    if g is None:
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        g = op_groups[key] = opdef.groups if opdef is not None else frozenset()
    return g


def edges_in_order(graph, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Data and control edges in the order the reference inserts them (node order, inputs, controls)."""
    input_id = {v.name: 2 + i for i, v in enumerate(graph.inputs)}
    idx = graph.index
    nodes = graph.nodes
    if not any(nd.control_inputs for nd in nodes):
        # vectorised common case: one flat list of refs; names and input names never collide (loader)
        ids = {name: base + i for name, i in idx.items()}
        ids.update(input_id)
        refs = [r for nd in nodes for r in nd.inputs]
        get = ids.get
        src = np.array([get(r, -1) for r in refs], np.int64)
        dst = np.repeat(np.arange(base, base + len(nodes), dtype=np.int64), [len(nd.inputs) for nd in nodes])
        miss = np.flatnonzero(src < 0)
        if len(miss):
            keep = np.ones(len(src), bool)
            for k in miss.tolist():
                ref = refs[k]
                if not ref:
                    keep[k] = False
                else:
                    src[k] = base + idx[parse_ref(ref)[0]]
            src, dst = src[keep], dst[keep]
        return src, dst
    srcl: list[int] = []
    dstl: list[int] = []
    sa, da = srcl.append, dstl.append
    for j, node in enumerate(nodes):
        d = base + j
        for ref in node.inputs:
            if not ref:
                continue
            s = input_id.get(ref)
            if s is None:
                s = base + (idx[ref] if ":" not in ref else idx[parse_ref(ref)[0]])
            sa(s)
            da(d)
        for ref in node.control_inputs:
            sa(base + idx[ref])
            da(d)
    return np.array(srcl, np.int64), np.array(dstl, np.int64)


def mark_for_compilation(graph, cands: Candidates, opts: ClusterOptions, progress=None) -> Clustering:
    from . import _kernel as K

    nodes = graph.nodes
    n = len(nodes)
    base = 2 + len(graph.inputs)
    N = base + n
    es, ed = edges_in_order(graph, base)
    has_in = np.zeros(N, bool)
    has_out = np.zeros(N, bool)
    has_in[ed] = True
    has_out[es] = True
    # FixupSourceAndSinkEdges in node-id order: SOURCE -> v before v -> SINK
    v = np.arange(2, N, dtype=np.int64)
    no_in, no_out = v[~has_in[2:]], v[~has_out[2:]]
    fix_key = np.concatenate((2 * no_in, 2 * no_out + 1))
    fix_src = np.concatenate((np.full(len(no_in), SOURCE, np.int64), no_out))
    fix_dst = np.concatenate((no_in, np.full(len(no_out), SINK, np.int64)))
    order = np.argsort(fix_key, kind="stable")
    esrc = np.concatenate(([SOURCE], es, fix_src[order])).astype(np.int64)
    edst = np.concatenate(([SINK], ed, fix_dst[order])).astype(np.int64)

    ok = np.array(cands.ok, dtype=np.bool_)
    dev_names: list[str] = []
    dev_code: dict = {}
    device = np.full(N, -1, np.int64)
    device[base:] = [dev_code.setdefault(d, len(dev_code)) for d in cands.device]
    dev_names = list(dev_code)
    scope_code: dict = {}
    scope = np.full(N, -1, np.int64)
    scope[base:] = [-1 if nd.scope is None else scope_code.setdefault(nd.scope, len(scope_code)) for nd in nodes]
    scope_names = list(scope_code)
    op_groups: dict = {}
    gsets = [_groups_of(op_groups, nd) for nd in nodes]
    eff = np.zeros(N, np.int64)
    eff[base:] = [0 if ZERO_SIZE in g else 1 for g in gsets]
    forced = np.zeros(N, np.bool_)
    forced[base:] = [nd.compile is True for nd in nodes]
    out_base = has_out[base:]
    groups = np.array([1 if SHAPE_CONSUMER in g else 2 if NOOP in g and not out_base[j] else 0
                       for j, g in enumerate(gsets)], np.int64)
    size = np.ones(N, np.int64)
    alive = np.ones(N, np.bool_)
    parent_uf = np.arange(N, dtype=np.int64)
    max_size = _MAX if opts.max_cluster_size is None else np.int64(opts.max_cluster_size)

    S, AL, PPL = K.build(N, esrc, edst, np.arange(N, dtype=np.int64))
    if progress:
        progress(1)
    C = (ok, base, alive, parent_uf, size, eff, forced, device, scope, groups, max_size, bool(opts.record), AL, PPL)
    for phase, mode in ((0, 0), (1, 1), (2, 2)):
        K.run_phase(S, C, phase, mode)
        if progress:
            progress(1)
    if K.run_phase(S, C, -1, 2):
        raise XcvizError("edge contraction is not idempotent (a bug in xcviz)", code=1)
    table, paths = K.results(S, AL, PPL)
    attempts = AttemptLog(table, paths, [nd.name for nd in nodes], dev_names, scope_names, opts.max_cluster_size)

    r = K.roots(parent_uf, ok, base, n)
    members = np.nonzero(r >= 0)[0]
    rs = r[members]
    # groups in order of their first member (as the reference's dict), members ascending
    o = np.argsort(rs, kind="stable")
    rs_sorted, mem_sorted = rs[o], members[o]
    cuts = np.flatnonzero(np.diff(rs_sorted)) + 1
    starts = np.concatenate(([0], cuts)) if len(rs_sorted) else np.zeros(0, np.int64)
    ends = np.concatenate((cuts, [len(rs_sorted)])) if len(rs_sorted) else np.zeros(0, np.int64)
    firsts = mem_sorted[starts] if len(starts) else starts
    mem_list = mem_sorted.tolist()
    effl, forcedl, roots_l = eff.tolist(), forced.tolist(), rs_sorted.tolist()
    gs = []
    for k in np.argsort(firsts, kind="stable").tolist():
        a, b = int(starts[k]), int(ends[k])
        root = roots_l[a]
        gs.append((mem_list[a:b], effl[root], forcedl[root]))
    return finish(opts, graph, cands, gs, attempts)
