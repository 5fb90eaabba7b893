"""The cycle graph before contraction: every edge in the reference's order, written directly when it can be.

graph_edges and cycle_edges list the edges as the reference inserts them (the graph's, then SOURCE's and
SINK's fixups).

When every data edge goes forward in id order (the IR is topologically sorted), the sets and the ranks
that inserting the edges one by one would leave are written directly (fill_sets, _fixup_ranks) rather than
inserted edge by edge through Pearce-Kelly."""
from __future__ import annotations

import numpy as np
from numba import njit

from .order import insert_edge
from .sets import HASH_MIN, edge_key, ht_grow, ht_put, ht_short, unkept
from .state import CP, HS, IN, LN, M_BASE, M_POOL_END, ST, State


SOURCE, SINK = 0, 1


@njit(cache=True)
def graph_edges(N, base, src, lens, positions):
    """The data and control edges in the reference's insertion order (node order, each node's inputs then its
    control inputs), as (es, ed) in cycle-graph ids: lens[j] edges into node base + j, their sources
    src[...] back to back. positions: src holds the graph's own numbering (node positions, n + i for graph
    input i, -1 for an absent input, which is no edge) rather than cycle-graph ids."""
    n = N - base
    E = len(src)
    es = np.empty(E, np.int64)
    ed = np.empty(E, np.int64)
    k = 0
    at = 0
    for j in range(n):
        for _ in range(lens[j]):
            x = src[at]
            at += 1
            if positions:
                if x < 0:
                    continue
                x = x + base if x < n else x - n + 2
            es[k] = x
            ed[k] = base + j
            k += 1
    return es[:k], ed[:k]


@njit(cache=True)
def cycle_edges(es, ed, N):
    """Every edge of the cycle graph in the reference's insertion order: SOURCE -> SINK, the graph's
    (es -> ed), then FixupSourceAndSinkEdges's in node-id order (SOURCE -> v before v -> SINK); and
    whether each node has a successor among the graph's edges."""
    E0 = len(es)
    has_in = np.zeros(N, np.bool_)
    has_out = np.zeros(N, np.bool_)
    for i in range(E0):
        has_out[es[i]] = True
        has_in[ed[i]] = True
    fix = 0
    for v in range(2, N):
        fix += (not has_in[v]) + (not has_out[v])
    esrc = np.empty(1 + E0 + fix, np.int64)
    edst = np.empty(1 + E0 + fix, np.int64)
    esrc[0], edst[0] = SOURCE, SINK
    esrc[1:1 + E0] = es
    edst[1:1 + E0] = ed
    k = 1 + E0
    for v in range(2, N):
        if not has_in[v]:
            esrc[k], edst[k] = SOURCE, v
            k += 1
        if not has_out[v]:
            esrc[k], edst[k] = v, SINK
            k += 1
    return esrc, edst, has_out


@njit(cache=True)
def build(N, esrc, edst, ndata, base, direct=True):
    """The cycle graph as the reference leaves it after inserting every edge in order; returns the State.

    The edges come as the reference inserts them: SOURCE -> SINK, `ndata` data and control edges in node
    order (so grouped by destination), then FixupSourceAndSinkEdges's edges in node-id order. With
    direct=False (tests compare the two) or when a data edge goes backward, each edge goes through
    Pearce-Kelly as in the reference.

    The pool has a fixed size: contraction never adds edges (each insertion replaces an erased edge), so
    the sets hold at most 2E entries, and a pool of 4E + 8 always has room for a set to double after
    packing."""
    E = len(esrc)
    pool = np.empty(4 * E + 8, np.int32)
    ptmp = np.empty(2 * E + 8, np.int32)
    meta = np.zeros(16, np.int64)
    meta[M_BASE] = base
    SM = np.zeros((N, 2 * IN), np.int32)
    forward = direct
    for i in range(1, 1 + ndata):
        if not forward or esrc[i] >= edst[i]:
            forward = False
            break
    if forward:
        fill_sets(pool, meta, SM, esrc, edst, N)
    S = State(pool, ptmp, np.zeros(1024, np.int64), np.empty(1024, np.int64), meta, SM, np.arange(N),
              np.zeros(N, np.bool_), np.empty(N, np.int64), np.empty(N, np.int64), np.empty(N, np.int64),
              np.empty((N + E + 2, 2), np.int64), np.empty(N + 1, np.int64), np.empty(N, np.int64),
              np.empty((3, N), np.int64), N)
    if forward:
        _fixup_ranks(S, esrc, edst, ndata)  # (it reads the graph inputs' successors: dropped only now)
        hashed = 0
        for x in range(N):
            for d in range(2):
                if unkept(meta, x, d):
                    SM[x, d * IN + LN] = 0
                elif SM[x, d * IN + LN] > HASH_MIN:
                    hashed += SM[x, d * IN + LN]
        if ht_short(S, hashed):
            S = ht_grow(S, hashed)
        _hash_big_sets(S.HK, S.HV, meta, pool, SM, N)
    else:
        room = 2 * (HASH_MIN + 1)  # an insertion may hash both of its sets
        for i in range(E):
            if ht_short(S, room):
                S = ht_grow(S, room)
            insert_edge(S, esrc[i], edst[i])
    return S


@njit(cache=True)
def fill_sets(pool, meta, SM, esrc, edst, N):
    """Successor and predecessor sets in insertion order, each node's two sets side by side in the pool
    (capacity = length): what inserting the edges one by one leaves. A repeated edge (an op reading one
    tensor twice) is dropped as os_insert would; repeats are next to each other because edges come
    grouped by destination."""
    E = len(esrc)
    keep = np.zeros(E, np.bool_)
    last = np.full(N, -1, np.int64)  # last destination seen from each source
    deg = np.zeros((N, 2), np.int64)
    for i in range(E):
        x, y = esrc[i], edst[i]
        if x != y and last[x] != y:
            last[x] = y
            keep[i] = True
            deg[x, 0] += 1
            deg[y, 1] += 1
    end = 0
    for x in range(N):
        for d in range(2):
            SM[x, d * IN + ST] = end
            SM[x, d * IN + CP] = deg[x, d]
            end += deg[x, d]
    meta[M_POOL_END] = end
    for i in range(E):
        if keep[i]:
            x, y = esrc[i], edst[i]
            pool[SM[x, ST] + SM[x, LN]] = y
            SM[x, LN] += 1
            pool[SM[y, IN + ST] + SM[y, IN + LN]] = x
            SM[y, IN + LN] += 1


@njit(cache=True)
def _hash_big_sets(HK, HV, meta, pool, SM, N):
    """Positions of the sets longer than HASH_MIN in the hash table, as os_insert leaves them."""
    for x in range(N):
        for d in range(2):
            if SM[x, d * IN + LN] > HASH_MIN:
                SM[x, d * IN + HS] = True
                s = SM[x, d * IN + ST]
                for i in range(SM[x, d * IN + LN]):
                    ht_put(HK, HV, meta, edge_key(x, pool[s + i], d, N), i)


@njit(cache=True)
def _fixup_ranks(S, esrc, edst, ndata):
    """The ranks Pearce-Kelly leaves after the fixup edges, when all data edges go forward in id order.

    Ranks start as ids; data edges and SOURCE -> v never contradict them. Each v -> SINK (ascending v)
    does: SINK's rank is the previous such v' (1 at first), the backward search from v collects the
    ancestors of v ranked above v' -- exactly v's ancestors with ids in (v', v], still ranked by id --
    and the re-ranking shifts each of them down to the previous one's rank (the first takes v'), SINK
    taking v. One sweep down finds those ancestors for every window, one sweep up shifts the ranks."""
    pool, SM, rank, N = S.pool, S.SM, S.rank, S.N
    SINK = 1
    is_sink = np.zeros(N, np.bool_)
    for i in range(1 + ndata, len(esrc)):
        if edst[i] == SINK:
            is_sink[esrc[i]] = True
    reach = np.zeros(N, np.bool_)  # reaches the first sink at or above it without leaving its window
    nxt = -1
    for w in range(N - 1, 1, -1):
        if is_sink[w]:
            nxt = w
            reach[w] = True
            continue
        if nxt < 0:
            continue
        s = SM[w, ST]
        for k in range(SM[w, LN]):
            u = pool[s + k]
            if u <= nxt and reach[u]:
                reach[w] = True
                break
    cur = rank[SINK]
    for w in range(2, N):
        if reach[w]:
            rank[w] = cur
            cur = w
    rank[SINK] = cur
