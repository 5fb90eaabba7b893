# Insertion-ordered neighbour sets: slices of one pool, big ones indexed by an open-addressing hash table.
#
# Inline helpers, compiled into each module that cimports them. A set is erased from by swapping with its
# last element. Small sets are searched by a scan of their (contiguous, cached) slice; a set that grows past
# HASH_MIN gets its positions in the hash table (at 10^6 nodes a hash probe is a cache miss, and most sets
# stay small). The table uses linear probing and deletion by shifting back (no tombstones) and holds at most
# half as many keys as slots: callers grow it (ht_grow) before a step that could add more (ht_short).
from libc.stdint cimport int32_t, int64_t, uint64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc

from xcviz.clustering._kernel.state cimport (CP, E_MEMORY, E_POOL, EMPTY, HASH_MIN, HS, IN, LN, SMW, ST,
                                             State)


cdef inline int64_t _slot(int64_t key, int64_t mask) noexcept nogil:
    # splitmix64's finaliser: keys (d*N + x)*N + y are far from random in their low bits
    cdef uint64_t h = <uint64_t>key
    h ^= h >> 33
    h *= 0xFF51AFD7ED558CCDULL
    h ^= h >> 33
    h *= 0xC4CEB9FE1A85EC53ULL
    h ^= h >> 33
    return <int64_t>(h & <uint64_t>mask)


cdef inline int64_t ht_get(int64_t* HK, int32_t* HV, int64_t cap, int64_t key) noexcept nogil:
    cdef int64_t mask = cap - 1
    cdef int64_t i = _slot(key, mask)
    cdef int64_t k
    while True:
        k = HK[i]
        if k == key:
            return HV[i]
        if k == EMPTY:
            return -1
        i = (i + 1) & mask


cdef inline void ht_set(int64_t* HK, int32_t* HV, int64_t cap, int64_t key, int64_t val) noexcept nogil:
    # update the value of an existing key
    cdef int64_t mask = cap - 1
    cdef int64_t i = _slot(key, mask)
    while HK[i] != key:
        i = (i + 1) & mask
    HV[i] = <int32_t>val


cdef inline void _ht_place(int64_t* HK, int32_t* HV, int64_t cap, int64_t key, int64_t val) noexcept nogil:
    cdef int64_t mask = cap - 1
    cdef int64_t i = _slot(key, mask)
    while HK[i] != EMPTY:
        i = (i + 1) & mask
    HK[i] = key
    HV[i] = <int32_t>val


cdef inline int64_t ht_pop(int64_t* HK, int32_t* HV, int64_t cap, int64_t key) noexcept nogil:
    cdef int64_t mask = cap - 1
    cdef int64_t i = _slot(key, mask)
    cdef int64_t j, k, h, val
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


cdef inline bint ht_short(State* S, int64_t extra) noexcept nogil:
    # would `extra` more keys fill the hash table beyond half?
    return (S.ht_live + extra) * 2 > S.hcap


cdef inline int ht_grow(State* S, int64_t extra) noexcept nogil:
    # a hash table big enough for `extra` more keys and as many again; -1 (S.err set) without memory
    cdef int64_t cap = S.hcap
    cdef int64_t i
    while (S.ht_live + extra) * 4 > cap:
        cap *= 2
    cdef int64_t* NK = <int64_t*>calloc(cap, sizeof(int64_t))
    cdef int32_t* NV = <int32_t*>malloc(cap * sizeof(int32_t))
    if NK == NULL or NV == NULL:
        free(NK)
        free(NV)
        S.err = E_MEMORY
        return -1
    for i in range(S.hcap):
        if S.HK[i] != EMPTY:
            _ht_place(NK, NV, cap, S.HK[i], S.HV[i])
    free(S.HK)
    free(S.HV)
    S.HK, S.HV, S.hcap = NK, NV, cap
    return 0


# ---- the sets: d = 0 successors (out), d = 1 predecessors (in) ------------------------------------------
cdef inline int64_t edge_key(int64_t x, int64_t y, int64_t d, int64_t N) noexcept nogil:
    return (d * N + x) * N + y


cdef inline int64_t os_find(State* S, int64_t x, int64_t y, int64_t d) noexcept nogil:
    cdef int32_t* row = S.SM + x * SMW + d * IN
    if row[HS]:
        return ht_get(S.HK, S.HV, S.hcap, edge_key(x, y, d, S.N))
    cdef int32_t* s = S.pool + row[ST]
    cdef int64_t i
    for i in range(row[LN]):
        if s[i] == y:
            return i
    return -1


cdef inline void _compact(State* S) noexcept nogil:
    # pack every set at the front of the pool (capacity = length) when its free end runs out (rare: the
    # buffer it packs into is made on the first time)
    cdef int64_t end = 0
    cdef int64_t x, i, n
    cdef int32_t* row
    if S.ptmp == NULL:
        S.ptmp = <int32_t*>malloc(S.pool_len * sizeof(int32_t))
        if S.ptmp == NULL:
            S.err = E_MEMORY
            return
    for x in range(S.N * 2):  # (each node's two rows of SM, in order)
        row = S.SM + x * IN
        n = row[LN]
        for i in range(n):
            S.ptmp[end + i] = S.pool[row[ST] + i]
        row[ST] = <int32_t>end
        row[CP] = <int32_t>n
        end += n
    for i in range(end):
        S.pool[i] = S.ptmp[i]
    S.pool_end = end


cdef inline bint unkept(State* S, int64_t x, int64_t d) noexcept nogil:
    # Sets the pass never walks, so their order never counts: the successors of SOURCE and of the graph
    # inputs (no search reaches them: their only predecessor is SOURCE) and SINK's predecessors (SINK has
    # no successors, so no search leaves from it). They are not kept: membership is read from the other
    # end's set. At 10^6 nodes a graph input that every layer reads (a weight) has 10^5 successors, and
    # keeping them cost a hash-table miss or two per contraction. (base 0: a bare table, all kept.)
    return S.base > 0 and ((d == 0 and x < S.base) or (d == 1 and x == 1))


cdef inline bint os_insert(State* S, int64_t x, int64_t y, int64_t d) noexcept nogil:
    cdef int32_t* row
    cdef int64_t l, c, nc, end, i, s
    if unkept(S, x, d):  # new unless the other end has it (insert_edge then adds it there)
        return d == 1 or os_find(S, y, x, 1) < 0
    if os_find(S, x, y, d) >= 0:
        return False
    row = S.SM + x * SMW + d * IN
    l, c = row[LN], row[CP]
    if l == c:
        nc = 4 if c == 0 else 2 * c
        if S.pool_end + nc > S.pool_len:
            _compact(S)
            if S.pool_end + nc > S.pool_len:
                S.err = E_POOL
                return False
        end = S.pool_end
        s = row[ST]
        for i in range(l):
            S.pool[end + i] = S.pool[s + i]
        row[ST] = <int32_t>end
        row[CP] = <int32_t>nc
        S.pool_end = end + nc
    s = row[ST]
    S.pool[s + l] = <int32_t>y
    row[LN] = <int32_t>(l + 1)
    if row[HS]:
        S.ht_live += 1
        _ht_place(S.HK, S.HV, S.hcap, edge_key(x, y, d, S.N), l)
    elif l + 1 > HASH_MIN:
        row[HS] = 1
        for i in range(l + 1):
            S.ht_live += 1
            _ht_place(S.HK, S.HV, S.hcap, edge_key(x, S.pool[s + i], d, S.N), i)
    return True


cdef inline void os_erase(State* S, int64_t x, int64_t y, int64_t d) noexcept nogil:
    cdef int32_t* row
    cdef int64_t s, i, l, last
    if unkept(S, x, d):
        return
    row = S.SM + x * SMW + d * IN
    s = row[ST]
    if row[HS]:
        S.ht_live -= 1
        i = ht_pop(S.HK, S.HV, S.hcap, edge_key(x, y, d, S.N))
    else:
        i = 0
        while S.pool[s + i] != y:
            i += 1
    l = row[LN] - 1
    last = S.pool[s + l]
    row[LN] = <int32_t>l
    if last != y:
        S.pool[s + i] = <int32_t>last
        if row[HS]:
            ht_set(S.HK, S.HV, S.hcap, edge_key(x, last, d, S.N), i)
