"""Compiled (numba, cached) MarkForCompilationPass over integer ids: the same steps as mark_reference.py.

Layout: node ids are ints; each node's successor and predecessor sets are insertion-ordered slices of one
int32 pool array (start, length, capacity in the node's row of SM), erased by swapping with the last
element; one open-addressing hash table maps (node, neighbour, direction) to the neighbour's position in
the slice.

Speed: the graph-editing helpers (`_leaf`) are compiled without numba's reference counting. With it,
every call that passes arrays pays atomic increments and decrements (a few per array), which was most of
the pass's time. Such functions cannot allocate: the pool has a size that is always enough (see build),
and the hash table and the attempt table are grown by build and run_phase, which can.
Every loop mirrors the reference line by line; the equivalence tests hold them together.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# numba's `_nrt=False` (no reference counting; no allocation inside) is an internal but long-standing flag
_leaf = njit(cache=True, _nrt=False)

EMPTY = 0  # a free hash slot; keys are never 0 (that would be the self-edge 0 -> 0)
# attempt columns
A_PHASE, A_SRC, A_DST, A_MERGED, A_CODE, A_X1, A_X2, A_PS, A_PL = range(9)
A_COLS = 9
C_NONE, C_DEVICE, C_SCOPE, C_MAXSIZE, C_CROSS, C_CYCLE = range(6)
# meta slots
M_POOL_END, M_NATT, M_NPATH, M_FCNT, M_BCNT, M_PATHLEN, M_X1, M_X2, M_HT_LIVE = range(9)
# scratch rows (each N long): run_phase's successor snapshot, _contract's copies of the merged node's sets
SC_SNAP, SC_OUT, SC_IN = range(3)
# per node and direction (successors at 0, predecessors at IN), one row of SM: the set's start in the pool,
# length, capacity, and whether it is hashed: one row (32 bytes) to fetch, not eight arrays.
ST, LN, CP, HS = range(4)
IN = 4


# ---- hash table: linear probing, deletion by shifting back (no tombstones). It holds at most half as
# many keys as slots: the leaves cannot allocate, so build and run_phase grow it (_ht_grow) before a step
# that could add more keys than that allows (_ht_short).
@_leaf
def _slot(key, mask):
    """splitmix64's finaliser: keys (d*N + x)*N + y are far from random in their low bits."""
    h = np.uint64(key)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return np.int64(h & np.uint64(mask))


@_leaf
def _ht_get(HK, HV, key):
    mask = len(HK) - 1
    i = _slot(key, mask)
    while True:
        k = HK[i]
        if k == key:
            return HV[i]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


@_leaf
def _ht_set(HK, HV, key, val):
    """Update the value of an existing key."""
    mask = len(HK) - 1
    i = _slot(key, mask)
    while HK[i] != key:
        i = (i + 1) & mask
    HV[i] = val


@_leaf
def _ht_put(HK, HV, meta, key, val):
    """Add a key that is not in the table."""
    meta[M_HT_LIVE] += 1
    _ht_place(HK, HV, key, val)


@_leaf
def _ht_place(HK, HV, key, val):
    mask = len(HK) - 1
    i = _slot(key, mask)
    while HK[i] != EMPTY:
        i = (i + 1) & mask
    HK[i] = key
    HV[i] = val


@_leaf
def _ht_pop(HK, HV, meta, key):
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


# ---- ordered sets in the pool: d = 0 successors (out), d = 1 predecessors (ins) ------------------------
# Small sets are searched by a scan of their (contiguous, cached) slice; a set that grows past HASH_MIN
# gets its positions in the hash table. At 10^6 nodes a hash probe is a cache miss; most sets stay small.
HASH_MIN = 16


@_leaf
def _key(x, y, d, N):
    return (d * N + x) * N + y


@_leaf
def _os_find(pool, HK, HV, SM, x, y, d, N):
    if SM[x, d * IN + HS]:
        return _ht_get(HK, HV, _key(x, y, d, N))
    s = SM[x, d * IN + ST]
    for i in range(SM[x, d * IN + LN]):
        if pool[s + i] == y:
            return i
    return -1


@_leaf
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


@_leaf
def _os_insert(pool, ptmp, HK, HV, meta, SM, x, y, d, N):
    if _os_find(pool, HK, HV, SM, x, y, d, N) >= 0:
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
        _ht_put(HK, HV, meta, _key(x, y, d, N), l)
    elif l + 1 > HASH_MIN:
        SM[x, d * IN + HS] = True
        for i in range(l + 1):
            _ht_put(HK, HV, meta, _key(x, pool[s + i], d, N), i)
    return True


@_leaf
def _os_erase(pool, HK, HV, meta, SM, x, y, d, N):
    s = SM[x, d * IN + ST]
    if SM[x, d * IN + HS]:
        i = _ht_pop(HK, HV, meta, _key(x, y, d, N))
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
            _ht_set(HK, HV, _key(x, last, d, N), i)


# ---- Pearce-Kelly ------------------------------------------------------------------------------------
@_leaf
def _forward(pool, SM, rank, visited, parent, deltaf, stack, meta, n, upper, path):
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


@_leaf
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


@_leaf
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


@_leaf
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


@_leaf
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


@_leaf
def _clear(visited, nodes, cnt):
    for i in range(cnt):
        visited[nodes[i]] = False


@_leaf
def _insert_edge(S, x, y):
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
    if x == y:
        return False
    if not _os_insert(pool, ptmp, HK, HV, meta, SM, x, y, 0, N):
        return True
    _os_insert(pool, ptmp, HK, HV, meta, SM, y, x, 1, N)
    if rank[x] <= rank[y]:
        return True
    if _forward(pool, SM, rank, visited, parent, deltaf, stack, meta, y, rank[x], path):
        _os_erase(pool, HK, HV, meta, SM, x, y, 0, N)
        _os_erase(pool, HK, HV, meta, SM, y, x, 1, N)
        _clear(visited, deltaf, meta[M_FCNT])
        return False
    _backward(pool, SM, rank, visited, deltab, stack, meta, x, rank[y])
    _reorder(rank, visited, deltab, deltaf, meta, rbuf)
    return True


@_leaf
def _reachable(S, x, y):
    """True when y is reachable from x (path in S's path buffer, length in meta)."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
    if rank[x] >= rank[y]:
        return False
    found = _forward(pool, SM, rank, visited, parent, deltaf, stack, meta, x, rank[y], path)
    _clear(visited, deltaf, meta[M_FCNT])
    return found


@_leaf
def _contract(S, a, b, alive):
    """Merge along a -> b: the survivor, or -1 (blocking path in the path buffer)."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
    _os_erase(pool, HK, HV, meta, SM, a, b, 0, N)
    _os_erase(pool, HK, HV, meta, SM, b, a, 1, N)
    if _reachable(S, a, b):
        _insert_edge(S, a, b)
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
            _ht_pop(HK, HV, meta, _key(b, scratch[SC_OUT, k], 0, N))
        SM[b, HS] = False
    if SM[b, IN + HS]:
        for k in range(n_in):
            _ht_pop(HK, HV, meta, _key(b, scratch[SC_IN, k], 1, N))
        SM[b, IN + HS] = False
    SM[b, LN] = 0
    SM[b, IN + LN] = 0
    SM[b, CP] = 0
    SM[b, IN + CP] = 0
    for k in range(n_out):
        _os_erase(pool, HK, HV, meta, SM, scratch[SC_OUT, k], b, 1, N)
    for k in range(n_in):
        _os_erase(pool, HK, HV, meta, SM, scratch[SC_IN, k], b, 0, N)
    alive[b] = False
    for k in range(n_out):
        _insert_edge(S, a, scratch[SC_OUT, k])
    for k in range(n_in):
        _insert_edge(S, scratch[SC_IN, k], a)
    return a


# ---- the pass ------------------------------------------------------------------------------------------
@_leaf
def _find(parent_uf, v):
    root = v
    while parent_uf[root] != root:
        root = parent_uf[root]
    while parent_uf[v] != root:
        nxt = parent_uf[v]
        parent_uf[v] = root
        v = nxt
    return root


@_leaf
def _cluster(parent_uf, ok, base, v):
    if v < base or not ok[v - base]:
        return -1
    return _find(parent_uf, v)


@_leaf
def _try_contract(S, C, frm, to):
    """C_NONE when merged; otherwise the refusal's code, its details in meta (M_X1, M_X2) and, for a
    cycle, the blocking path in the path buffer."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
    ok, base, alive, parent_uf, size, eff, forced, device, scope, groups, max_size, record = C
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
    if size[frm] + size[to] > max_size:
        meta[M_X1] = size[frm] + size[to]
        return C_MAXSIZE
    s = SM[to, IN + ST]
    for k in range(SM[to, IN + LN]):
        p = pool[s + k]
        cin = _cluster(parent_uf, ok, base, p)
        if cin >= 0 and (device[cin] != device[to] or device[cin] != device[frm]):
            meta[M_X1] = p - base
            return C_CROSS
    survivor = _contract(S, frm, to, alive)
    if survivor < 0:
        return C_CYCLE
    other = to if survivor == frm else frm
    size[survivor] = size[frm] + size[to]
    eff[survivor] = eff[frm] + eff[to]
    forced[survivor] = forced[frm] or forced[to]
    scope[survivor] = scope[frm] if scope[frm] >= 0 else scope[to]
    device[survivor] = device[frm]
    parent_uf[other] = survivor
    return C_NONE


@_leaf
def _ht_short(S, extra):
    """Would `extra` more keys fill the hash table beyond half?"""
    return (S[4][M_HT_LIVE] + extra) * 2 > len(S[2])


@njit(cache=True)
def _ht_grow(S, extra):
    """S with a hash table big enough for `extra` more keys and as many again."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, rbuf, scratch, N = S
    cap = len(HK)
    while (meta[M_HT_LIVE] + extra) * 4 > cap:
        cap *= 2
    NK = np.zeros(cap, np.int64)
    NV = np.empty(cap, np.int64)
    for i in range(len(HK)):
        if HK[i] != EMPTY:
            _ht_place(NK, NV, HK[i], HV[i])
    return (pool, ptmp, NK, NV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, rbuf, scratch, N)


@njit(cache=True)
def build(N, esrc, edst, ndata, direct=True):
    """The cycle graph as the reference leaves it after inserting every edge in order; returns the state.

    The edges come as the reference inserts them: SOURCE -> SINK, `ndata` data and control edges in node
    order (so grouped by destination), then FixupSourceAndSinkEdges's edges in node-id order. When every
    data edge goes forward in id order (the IR is topologically sorted) the state is written directly
    (_fill_sets, _fixup_ranks); otherwise, or with direct=False (tests compare the two), each edge goes
    through Pearce-Kelly as in the reference.

    The pool has a fixed size: contraction never adds edges (each insertion replaces an erased edge), so
    the sets hold at most 2E entries, and a pool of 4E + 8 always has room for a set to double after
    _compact."""
    E = len(esrc)
    pool = np.empty(4 * E + 8, np.int32)
    ptmp = np.empty(2 * E + 8, np.int32)
    meta = np.zeros(16, np.int64)
    SM = np.zeros((N, 2 * IN), np.int32)
    rank = np.arange(N)
    visited = np.zeros(N, np.bool_)
    parent = np.empty(N, np.int64)
    deltaf = np.empty(N, np.int64)
    deltab = np.empty(N, np.int64)
    stack = np.empty((N + E + 2, 2), np.int64)
    path = np.empty(N + 1, np.int64)
    rbuf = np.empty(N, np.int64)
    scratch = np.empty((3, N), np.int64)
    forward = direct
    for i in range(1, 1 + ndata):
        if not forward or esrc[i] >= edst[i]:
            forward = False
            break
    hashed = _fill_sets(pool, meta, SM, esrc, edst, N) if forward else 0
    cap = 1024
    while hashed * 4 > cap:
        cap *= 2
    HK = np.zeros(cap, np.int64)
    HV = np.empty(cap, np.int64)
    S = (pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, rbuf, scratch, N)
    if forward:
        _hash_big_sets(HK, HV, meta, pool, SM, N)
        _fixup_ranks(S, esrc, edst, ndata)
    else:
        room = 2 * (HASH_MIN + 1)  # an insertion may hash both of its sets
        for i in range(E):
            if _ht_short(S, room):
                S = _ht_grow(S, room)
            _insert_edge(S, esrc[i], edst[i])
    return S


@njit(cache=True)
def _fill_sets(pool, meta, SM, esrc, edst, N):
    """Successor and predecessor sets in insertion order, each node's two sets side by side in the pool
    (capacity = length): what inserting the edges one by one leaves. A repeated edge (an op reading one
    tensor twice) is dropped as _os_insert would; repeats are next to each other because edges come
    grouped by destination. Returns how many entries sets longer than HASH_MIN hold."""
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
    hashed = 0
    for x in range(N):
        for d in range(2):
            SM[x, d * IN + ST] = end
            SM[x, d * IN + CP] = deg[x, d]
            end += deg[x, d]
            if deg[x, d] > HASH_MIN:
                hashed += deg[x, d]
    meta[M_POOL_END] = end
    for i in range(E):
        if keep[i]:
            x, y = esrc[i], edst[i]
            pool[SM[x, ST] + SM[x, LN]] = y
            SM[x, LN] += 1
            pool[SM[y, IN + ST] + SM[y, IN + LN]] = x
            SM[y, IN + LN] += 1
    return hashed


@njit(cache=True)
def _hash_big_sets(HK, HV, meta, pool, SM, N):
    """Positions of the sets longer than HASH_MIN in the hash table, as _os_insert leaves them."""
    for x in range(N):
        for d in range(2):
            if SM[x, d * IN + LN] > HASH_MIN:
                SM[x, d * IN + HS] = True
                s = SM[x, d * IN + ST]
                for i in range(SM[x, d * IN + LN]):
                    _ht_put(HK, HV, meta, _key(x, pool[s + i], d, N), i)


@njit(cache=True)
def _fixup_ranks(S, esrc, edst, ndata):
    """The ranks Pearce-Kelly leaves after the fixup edges, when all data edges go forward in id order.

    Ranks start as ids; data edges and SOURCE -> v never contradict them. Each v -> SINK (ascending v)
    does: SINK's rank is the previous such v' (1 at first), the backward search from v collects the
    ancestors of v ranked above v' -- exactly v's ancestors with ids in (v', v], still ranked by id --
    and the re-ranking shifts each of them down to the previous one's rank (the first takes v'), SINK
    taking v. One sweep down finds those ancestors for every window, one sweep up shifts the ranks."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
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


@njit(cache=True)
def run_phase(S, C, phase, mode, A, P):
    """One pass of for_each_edge; mode 0: target must be a lone shape consumer, 1: not a lone no-op, 2: any.

    Records attempts in A (rows) and P (blocking paths), growing them as needed; returns (changed, S, A, P)
    (S with a bigger hash table when it had to grow)."""
    pool, ptmp, HK, HV, meta, SM, rank, visited, parent, deltaf, deltab, stack, path, \
        rbuf, scratch, N = S
    ok, base, alive, parent_uf, size, eff, forced, device, scope, groups, max_size, record = C
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
        # snapshot of frm's successors, as the reference's list(gc.out[frm])
        n_outs = SM[frm, LN]
        s = SM[frm, ST]
        for k in range(n_outs):
            scratch[SC_SNAP, k] = pool[s + k]
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
            # a merge hashes at most the two clusters' entries (see _ht_grow)
            room = SM[frm, LN] + SM[frm, IN + LN] + SM[to, LN] + SM[to, IN + LN]
            if _ht_short(S, room):
                S = _ht_grow(S, room)
            code = _try_contract(S, C, frm, to)
            if code == C_NONE:
                changed = True
            if not record or (code != C_NONE and phase < 0):
                continue
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
                    p = path[i]
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
def results(S, A, P):
    """The attempt table and the path pool, trimmed (views: a copy would cost its page faults again)."""
    meta = S[4]
    return A[:meta[M_NATT]], P[:meta[M_NPATH]]


@njit(cache=True)
def roots(parent_uf, ok, base, n):
    out = np.full(n, -1, np.int64)
    for j in range(n):
        if ok[j]:
            out[j] = _find(parent_uf, base + j)
    return out
