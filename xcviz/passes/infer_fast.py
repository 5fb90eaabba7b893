"""Shape inference for big graphs: infer.infer_shapes on integer type ids, with the walk compiled by numba.

A node's outputs are a pure function of its key, (op, output count, scalar attributes, declared outputs)
as a static id plus the type ids of its inputs, unless its rule reads a constant input. The kernel walks
the nodes in order and gives each node the result its key already has; it stops at the first node whose
key is new or that needs Python (an opaque op, a ':k' or empty input, container attributes, more than
MAX_INPUTS inputs, a constant input to a rule that reads constants). Python runs that node exactly as
infer_shapes does, records the result, and the walk resumes. Constant values (shape and const nodes, and
the value ops of values.py) are worked out only when a rule asks for them. Same results as infer_shapes (tests/test_perf_equivalence.py).
"""
from __future__ import annotations

from itertools import repeat

import numpy as np
from numba import njit

from .. import fastpath, progress
from ..ir import Graph, TensorType, parse_ref
from ..ir.nodeseq import NodeSeq, node_rows
from ..ir.attrs import attrs_key
from ..ir.columns import NodeColumns
from ..ops import REGISTRY
from .node_rule import CONST_RECORDING, apply_rule, record_const
from .values import VALUE_OPS, may_have_value, node_value

MAX_INPUTS = 8  # inputs of a key the kernel compares; nodes with more go through Python
# With nothing in numba's cache, a cold compile of this walk takes ~25 s once, while infer.infer_shapes'
# Python loop takes ~6 µs a node: below this size the loop finishes first (and a background process fills
# the cache for the next run).
COLD_MIN_NODES = 4_000_000
_announced = False


@njit(cache=True)
def _mix(h, x):
    """One step of a 64-bit hash over the key's integers (splitmix64's finaliser)."""
    z = np.uint64(h) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(x) + np.uint64(1)
    z ^= z >> np.uint64(31)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(29)
    return np.int64(z >> np.uint64(1))


@njit(cache=True)
def _hash(static, tids):
    h = _mix(static, len(tids))
    for t in tids:
        h = _mix(h, t)
    return h


@njit(cache=True)
def _find(HK, h):
    """Slot of hash `h` in the open-addressing table HK (keys; -1 = empty), or of the empty slot ending
    its probe. Hashes are non-negative (_mix shifts the sign bit away)."""
    mask = len(HK) - 1
    i = h & mask
    while HK[i] != -1 and HK[i] != h:
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _rehash(HK, HV, size):
    NK = np.full(size, -1, np.int64)
    NV = np.full(size, -1, np.int64)
    for i in range(len(HK)):
        if HK[i] != -1:
            j = _find(NK, HK[i])
            NK[j] = HK[i]
            NV[j] = HV[i]
    return NK, NV


@njit(cache=True)
def _walk(start, n, static, off, src, tid, rid, res_tid0, res_readc, ccap, keys, HK, HV):
    """From node `start`, give each node the result its key has; return the first node Python must
    run (or n). Keys are compared in full (`keys` rows: static, arity, input type ids), not by hash alone."""
    for i in range(start, n):
        s = static[i]
        if s < 0:
            return i
        a, b = off[i], off[i + 1]
        h = _mix(s, b - a)
        has_const = False
        for k in range(a, b):
            j = src[k]
            if j < 0:
                return i
            h = _mix(h, tid[j])
            if ccap[j]:
                has_const = True
        r = HV[_find(HK, h)]
        if r < 0 or keys[r, 0] != s or keys[r, 1] != b - a:
            return i
        for k in range(a, b):
            if keys[r, 2 + k - a] != tid[src[k]]:
                return i
        if has_const and res_readc[r]:
            return i
        rid[i] = r
        tid[i] = res_tid0[r]
    return n


def _static_ids(static: np.ndarray, cols: NodeColumns) -> None:
    """Static ids of every node from its base id (op, output count), its attribute code and its declared
    outputs' code, at C speed; equal keys (by value, as the Python loop's cache key compares them: equal
    types may be distinct objects, and attrs_key keeps 1, 1.0 and True apart) get equal ids. Nodes that
    declare one output type and have no attributes (every node of an exported model) get ids at or above
    2^41, the others at 2^40; -1 for attributes attrs_key cannot key (a container value)."""
    acode, reps = cols.attr_codes
    dcode, lists = cols.declared_codes
    n_outs = np.array(list(map(len, lists)), np.int64)[dcode]
    one = np.flatnonzero((n_outs == 1) & (acode == 0))
    if len(one):
        by_value: dict = {}
        vcode = np.array([by_value.setdefault(t[0], len(by_value)) if len(t) == 1 else -1 for t in lists], np.int64)
        static[one] = (2 << 40) + static[one] * len(by_value) + vcode[dcode[one]]
    rest = np.flatnonzero((acode != 0) | (n_outs > 1))
    if not len(rest):
        return
    # distinct (base, attribute code, declared code) triples, one column at a time (products stay small)
    first, inverse = np.zeros(len(rest), np.int64), np.zeros(len(rest), np.int64)
    for col in (static[rest], acode[rest], dcode[rest]):
        _, first, inverse = np.unique(inverse * (int(col.max()) + 1) + col, return_index=True, return_inverse=True)
    akeys = [()] + [attrs_key(a) for a in reps[1:]]
    code: dict = {}
    ids = [-1 if akeys[acode[j]] is None
           else (1 << 40) + code.setdefault((static[j], akeys[acode[j]], tuple(lists[dcode[j]])), len(code))
           for j in rest[first].tolist()]
    static[rest] = np.array(ids, np.int64)[inverse.reshape(-1)]


def cached() -> bool:
    """True when numba's cache holds the walk's entry points, compiled for this machine from these sources."""
    return fastpath.numba_cached((_walk, _hash, _find))


def worth_compiling(n: int) -> bool:
    """Take the compiled walk for a graph of n nodes? Yes when it is cached or the graph pays for a cold
    compile; otherwise no, and a background process (infer_warm) compiles it for the next run."""
    if n >= COLD_MIN_NODES or cached():
        return True
    fastpath.warm_in_background(fastpath.numba_cache_dir(_walk), "xcviz.passes.infer_warm")
    return False


def infer_shapes_fast(graph: Graph, counts: list[int], refs: NodeColumns) -> tuple[np.ndarray, list[list[TensorType]]]:
    """infer_shapes on the graph's columns; see the module docstring. The first call in a process says so on
    stderr while a cold cache makes it compile.
    Returns (rid, results): node j's outputs are a copy of results[rid[j]], the same type objects."""
    global _announced
    if _announced or cached():
        _announced = True
        return _infer(graph, counts, refs)
    _announced = True
    with progress.compiling("shape inference", 25):
        return _infer(graph, counts, refs)


def _infer(graph: Graph, counts: list[int], refs: NodeColumns) -> tuple[np.ndarray, list[list[TensorType]]]:
    seq = graph.nodes
    lazy = type(seq) is NodeSeq and seq.lazy
    nodes = _Rows(node_rows(seq))  # (a lazy graph's nodes are made one at a time, for the few run in Python)
    n = len(seq)
    source = graph.source
    idx = graph.index
    unknown = TensorType()
    consts: dict[str, object] = {v.name: v.data for v in graph.inputs if v.data is not None}
    in_types = {v.name: v.type for v in graph.inputs}
    intern = {t: t for t in in_types.values()}.setdefault

    # type ids, by object identity as in infer_shapes' cache (the list keeps every object alive)
    type_list: list[TensorType] = []
    tid_of: dict[int, int] = {}

    def type_id(t: TensorType) -> int:
        k = tid_of.get(id(t))
        if k is None:
            k = tid_of[id(t)] = len(type_list)
            type_list.append(t)
        return k

    # positions: nodes 0..n-1 (output 0), then graph inputs n..n+m-1
    m = len(graph.inputs)
    tid = np.full(n + m, -1, np.int64)
    tid[n:] = [type_id(v.type) for v in graph.inputs]
    ccap = np.zeros(n + m, np.bool_)  # may carry a constant value
    ccap[n:] = [v.data is not None for v in graph.inputs]
    # op codes at C speed: the registry's ops first, then any opaque op name
    op_code = {name: c for c, name in enumerate(REGISTRY.ops)}
    ops = refs.op
    opc = np.array(list(map(op_code.setdefault, ops, range(len(op_code), len(op_code) + n))), np.int64)
    known = refs.known
    ccap[:n] = np.isin(opc, [op_code[name] for name in CONST_RECORDING | VALUE_OPS])
    lens = refs.lens_array
    off = np.zeros(n + 1, np.int64)
    np.cumsum(lens, out=off[1:])
    src = refs.src_array

    # static ids: (op, output count) for plain nodes; attributes and declared outputs make their own ids
    counts_a = np.array(counts, np.int64)
    static = opc * 8192 + counts_a  # counts are at most 4096
    _static_ids(static, refs)
    static[lens > MAX_INPUTS] = -1
    if False in known:
        static[~np.array(known, np.bool_)] = -1
        ccap[:n] &= np.array(known, np.bool_)
    opdefs = {(name, True): opdef for name, opdef in REGISTRY.ops.items()}

    results: list[list[TensorType]] = []
    cap = 1024
    res_tid0 = np.zeros(cap, np.int64)
    res_readc = np.zeros(cap, np.bool_)
    keys = np.full((cap, 2 + MAX_INPUTS), -1, np.int64)
    HK = np.full(1024, -1, np.int64)  # hash table: key hashes -> result ids (HV)
    HV = np.full(1024, -1, np.int64)
    used = 0
    rid = np.full(n, -1, np.int64)
    done_const: set[int] = set()

    def out_of(j: int, k: int) -> TensorType:
        outs = results[rid[j]] if rid[j] >= 0 else nodes[j].outputs
        return outs[k] if k < len(outs) else TensorType()

    def input_types(i: int) -> list[TensorType]:
        out = []
        for ref, j in zip(nodes[i].inputs, src[off[i]:off[i + 1]].tolist()):
            if j >= 0:
                out.append(type_list[tid[j]])
            elif not ref:
                out.append(unknown)
            else:
                t = in_types.get(ref)
                if t is None:
                    name, k = parse_ref(ref)
                    t = out_of(idx[name], k)
                out.append(t)
        return out

    def const_of(ref: str):
        """The constant value `ref` carries, or None; shape/const nodes and the value ops fed by them
        (values.py) are worked out on first use, producers first (a loop, not recursion: chains are long)."""
        if ref in consts or ":" in ref:
            return consts.get(ref)
        j = idx.get(ref)
        stack = [j] if j is not None and j not in done_const and ccap[j] else []
        while stack:
            k = stack[-1]
            node = nodes[k]
            opdef = opdefs[(node.op, True)]
            if opdef.name in VALUE_OPS and not (results[rid[k]] and may_have_value(results[rid[k]][0])):
                stack.pop()  # a float or large tensor: no value, and no need to look at its producers
                done_const.add(k)
                continue
            pending = [p for p in map(idx.get, node.inputs) if p is not None and ccap[p] and p not in done_const] \
                if opdef.name in VALUE_OPS else []
            if pending:
                stack += pending
                continue
            stack.pop()
            if k in done_const:
                continue
            done_const.add(k)
            node.outputs = list(results[rid[k]])
            if opdef.name in CONST_RECORDING:
                record_const(node, opdef, input_types(k), consts, source)
                continue
            cvals = [consts.get(r) if r else None for r in node.inputs]
            if any(v is not None for v in cvals):
                v = node_value(opdef, {**opdef.attrs, **node.attrs}, input_types(k), cvals, node.inputs, node.outputs)
                if v is not None:
                    consts[node.name] = v
        return consts.get(ref)

    i = 0
    while True:
        i = _walk(i, n, static, off, src, tid, rid, res_tid0, res_readc, ccap, keys, HK, HV)
        if i >= n:
            break
        node = nodes[i]
        n_out = counts[i]
        tys = input_types(i)
        cvals = [const_of(ref) if ref else None for ref in node.inputs]
        has_const = any(v is not None for v in cvals)
        opdef = opdefs.get((node.op, node.known))
        read_consts = False
        if opdef is None:
            given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
            outs = given[:n_out]
        else:
            outs, read_consts = apply_rule(node, opdef, tys, cvals if has_const else [None] * len(tys), n_out, source)
            outs = [intern(t, t) for t in outs]
        node.outputs = outs
        r = len(results)
        if r == cap:
            cap *= 2
            res_tid0 = np.resize(res_tid0, cap)
            res_readc = np.resize(res_readc, cap)
            keys = np.concatenate((keys, np.full_like(keys, -1)))
        results.append(outs)
        res_tid0[r] = type_id(outs[0] if outs else unknown)
        res_readc[r] = read_consts
        rid[i] = r
        tid[i] = res_tid0[r]
        if opdef is not None and opdef.name in CONST_RECORDING and i not in done_const:
            done_const.add(i)
            record_const(node, opdef, tys, consts, source)  # eagerly: a bad const value is an error here
        s = int(static[i])
        at = src[off[i]:off[i + 1]]
        if s >= 0 and (at >= 0).all() and not (has_const and read_consts):
            in_tids = tid[at]
            h = int(_hash(s, in_tids))
            slot = int(_find(HK, h))
            if HK[slot] == -1:
                HK[slot], HV[slot] = h, r
                keys[r, 0], keys[r, 1] = s, len(at)
                keys[r, 2:2 + len(at)] = in_tids
                used += 1
                if 2 * used > len(HK):
                    HK, HV = _rehash(HK, HV, 2 * len(HK))
        i += 1
    if lazy:  # (each node made later gets its own copy of its result)
        seq.set_columns(outputs=(rid, results))
        return rid, results
    # every node its own list (C-speed loops: a Python loop here costs ~1 s at 10^6 nodes)
    outs_all = list(map(list.copy, map(results.__getitem__, rid.tolist())))
    list(map(setattr, seq, repeat("outputs", n), outs_all))
    return rid, results


class _Rows:
    """nodes[i] for the Python part of the walk: the same made-on-demand node for i until the next i
    (the walk reads a node, sets its outputs and reads them again, one node at a time)."""

    __slots__ = ("_row", "_i", "_node")

    def __init__(self, row) -> None:
        self._row, self._i, self._node = row, -1, None

    def __getitem__(self, i: int):
        if i != self._i:
            self._i, self._node = i, self._row(i)
        return self._node
