"""The pass: one phase of for_each_edge, each edge contraction with its refusal checks; run_pass, the whole pass."""
from __future__ import annotations

import numpy as np
from numba import njit

from .cycle_graph import build, cycle_edges, graph_edges
from .order import insert_edge, reachable
from .sets import edge_key, ht_grow, ht_pop, ht_short, os_erase, os_insert
from .state import (A_CODE, A_COLS, A_DST, A_MERGED, A_PHASE, A_PL, A_PS, A_SRC, A_X1, A_X2, C_CROSS, C_CYCLE,
                    C_DEVICE, C_MAXSIZE, C_NONE, C_SCOPE, CP, HS, IN, LN, M_NATT, M_NPATH, M_PATHLEN, M_X1, M_X2,
                    SC_IN, SC_OUT, SC_SNAP, ST, inl, leaf)


@leaf
def _contract(S, a, b, alive):
    """Merge along a -> b: the survivor, or -1 (blocking path in S.path)."""
    pool, HK, HV, meta, SM, scratch, N = S.pool, S.HK, S.HV, S.meta, S.SM, S.scratch, S.N
    os_erase(pool, HK, HV, meta, SM, a, b, 0, N)
    os_erase(pool, HK, HV, meta, SM, b, a, 1, N)
    if _may_reach(S, a, b) and reachable(S, a, b):
        insert_edge(S, a, b)
        return -1
    if SM[b, IN + LN] + SM[b, LN] > SM[a, IN + LN] + SM[a, LN]:
        a, b = b, a
    # copies of b's sets (the pool changes below)
    n_out, n_in = SM[b, LN], SM[b, IN + LN]
    s_out, s_in = SM[b, ST], SM[b, IN + ST]
    for k in range(n_out):
        scratch[SC_OUT, k] = pool[s_out + k]
    for k in range(n_in):
        scratch[SC_IN, k] = pool[s_in + k]
    if SM[b, HS]:
        for k in range(n_out):
            ht_pop(HK, HV, meta, edge_key(b, scratch[SC_OUT, k], 0, N))
        SM[b, HS] = False
    if SM[b, IN + HS]:
        for k in range(n_in):
            ht_pop(HK, HV, meta, edge_key(b, scratch[SC_IN, k], 1, N))
        SM[b, IN + HS] = False
    SM[b, LN] = 0
    SM[b, IN + LN] = 0
    SM[b, CP] = 0
    SM[b, IN + CP] = 0
    for k in range(n_out):
        os_erase(pool, HK, HV, meta, SM, scratch[SC_OUT, k], b, 1, N)
    for k in range(n_in):
        os_erase(pool, HK, HV, meta, SM, scratch[SC_IN, k], b, 0, N)
    alive[b] = False
    for k in range(n_out):
        _add_edge(S, a, scratch[SC_OUT, k])
    for k in range(n_in):
        _add_edge(S, scratch[SC_IN, k], a)
    return a


@inl
def _add_edge(S, x, y):
    """insert_edge, its common case (no re-ordering: x already ranks below y) inline rather than a call."""
    if S.rank[x] <= S.rank[y] and x != y:
        if os_insert(S.pool, S.ptmp, S.HK, S.HV, S.meta, S.SM, x, y, 0, S.N):
            os_insert(S.pool, S.ptmp, S.HK, S.HV, S.meta, S.SM, y, x, 1, S.N)
    else:
        insert_edge(S, x, y)


@leaf
def _may_reach(S, a, b):
    """False when no path a -> ... -> b can exist: a is ranked above b, or every predecessor of b is ranked
    at or below a (a path's last step comes from a node ranked between them). Spares ~7 in 8 contractions
    the forward search at 10^6 nodes."""
    rank, SM, pool = S.rank, S.SM, S.pool
    ra = rank[a]
    if ra >= rank[b]:
        return False
    s = SM[b, IN + ST]
    for k in range(SM[b, IN + LN]):
        if rank[pool[s + k]] > ra:
            return True
    return False


@leaf
def _find(parent_uf, v):
    root = v
    while parent_uf[root] != root:
        root = parent_uf[root]
    while parent_uf[v] != root:
        nxt = parent_uf[v]
        parent_uf[v] = root
        v = nxt
    return root


@leaf
def _cluster(parent_uf, ok, base, v):
    if v < base or not ok[v - base]:
        return -1
    return _find(parent_uf, v)


@leaf
def _try_contract(S, C, frm, to):
    """C_NONE when merged; otherwise the refusal's code, its details in meta (M_X1, M_X2) and, for a
    cycle, the blocking path in S.path."""
    meta, SM, pool = S.meta, S.SM, S.pool
    device, scope, size = C.device, C.scope, C.size
    meta[M_X1] = 0
    meta[M_X2] = 0
    if device[frm] != device[to]:
        meta[M_X1] = device[frm]
        meta[M_X2] = device[to]
        return C_DEVICE
    if scope[frm] >= 0 and scope[to] >= 0 and scope[frm] != scope[to]:
        meta[M_X1] = scope[frm]
        meta[M_X2] = scope[to]
        return C_SCOPE
    if size[frm] + size[to] > C.max_size:
        meta[M_X1] = size[frm] + size[to]
        return C_MAXSIZE
    if C.xdev[to]:  # without it the scan finds nothing (devices never mix in a cluster)
        s = SM[to, IN + ST]
        for k in range(SM[to, IN + LN]):
            p = pool[s + k]
            cin = _cluster(C.parent_uf, C.ok, C.base, p)
            if cin >= 0 and (device[cin] != device[to] or device[cin] != device[frm]):
                meta[M_X1] = p - C.base
                return C_CROSS
    survivor = _contract(S, frm, to, C.alive)
    if survivor < 0:
        return C_CYCLE
    other = to if survivor == frm else frm
    size[survivor] = size[frm] + size[to]
    C.eff[survivor] = C.eff[frm] + C.eff[to]
    C.forced[survivor] = C.forced[frm] or C.forced[to]
    C.xdev[survivor] = C.xdev[frm] or C.xdev[to]
    scope[survivor] = scope[frm] if scope[frm] >= 0 else scope[to]
    device[survivor] = device[frm]
    C.parent_uf[other] = survivor
    return C_NONE


@njit(cache=True)
def run_phase(S, C, phase, mode, A, P):
    """One pass of for_each_edge; mode 0: target must be a lone shape consumer, 1: not a lone no-op, 2: any.

    Records attempts in A (rows) and P (blocking paths), growing them as needed; returns (changed, S, A, P)
    (S with a bigger hash table when it had to grow)."""
    N = S.N
    ok, base, parent_uf, groups, size = C.ok, C.base, C.parent_uf, C.groups, C.size
    SM, scratch = S.SM, S.scratch  # (the same arrays in any S ht_grow returns)
    at_rank = np.full(N, -1, np.int64)
    for v in range(N):
        if C.alive[v]:
            at_rank[S.rank[v]] = v
    changed = False
    for r in range(N - 1, -1, -1):
        v = at_rank[r]
        if v < 0:
            continue
        frm = _cluster(parent_uf, ok, base, v)
        if frm < 0:
            continue
        if mode == 0 and size[frm] == 1 and not C.sc_succ[frm]:
            continue  # a lone node has a lone shape consumer as successor only by an edge it had from the start
        # snapshot of frm's successors, as the reference's list(gc.out[frm])
        n_outs = SM[frm, LN]
        s = SM[frm, ST]
        for k in range(n_outs):
            scratch[SC_SNAP, k] = S.pool[s + k]
        for k in range(n_outs):
            w = scratch[SC_SNAP, k]
            to = _cluster(parent_uf, ok, base, w)
            frm = _cluster(parent_uf, ok, base, v)
            if to < 0 or to == frm:
                continue
            lone = groups[to - base] if size[to] == 1 else 0
            if mode == 0:
                go = lone == 1
            elif mode == 1:
                go = lone != 2
            else:
                go = True
            if not go:
                continue
            # a merge hashes at most the two clusters' entries (see ht_grow)
            room = SM[frm, LN] + SM[frm, IN + LN] + SM[to, LN] + SM[to, IN + LN]
            if ht_short(S, room):
                S = ht_grow(S, room)
            code = _try_contract(S, C, frm, to)
            if code == C_NONE:
                changed = True
            if not C.record or (code != C_NONE and phase < 0):
                continue
            meta = S.meta
            k = meta[M_NATT]
            if k == A.shape[0]:
                NA = np.empty((2 * A.shape[0], A_COLS), A.dtype)
                NA[:k] = A[:k]
                A = NA
            A[k, A_PHASE] = phase
            A[k, A_SRC] = frm - base
            A[k, A_DST] = to - base
            A[k, A_MERGED] = code == C_NONE
            A[k, A_CODE] = code
            A[k, A_X1] = meta[M_X1]
            A[k, A_X2] = meta[M_X2]
            A[k, A_PS] = 0
            A[k, A_PL] = 0
            if code == C_CYCLE:
                plen = meta[M_PATHLEN] - 1  # the path after frm, graph nodes only
                m = meta[M_NPATH]
                if m + plen > len(P):
                    NP = np.empty(max(2 * len(P), m + plen), P.dtype)
                    NP[:m] = P[:m]
                    P = NP
                c = 0
                for i in range(1, plen + 1):
                    p = S.path[i]
                    if p >= base:
                        P[m + c] = p - base
                        c += 1
                if plen > 0:
                    A[k, A_PS] = m
                    A[k, A_PL] = c
                meta[M_NPATH] = m + c
            meta[M_NATT] = k + 1
    return changed, S, A, P


@njit(cache=True)
def run_pass(N, src, lens, positions, C, A, P):
    """The whole pass in one call, so that a process loads one compiled function from numba's cache (each load
    costs 0.05-0.1 s): the edges (cycle_graph.graph_edges: src, lens, positions), the per-node flags that read
    them, the cycle graph (cycle_graph.build), phases 0-2, the idempotence check, then whether that check
    changed anything (a bug), the attempt table and path pool (trimmed views), and the final groups (see
    final_groups)."""
    es, ed = graph_edges(N, C.base, src, lens, positions)
    esrc, edst, has_out = cycle_edges(es, ed, N)
    _edge_flags(C, esrc, edst, has_out)
    S = build(N, esrc, edst, len(es), C.base)
    for phase in range(3):
        _, S, A, P = run_phase(S, C, phase, phase, A, P)
    changed, S, A, P = run_phase(S, C, -1, 2, A, P)
    grouped, sizes, g_root = final_groups(C.parent_uf, C.ok, C.base, len(C.ok))
    return changed, A[:S.meta[M_NATT]], P[:S.meta[M_NPATH]], grouped, sizes, g_root


@leaf
def _edge_flags(C, esrc, edst, has_out):
    """The per-node flags that read the edges: C.groups loses its 2 (a lone no-op) where the node has a
    successor; C.xdev, the candidates with a candidate predecessor on another device (mark_reference.py's
    xdev); C.sc_succ, the nodes with a candidate lone shape consumer (groups 1) as successor."""
    ok, base, device, groups = C.ok, C.base, C.device, C.groups
    for j in range(len(groups)):
        if groups[j] == 2 and has_out[base + j]:
            groups[j] = 0
    for i in range(len(esrc)):
        x, y = esrc[i], edst[i]
        if y < base or not ok[y - base]:
            continue
        if groups[y - base] == 1:
            C.sc_succ[x] = True
        if x >= base and ok[x - base] and device[x] != device[y]:
            C.xdev[y] = True


@njit(cache=True)
def final_groups(parent_uf, ok, base, n):
    """The candidates' groups in order of their first member, members ascending: every group's members back
    to back, each group's size and its root (the node that holds its size and flags)."""
    gid = np.full(n, -1, np.int64)    # per root (graph position): its group
    of = np.full(n, -1, np.int64)     # per node: its group
    sizes = np.zeros(n, np.int64)
    g_root = np.empty(n, np.int64)
    G = 0
    for j in range(n):
        if ok[j]:
            r = _find(parent_uf, base + j)
            g = gid[r - base]
            if g < 0:
                g = gid[r - base] = G
                g_root[G] = r
                G += 1
            of[j] = g
            sizes[g] += 1
    at = np.empty(G, np.int64)
    total = 0
    for g in range(G):
        at[g] = total
        total += sizes[g]
    grouped = np.empty(total, np.int64)
    for j in range(n):
        g = of[j]
        if g >= 0:
            grouped[at[g]] = j
            at[g] += 1
    return grouped, sizes[:G], g_root[:G]
