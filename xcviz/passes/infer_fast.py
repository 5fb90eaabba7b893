"""Shape inference for big graphs: infer.infer_shapes on integer type ids, with the walk compiled by numba.

A node's outputs are a pure function of its key, (op, output count, scalar attributes, declared outputs)
as a static id plus the type ids of its inputs, unless its rule reads a constant input. The kernel walks
the nodes in order and gives each node the result its key already has; it stops at the first node whose
key is new or that needs Python (an opaque op, a ':k' or empty input, container attributes, more than
MAX_INPUTS inputs, a constant input to a rule that reads constants). Python runs that node exactly as
infer_shapes does, records the result, and the walk resumes. Constant values (shape and const nodes, and
the value ops of values.py) are worked out only when a rule asks for them. Same results as infer_shapes (tests/test_infer_matches_reference.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import fastpath, progress
from ..ir import Graph, TensorType
from ..ir.columns import NodeColumns
from .infer_state import InferState

fastpath.track_sources()  # (before any cached kernel below: see fastpath)

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


def infer_shapes_fast(graph: Graph, counts: list[int], refs: NodeColumns,
                      st: InferState | None = None) -> tuple[np.ndarray, list[list[TensorType]]]:
    """infer_shapes on the graph's columns (`st`: made for them already, nothing run on it yet); see the
    module docstring. The first call in a process says so on stderr while a cold cache makes it compile.
    Returns (rid, results): node j's outputs are a copy of results[rid[j]], the same type objects."""
    global _announced
    if _announced or cached():
        _announced = True
        return _infer(graph, counts, refs, st)
    _announced = True
    with progress.compiling("shape inference", 25):
        return _infer(graph, counts, refs, st)


def _infer(graph: Graph, counts: list[int], refs: NodeColumns,
           st: InferState | None = None) -> tuple[np.ndarray, list[list[TensorType]]]:
    st = st or InferState(graph, counts, refs)
    n, static, off, src, tid, rid, ccap, results = st.n, st.static, st.off, st.src, st.tid, st.rid, st.ccap, st.results
    static[st.lens > MAX_INPUTS] = -1
    cap = 1024
    res_tid0 = np.zeros(cap, np.int64)
    res_readc = np.zeros(cap, np.bool_)
    keys = np.full((cap, 2 + MAX_INPUTS), -1, np.int64)
    HK = np.full(1024, -1, np.int64)  # hash table: key hashes -> result ids (HV)
    HV = np.full(1024, -1, np.int64)
    used = 0
    i = 0
    while True:
        i = _walk(i, n, static, off, src, tid, rid, res_tid0, res_readc, ccap, keys, HK, HV)
        if i >= n:
            break
        outs, read_consts, has_const, _ = st.run(i)
        r = len(results)
        if r == cap:
            cap *= 2
            res_tid0 = np.resize(res_tid0, cap)
            res_readc = np.resize(res_readc, cap)
            keys = np.concatenate((keys, np.full_like(keys, -1)))
        results.append(outs)
        res_tid0[r] = st.type_id(outs[0] if outs else st.unknown)
        res_readc[r] = read_consts
        rid[i] = r
        tid[i] = res_tid0[r]
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
    return st.finish()
