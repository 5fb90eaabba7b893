"""Pearce-Kelly dynamic topological order: insert an edge, or find the path that makes it a cycle.

As GraphCycles in TensorFlow (and mark_reference.py's cycle graph): ranks stay a topological order; an edge
x -> y with rank[x] > rank[y] searches forward from y (below rank[x]) and backward from x (above rank[y])
and hands the union of the two regions' ranks back out in order."""
from __future__ import annotations

from .sets import os_erase, os_insert
from .state import IN, LN, M_BCNT, M_FCNT, M_PATHLEN, ST, leaf


@leaf
def forward(pool, SM, rank, visited, parent, deltaf, stack, meta, n, upper, path):
    """DFS over successors ranked below `upper`; True and the path in `path` when it reaches `upper`."""
    fc = 0
    stack[0, 0] = n
    stack[0, 1] = -1
    sp = 1
    while sp > 0:
        sp -= 1
        n = stack[sp, 0]
        p = stack[sp, 1]
        if visited[n]:
            continue
        visited[n] = True
        parent[n] = p
        deltaf[fc] = n
        fc += 1
        s = SM[n, ST]
        for k in range(SM[n, LN]):
            w = pool[s + k]
            rw = rank[w]
            if rw == upper:
                m = 0
                while n != -1:
                    path[m] = n
                    m += 1
                    n = parent[n]
                for i in range(m // 2):
                    path[i], path[m - 1 - i] = path[m - 1 - i], path[i]
                meta[M_PATHLEN] = m
                meta[M_FCNT] = fc
                return True
            if not visited[w] and rw < upper:
                if sp == stack.shape[0]:
                    raise MemoryError("DFS stack overflow")
                stack[sp, 0] = w
                stack[sp, 1] = n
                sp += 1
    meta[M_FCNT] = fc
    return False


@leaf
def _backward(pool, SM, rank, visited, deltab, stack, meta, n, lower):
    bc = 0
    stack[0, 0] = n
    sp = 1
    while sp > 0:
        sp -= 1
        n = stack[sp, 0]
        if visited[n]:
            continue
        visited[n] = True
        deltab[bc] = n
        bc += 1
        s = SM[n, IN + ST]
        for k in range(SM[n, IN + LN]):
            w = pool[s + k]
            if not visited[w] and lower < rank[w]:
                if sp == stack.shape[0]:
                    raise MemoryError("DFS stack overflow")
                stack[sp, 0] = w
                sp += 1
    meta[M_BCNT] = bc


@leaf
def _sift(nodes, rank, root, end):
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and rank[nodes[child]] < rank[nodes[child + 1]]:
            child += 1
        if rank[nodes[root]] >= rank[nodes[child]]:
            return
        nodes[root], nodes[child] = nodes[child], nodes[root]
        root = child


@leaf
def _sort_by_rank(nodes, cnt, rank):
    """Sort nodes[:cnt] by rank in place (ranks are distinct, so any sort gives the same order):
    insertion sort for the usual few nodes, heapsort (no allocation) for many."""
    if cnt <= 32:
        for i in range(1, cnt):
            w = nodes[i]
            r = rank[w]
            j = i - 1
            while j >= 0 and rank[nodes[j]] > r:
                nodes[j + 1] = nodes[j]
                j -= 1
            nodes[j + 1] = w
        return
    for root in range(cnt // 2 - 1, -1, -1):
        _sift(nodes, rank, root, cnt)
    for end in range(cnt - 1, 0, -1):
        nodes[0], nodes[end] = nodes[end], nodes[0]
        _sift(nodes, rank, 0, end)


@leaf
def _reorder(rank, visited, deltab, deltaf, meta, rbuf):
    """deltab (by rank), then deltaf (by rank), take the sorted union of their ranks."""
    bc, fc = meta[M_BCNT], meta[M_FCNT]
    _sort_by_rank(deltab, bc, rank)
    _sort_by_rank(deltaf, fc, rank)
    i = j = 0  # both are rank-sorted now: merge their ranks
    for k in range(bc + fc):
        if j >= fc or (i < bc and rank[deltab[i]] < rank[deltaf[j]]):
            rbuf[k] = rank[deltab[i]]
            i += 1
        else:
            rbuf[k] = rank[deltaf[j]]
            j += 1
    for i in range(bc):
        w = deltab[i]
        rank[w] = rbuf[i]
        visited[w] = False
    for j in range(fc):
        w = deltaf[j]
        rank[w] = rbuf[bc + j]
        visited[w] = False


@leaf
def _clear(visited, nodes, cnt):
    for i in range(cnt):
        visited[nodes[i]] = False


@leaf
def insert_edge(S, x, y):
    """Add x -> y unless it closes a cycle (then False, the graph unchanged); True also when it exists."""
    pool, HK, HV, meta, SM, rank, visited, N = S.pool, S.HK, S.HV, S.meta, S.SM, S.rank, S.visited, S.N
    if x == y:
        return False
    if not os_insert(pool, S.ptmp, HK, HV, meta, SM, x, y, 0, N):
        return True
    os_insert(pool, S.ptmp, HK, HV, meta, SM, y, x, 1, N)
    if rank[x] <= rank[y]:
        return True
    if forward(pool, SM, rank, visited, S.parent, S.deltaf, S.stack, meta, y, rank[x], S.path):
        os_erase(pool, HK, HV, meta, SM, x, y, 0, N)
        os_erase(pool, HK, HV, meta, SM, y, x, 1, N)
        _clear(visited, S.deltaf, meta[M_FCNT])
        return False
    _backward(pool, SM, rank, visited, S.deltab, S.stack, meta, x, rank[y])
    _reorder(rank, visited, S.deltab, S.deltaf, meta, S.rbuf)
    return True


@leaf
def reachable(S, x, y):
    """True when y is reachable from x (path in S.path, its length in meta)."""
    rank = S.rank
    if rank[x] >= rank[y]:
        return False
    found = forward(S.pool, S.SM, rank, S.visited, S.parent, S.deltaf, S.stack, S.meta, x, rank[y], S.path)
    _clear(S.visited, S.deltaf, S.meta[M_FCNT])
    return found
