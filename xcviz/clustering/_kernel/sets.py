"""Insertion-ordered neighbour sets: slices of one pool, big ones indexed by an open-addressing hash table.

A set is erased from by swapping with its last element. Small sets are searched by a scan of their
(contiguous, cached) slice; a set that grows past HASH_MIN gets its positions in the hash table. At 10^6
nodes a hash probe is a cache miss, and most sets stay small. The table uses linear probing and deletion by
shifting back (no tombstones); it holds at most half as many keys as slots: the helpers here cannot
allocate, so build and run_phase grow it (ht_grow) before a step that could add more than that (ht_short).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .state import CP, EMPTY, HS, IN, LN, M_BASE, M_HT_LIVE, M_POOL_END, ST, State, leaf, inl

HASH_MIN = 16


@leaf
def _slot(key, mask):
    """splitmix64's finaliser: keys (d*N + x)*N + y are far from random in their low bits."""
    h = np.uint64(key)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@leaf
def ht_get(HK, HV, key):
    mask = len(HK) - 1
    i = _slot(key, mask)
    while True:
        k = HK[i]
        if k == key:
            return HV[i]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


@leaf
def ht_set(HK, HV, key, val):
    """Update the value of an existing key."""
    mask = len(HK) - 1
    i = _slot(key, mask)
    while HK[i] != key:
        i = (i + 1) & mask
    HV[i] = val


@leaf
def ht_put(HK, HV, meta, key, val):
    """Add a key that is not in the table."""
    meta[M_HT_LIVE] += 1
    _ht_place(HK, HV, key, val)


@leaf
def _ht_place(HK, HV, key, val):
    mask = len(HK) - 1
    i = _slot(key, mask)
    while HK[i] != EMPTY:
        i = (i + 1) & mask
    HK[i] = key
    HV[i] = val


@leaf
def ht_pop(HK, HV, meta, key):
    meta[M_HT_LIVE] -= 1
    mask = len(HK) - 1
    i = _slot(key, mask)
    while HK[i] != key:
        i = (i + 1) & mask
    val = HV[i]
    # move later keys of the probe run into the hole unless their home slot lies after it
    j = i
    while True:
        j = (j + 1) & mask
        k = HK[j]
        if k == EMPTY:
            break
        h = _slot(k, mask)
        if ((j - h) & mask) >= ((j - i) & mask):
            HK[i] = k
            HV[i] = HV[j]
            i = j
    HK[i] = EMPTY
    return val


@leaf
def ht_short(S, extra):
    """Would `extra` more keys fill the hash table beyond half?"""
    return (S.meta[M_HT_LIVE] + extra) * 2 > len(S.HK)


@njit(cache=True)
def ht_grow(S, extra):
    """S with a hash table big enough for `extra` more keys and as many again."""
    HK, HV = S.HK, S.HV
    cap = len(HK)
    while (S.meta[M_HT_LIVE] + extra) * 4 > cap:
        cap *= 2
    NK = np.zeros(cap, np.int64)
    NV = np.empty(cap, np.int64)
    for i in range(len(HK)):
        if HK[i] != EMPTY:
            _ht_place(NK, NV, HK[i], HV[i])
    return State(S.pool, S.ptmp, NK, NV, S.meta, S.SM, S.rank, S.visited, S.parent, S.deltaf, S.deltab,
                 S.stack, S.path, S.rbuf, S.scratch, S.N)


# ---- the sets: d = 0 successors (out), d = 1 predecessors (in) ------------------------------------------
@inl
def edge_key(x, y, d, N):
    return (d * N + x) * N + y


@inl
def os_find(pool, HK, HV, SM, x, y, d, N):
    if SM[x, d * IN + HS]:
        return ht_get(HK, HV, edge_key(x, y, d, N))
    s = SM[x, d * IN + ST]
    for i in range(SM[x, d * IN + LN]):
        if pool[s + i] == y:
            return i
    return -1


@leaf
def _compact(pool, ptmp, meta, SM):
    """Pack every set at the front of the pool (capacity = length) when its free end runs out."""
    end = 0
    for x in range(SM.shape[0]):
        for d in range(2):
            s, n = SM[x, d * IN + ST], SM[x, d * IN + LN]
            for i in range(n):
                ptmp[end + i] = pool[s + i]
            SM[x, d * IN + ST] = end
            SM[x, d * IN + CP] = n
            end += n
    for i in range(end):
        pool[i] = ptmp[i]
    meta[M_POOL_END] = end


@inl
def unkept(meta, x, d):
    """Sets the pass never walks, so their order never counts: the successors of SOURCE and of the graph
    inputs (no search reaches them: their only predecessor is SOURCE) and SINK's predecessors (SINK has
    no successors, so no search leaves from it). They are not kept: membership is read from the other
    end's set. At 10^6 nodes a graph input that every layer reads (a weight) has 10^5 successors, and
    keeping them cost a hash-table miss or two per contraction. (meta[M_BASE] 0: a bare table, all kept.)"""
    base = meta[M_BASE]
    return base > 0 and ((d == 0 and x < base) or (d == 1 and x == 1))


@inl
def os_insert(pool, ptmp, HK, HV, meta, SM, x, y, d, N):
    if unkept(meta, x, d):  # new unless the other end has it (insert_edge then adds it there)
        return d == 1 or os_find(pool, HK, HV, SM, y, x, 1, N) < 0
    if os_find(pool, HK, HV, SM, x, y, d, N) >= 0:
        return False
    l, c = SM[x, d * IN + LN], SM[x, d * IN + CP]
    if l == c:
        nc = 4 if c == 0 else 2 * c
        if meta[M_POOL_END] + nc > len(pool):
            _compact(pool, ptmp, meta, SM)
            if meta[M_POOL_END] + nc > len(pool):
                raise MemoryError("adjacency pool overflow")
        end = meta[M_POOL_END]
        s = SM[x, d * IN + ST]
        for i in range(l):
            pool[end + i] = pool[s + i]
        SM[x, d * IN + ST] = end
        SM[x, d * IN + CP] = nc
        meta[M_POOL_END] = end + nc
    s = SM[x, d * IN + ST]
    pool[s + l] = y
    SM[x, d * IN + LN] = l + 1
    if SM[x, d * IN + HS]:
        ht_put(HK, HV, meta, edge_key(x, y, d, N), l)
    elif l + 1 > HASH_MIN:
        SM[x, d * IN + HS] = True
        for i in range(l + 1):
            ht_put(HK, HV, meta, edge_key(x, pool[s + i], d, N), i)
    return True


@inl
def os_erase(pool, HK, HV, meta, SM, x, y, d, N):
    if unkept(meta, x, d):
        return
    s = SM[x, d * IN + ST]
    if SM[x, d * IN + HS]:
        i = ht_pop(HK, HV, meta, edge_key(x, y, d, N))
    else:
        i = 0
        while pool[s + i] != y:
            i += 1
    l = SM[x, d * IN + LN] - 1
    last = pool[s + l]
    SM[x, d * IN + LN] = l
    if last != y:
        pool[s + i] = last
        if SM[x, d * IN + HS]:
            ht_set(HK, HV, edge_key(x, last, d, N), i)
