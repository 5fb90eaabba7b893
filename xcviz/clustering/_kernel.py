"""Compiled (numba, cached) MarkForCompilationPass over integer ids: the same steps as mark_reference.py.

Layout: node ids are ints; each node's successor and predecessor sets are insertion-ordered slices of one
pool array (start, length, capacity), erased by swapping with the last element; one open-addressing hash
table maps (node, neighbour, direction) to the neighbour's position in the slice. Arrays that grow (pool,
hash table, attempt log) live in one-element typed Lists so that helpers can replace them.
Every loop mirrors the reference line by line; the equivalence tests hold them together.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.typed import List

EMPTY = -1
TOMB = -2
# attempt columns
A_PHASE, A_SRC, A_DST, A_MERGED, A_CODE, A_X1, A_X2, A_PS, A_PL = range(9)
A_COLS = 9
C_NONE, C_DEVICE, C_SCOPE, C_MAXSIZE, C_CROSS, C_CYCLE = range(6)
# meta slots
M_POOL_END, M_HT_USED, M_NATT, M_NPATH, M_FCNT, M_BCNT, M_PATHLEN = range(7)


@njit(cache=True)
def _slot(key, mask):
    """splitmix64's finaliser: keys (d*N + x)*N + y are far from random in their low bits."""
    h = np.uint64(key)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@njit(cache=True)
def _ht_get(HK, HV, key):
    K = HK[0]
    mask = len(K) - 1
    i = _slot(key, mask)
    while True:
        k = K[i]
        if k == key:
            return HV[0][i]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


@njit(cache=True)
def _ht_set(HK, HV, key, val):
    """Update the value of an existing key."""
    K = HK[0]
    mask = len(K) - 1
    i = _slot(key, mask)
    while K[i] != key:
        i = (i + 1) & mask
    HV[0][i] = val


@njit(cache=True)
def _ht_put(HK, HV, meta, key, val):
    K = HK[0]
    if (meta[M_HT_USED] + 1) * 4 > len(K) * 3:
        _ht_rehash(HK, HV, meta)
        K = HK[0]
    mask = len(K) - 1
    i = _slot(key, mask)
    while K[i] >= 0:
        i = (i + 1) & mask
    if K[i] == EMPTY:
        meta[M_HT_USED] += 1
    K[i] = key
    HV[0][i] = val


@njit(cache=True)
def _ht_pop(HK, HV, key):
    K = HK[0]
    mask = len(K) - 1
    i = _slot(key, mask)
    while K[i] != key:
        i = (i + 1) & mask
    K[i] = TOMB
    return HV[0][i]


@njit(cache=True)
def _ht_rehash(HK, HV, meta):
    K, V = HK[0], HV[0]
    live = 0
    for i in range(len(K)):
        if K[i] >= 0:
            live += 1
    cap = len(K)
    while live * 2 > cap:
        cap *= 2
    NK = np.full(cap, EMPTY, np.int64)
    NV = np.empty(cap, np.int64)
    mask = cap - 1
    for i in range(len(K)):
        k = K[i]
        if k >= 0:
            j = _slot(k, mask)
            while NK[j] != EMPTY:
                j = (j + 1) & mask
            NK[j] = k
            NV[j] = V[i]
    HK[0] = NK
    HV[0] = NV
    meta[M_HT_USED] = live


# ---- ordered sets in the pool: d = 0 successors (out), d = 1 predecessors (ins) ------------------------
# Small sets are searched by a scan of their (contiguous, cached) slice; a set that grows past HASH_MIN
# gets its positions in the hash table. At 10^6 nodes a hash probe is a cache miss; most sets stay small.
HASH_MIN = 16


@njit(cache=True)
def _key(x, y, d, N):
    return (d * N + x) * N + y


@njit(cache=True)
def _os_find(PL, HK, HV, start, ln, hashed, x, y, d, N):
    if hashed[d, x]:
        return _ht_get(HK, HV, _key(x, y, d, N))
    pool = PL[0]
    s = start[d, x]
    for i in range(ln[d, x]):
        if pool[s + i] == y:
            return i
    return -1


@njit(cache=True)
def _os_insert(PL, HK, HV, meta, start, ln, cap, hashed, x, y, d, N):
    if _os_find(PL, HK, HV, start, ln, hashed, x, y, d, N) >= 0:
        return False
    s, l, c = start[d, x], ln[d, x], cap[d, x]
    pool = PL[0]
    if l == c:
        nc = 4 if c == 0 else 2 * c
        end = meta[M_POOL_END]
        if end + nc > len(pool):
            newlen = 2 * len(pool)
            while end + nc > newlen:
                newlen *= 2
            np_ = np.empty(newlen, np.int64)
            np_[:end] = pool[:end]
            PL[0] = np_
            pool = np_
        pool[end:end + l] = pool[s:s + l]
        start[d, x] = end
        cap[d, x] = nc
        meta[M_POOL_END] = end + nc
        s = end
    pool[s + l] = y
    ln[d, x] = l + 1
    if hashed[d, x]:
        _ht_put(HK, HV, meta, _key(x, y, d, N), l)
    elif l + 1 > HASH_MIN:
        hashed[d, x] = True
        for i in range(l + 1):
            _ht_put(HK, HV, meta, _key(x, pool[s + i], d, N), i)
    return True


@njit(cache=True)
def _os_erase(PL, HK, HV, start, ln, hashed, x, y, d, N):
    pool = PL[0]
    s = start[d, x]
    if hashed[d, x]:
        i = _ht_pop(HK, HV, _key(x, y, d, N))
    else:
        i = 0
        while pool[s + i] != y:
            i += 1
    l = ln[d, x] - 1
    last = pool[s + l]
    ln[d, x] = l
    if last != y:
        pool[s + i] = last
        if hashed[d, x]:
            _ht_set(HK, HV, _key(x, last, d, N), i)


# ---- Pearce-Kelly ------------------------------------------------------------------------------------
@njit(cache=True)
def _forward(PL, start, ln, rank, visited, parent, deltaf, stack, meta, n, upper, path):
    """DFS over successors ranked below `upper`; True and the path in `path` when it reaches `upper`."""
    pool = PL[0]
    fc = 0
    sp = 0
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
        s = start[0, n]
        for k in range(ln[0, n]):
            w = pool[s + k]
            rw = rank[w]
            if rw == upper:
                m = 0
                while n != -1:
                    path[m] = n
                    m += 1
                    n = parent[n]
                path[:m] = path[:m][::-1].copy()
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


@njit(cache=True)
def _backward(PL, start, ln, rank, visited, deltab, stack, meta, n, lower):
    pool = PL[0]
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
        s = start[1, n]
        for k in range(ln[1, n]):
            w = pool[s + k]
            if not visited[w] and lower < rank[w]:
                if sp == stack.shape[0]:
                    raise MemoryError("DFS stack overflow")
                stack[sp, 0] = w
                sp += 1
    meta[M_BCNT] = bc


@njit(cache=True)
def _reorder(rank, visited, deltab, deltaf, meta):
    bc, fc = meta[M_BCNT], meta[M_FCNT]
    b = deltab[:bc]
    f = deltaf[:fc]
    rb = np.empty(bc, np.int64)
    for i in range(bc):
        rb[i] = rank[b[i]]
    rf = np.empty(fc, np.int64)
    for i in range(fc):
        rf[i] = rank[f[i]]
    nodes = np.concatenate((b[np.argsort(rb)], f[np.argsort(rf)]))
    ranks = np.sort(np.concatenate((rb, rf)))
    for i in range(len(nodes)):
        w = nodes[i]
        rank[w] = ranks[i]
        visited[w] = False


@njit(cache=True)
def _clear(visited, nodes, cnt):
    for i in range(cnt):
        visited[nodes[i]] = False


@njit(cache=True)
def _insert_edge(S, x, y):
    PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N = S
    if x == y:
        return False
    if not _os_insert(PL, HK, HV, meta, start, ln, cap, hashed, x, y, 0, N):
        return True
    _os_insert(PL, HK, HV, meta, start, ln, cap, hashed, y, x, 1, N)
    if rank[x] <= rank[y]:
        return True
    if _forward(PL, start, ln, rank, visited, parent, deltaf, stack, meta, y, rank[x], path):
        _os_erase(PL, HK, HV, start, ln, hashed, x, y, 0, N)
        _os_erase(PL, HK, HV, start, ln, hashed, y, x, 1, N)
        _clear(visited, deltaf, meta[M_FCNT])
        return False
    _backward(PL, start, ln, rank, visited, deltab, stack, meta, x, rank[y])
    _reorder(rank, visited, deltab, deltaf, meta)
    return True


@njit(cache=True)
def _reachable(S, x, y):
    """True when y is reachable from x (path in S's path buffer, length in meta)."""
    PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N = S
    if rank[x] >= rank[y]:
        return False
    found = _forward(PL, start, ln, rank, visited, parent, deltaf, stack, meta, x, rank[y], path)
    _clear(visited, deltaf, meta[M_FCNT])
    return found


@njit(cache=True)
def _contract(S, a, b, alive):
    """Merge along a -> b: the survivor, or -1 (blocking path in the path buffer)."""
    PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N = S
    _os_erase(PL, HK, HV, start, ln, hashed, a, b, 0, N)
    _os_erase(PL, HK, HV, start, ln, hashed, b, a, 1, N)
    if _reachable(S, a, b):
        _insert_edge(S, a, b)
        return -1
    if ln[1, b] + ln[0, b] > ln[1, a] + ln[0, a]:
        a, b = b, a
    pool = PL[0]
    out_b = pool[start[0, b]:start[0, b] + ln[0, b]].copy()
    in_b = pool[start[1, b]:start[1, b] + ln[1, b]].copy()
    if hashed[0, b]:
        for y in out_b:
            _ht_pop(HK, HV, _key(b, y, 0, N))
        hashed[0, b] = False
    if hashed[1, b]:
        for y in in_b:
            _ht_pop(HK, HV, _key(b, y, 1, N))
        hashed[1, b] = False
    ln[0, b] = 0
    ln[1, b] = 0
    cap[0, b] = 0
    cap[1, b] = 0
    for y in out_b:
        _os_erase(PL, HK, HV, start, ln, hashed, y, b, 1, N)
    for y in in_b:
        _os_erase(PL, HK, HV, start, ln, hashed, y, b, 0, N)
    alive[b] = False
    for y in out_b:
        _insert_edge(S, a, y)
    for y in in_b:
        _insert_edge(S, y, a)
    return a


# ---- the pass ------------------------------------------------------------------------------------------
@njit(cache=True)
def _find(parent_uf, v):
    root = v
    while parent_uf[root] != root:
        root = parent_uf[root]
    while parent_uf[v] != root:
        nxt = parent_uf[v]
        parent_uf[v] = root
        v = nxt
    return root


@njit(cache=True)
def _cluster(parent_uf, ok, base, v):
    if v < base or not ok[v - base]:
        return -1
    return _find(parent_uf, v)


@njit(cache=True)
def _record(AL, PPL, meta, row, path, plen, base):
    A = AL[0]
    k = meta[M_NATT]
    if k == A.shape[0]:
        NA = np.empty((2 * A.shape[0], A_COLS), np.int64)
        NA[:k] = A[:k]
        AL[0] = NA
        A = NA
    for c in range(A_COLS):
        A[k, c] = row[c]
    if plen > 0:
        P = PPL[0]
        m = meta[M_NPATH]
        if m + plen > len(P):
            NP = np.empty(max(2 * len(P), m + plen), np.int64)
            NP[:m] = P[:m]
            PPL[0] = NP
            P = NP
        c = 0
        for i in range(plen):
            p = path[i]
            if p >= base:
                P[m + c] = p - base
                c += 1
        A[k, A_PS] = m
        A[k, A_PL] = c
        meta[M_NPATH] = m + c
    meta[M_NATT] = k + 1


@njit(cache=True)
def _try_contract(S, C, frm, to, phase):
    PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N = S
    ok, base, alive, parent_uf, size, eff, forced, device, scope, groups, max_size, record, AL, PPL = C
    row = np.zeros(A_COLS, np.int64)
    row[A_PHASE] = phase
    row[A_SRC] = frm - base
    row[A_DST] = to - base
    code = C_NONE
    if device[frm] != device[to]:
        code = C_DEVICE
        row[A_X1] = device[frm]
        row[A_X2] = device[to]
    elif scope[frm] >= 0 and scope[to] >= 0 and scope[frm] != scope[to]:
        code = C_SCOPE
        row[A_X1] = scope[frm]
        row[A_X2] = scope[to]
    elif size[frm] + size[to] > max_size:
        code = C_MAXSIZE
        row[A_X1] = size[frm] + size[to]
    else:
        pool = PL[0]
        s = start[1, to]
        for k in range(ln[1, to]):
            p = pool[s + k]
            cin = _cluster(parent_uf, ok, base, p)
            if cin >= 0 and (device[cin] != device[to] or device[cin] != device[frm]):
                code = C_CROSS
                row[A_X1] = p - base
                break
    plen = 0
    if code == C_NONE:
        survivor = _contract(S, frm, to, alive)
        if survivor >= 0:
            other = to if survivor == frm else frm
            size[survivor] = size[frm] + size[to]
            eff[survivor] = eff[frm] + eff[to]
            forced[survivor] = forced[frm] or forced[to]
            scope[survivor] = scope[frm] if scope[frm] >= 0 else scope[to]
            device[survivor] = device[frm]
            parent_uf[other] = survivor
            if record:
                row[A_MERGED] = 1
                _record(AL, PPL, meta, row, path, 0, base)
            return True
        code = C_CYCLE
        plen = meta[M_PATHLEN] - 1  # path[1:]
    if record and phase >= 0:
        row[A_CODE] = code
        _record(AL, PPL, meta, row, path[1:], plen, base)
    return False


@njit(cache=True)
def build(N, esrc, edst, rank):
    """The cycle graph with every edge inserted in the reference's order; returns the state tuple."""
    E = len(esrc)
    PL = List()
    PL.append(np.empty(max(16, 4 * E + 8), np.int64))
    cap0 = 1
    while cap0 < 2 * E + 1024:
        cap0 *= 2
    HK = List()
    HK.append(np.full(cap0, EMPTY, np.int64))
    HV = List()
    HV.append(np.empty(cap0, np.int64))
    meta = np.zeros(8, np.int64)
    start = np.zeros((2, N), np.int64)
    ln = np.zeros((2, N), np.int64)
    cap = np.zeros((2, N), np.int64)
    visited = np.zeros(N, np.bool_)
    parent = np.empty(N, np.int64)
    deltaf = np.empty(N, np.int64)
    deltab = np.empty(N, np.int64)
    stack = np.empty((N + E + 2, 2), np.int64)
    path = np.empty(N + 1, np.int64)
    hashed = np.zeros((2, N), np.bool_)
    S = (PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N)
    for i in range(E):
        _insert_edge(S, esrc[i], edst[i])
    AL = List()
    AL.append(np.empty((max(16, E), A_COLS), np.int64))
    PPL = List()
    PPL.append(np.empty(1024, np.int64))
    return S, AL, PPL


@njit(cache=True)
def results(S, AL, PPL):
    """The attempt table and the path pool, trimmed."""
    meta = S[3]
    return AL[0][:meta[M_NATT]].copy(), PPL[0][:meta[M_NPATH]].copy()


@njit(cache=True)
def run_phase(S, C, phase, mode):
    """One pass of for_each_edge; mode 0: target must be a lone shape consumer, 1: not a lone no-op, 2: any."""
    PL, HK, HV, meta, start, ln, cap, hashed, rank, visited, parent, deltaf, deltab, stack, path, N = S
    ok, base, alive, parent_uf, size, eff, forced, device, scope, groups, max_size, record, AL, PPL = C
    at_rank = np.full(N, -1, np.int64)
    for v in range(N):
        if alive[v]:
            at_rank[rank[v]] = v
    changed = False
    for r in range(N - 1, -1, -1):
        v = at_rank[r]
        if v < 0:
            continue
        frm = _cluster(parent_uf, ok, base, v)
        if frm < 0:
            continue
        pool = PL[0]
        outs = pool[start[0, frm]:start[0, frm] + ln[0, frm]].copy()
        for w in outs:
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
            if go:
                if _try_contract(S, C, frm, to, phase):
                    changed = True
    return changed


@njit(cache=True)
def roots(parent_uf, ok, base, n):
    out = np.full(n, -1, np.int64)
    for j in range(n):
        if ok[j]:
            out[j] = _find(parent_uf, base + j)
    return out
