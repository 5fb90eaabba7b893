# Pearce-Kelly dynamic topological order: insert an edge, or find the path that makes it a cycle.
#
# As GraphCycles in TensorFlow (and clustering/cycles.py, the reference's cycle graph): ranks stay a
# topological order; an edge x -> y with rank[x] > rank[y] searches forward from y (below rank[x]) and
# backward from x (above rank[y]) and hands the union of the two regions' ranks back out in order.
from libc.stdint cimport int32_t, int64_t

from xcviz.clustering._kernel.sets cimport os_erase, os_insert
from xcviz.clustering._kernel.state cimport E_STACK, IN, LN, SMW, ST, State


cdef inline bint forward(State* S, int64_t n, int64_t upper) noexcept nogil:
    # DFS over successors ranked below `upper`; True and the path in S.path when it reaches `upper`
    cdef int64_t fc = 0, sp = 1, p, k, w, rw, m, i, t
    cdef int32_t* s
    cdef int32_t* rank = S.rank
    cdef int32_t* stack = S.stack
    stack[0] = <int32_t>n
    stack[1] = -1
    while sp > 0:
        sp -= 1
        n = stack[2 * sp]
        p = stack[2 * sp + 1]
        if S.visited[n]:
            continue
        S.visited[n] = 1
        S.parent[n] = <int32_t>p
        S.deltaf[fc] = <int32_t>n
        fc += 1
        s = S.pool + S.SM[n * SMW + ST]
        for k in range(S.SM[n * SMW + LN]):
            w = s[k]
            rw = rank[w]
            if rw == upper:
                m = 0
                while n != -1:
                    S.path[m] = <int32_t>n
                    m += 1
                    n = S.parent[n]
                for i in range(m // 2):
                    t = S.path[i]
                    S.path[i] = S.path[m - 1 - i]
                    S.path[m - 1 - i] = <int32_t>t
                S.pathlen = m
                S.fcnt = fc
                return True
            if not S.visited[w] and rw < upper:
                if sp == S.stack_len:
                    S.err = E_STACK
                    S.fcnt = fc
                    return False
                stack[2 * sp] = <int32_t>w
                stack[2 * sp + 1] = <int32_t>n
                sp += 1
    S.fcnt = fc
    return False


cdef inline void _backward(State* S, int64_t n, int64_t lower) noexcept nogil:
    cdef int64_t bc = 0, sp = 1, k, w
    cdef int32_t* s
    cdef int32_t* stack = S.stack
    stack[0] = <int32_t>n
    while sp > 0:
        sp -= 1
        n = stack[2 * sp]
        if S.visited[n]:
            continue
        S.visited[n] = 1
        S.deltab[bc] = <int32_t>n
        bc += 1
        s = S.pool + S.SM[n * SMW + IN + ST]
        for k in range(S.SM[n * SMW + IN + LN]):
            w = s[k]
            if not S.visited[w] and lower < S.rank[w]:
                if sp == S.stack_len:
                    S.err = E_STACK
                    S.bcnt = bc
                    return
                stack[2 * sp] = <int32_t>w
                sp += 1
    S.bcnt = bc


cdef inline void _sift(int32_t* nodes, int32_t* rank, int64_t root, int64_t end) noexcept nogil:
    cdef int64_t child
    cdef int32_t t
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and rank[nodes[child]] < rank[nodes[child + 1]]:
            child += 1
        if rank[nodes[root]] >= rank[nodes[child]]:
            return
        t = nodes[root]
        nodes[root] = nodes[child]
        nodes[child] = t
        root = child


cdef inline void _sort_by_rank(int32_t* nodes, int64_t cnt, int32_t* rank) noexcept nogil:
    # sort nodes[:cnt] by rank in place (ranks are distinct, so any sort gives the same order): insertion
    # sort for the usual few nodes, heapsort (no allocation) for many
    cdef int64_t i, j, r, root, end
    cdef int32_t w, t
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
        t = nodes[0]
        nodes[0] = nodes[end]
        nodes[end] = t
        _sift(nodes, rank, 0, end)


cdef inline void _reorder(State* S) noexcept nogil:
    # deltab (by rank), then deltaf (by rank), take the sorted union of their ranks
    cdef int64_t bc = S.bcnt, fc = S.fcnt, i = 0, j = 0, k
    cdef int32_t* rank = S.rank
    cdef int32_t w
    _sort_by_rank(S.deltab, bc, rank)
    _sort_by_rank(S.deltaf, fc, rank)
    for k in range(bc + fc):  # both are rank-sorted now: merge their ranks
        if j >= fc or (i < bc and rank[S.deltab[i]] < rank[S.deltaf[j]]):
            S.rbuf[k] = rank[S.deltab[i]]
            i += 1
        else:
            S.rbuf[k] = rank[S.deltaf[j]]
            j += 1
    for i in range(bc):
        w = S.deltab[i]
        rank[w] = S.rbuf[i]
        S.visited[w] = 0
    for j in range(fc):
        w = S.deltaf[j]
        rank[w] = S.rbuf[bc + j]
        S.visited[w] = 0


cdef inline void _clear(State* S, int32_t* nodes, int64_t cnt) noexcept nogil:
    cdef int64_t i
    for i in range(cnt):
        S.visited[nodes[i]] = 0


cdef inline bint insert_edge(State* S, int64_t x, int64_t y) noexcept nogil:
    # add x -> y unless it closes a cycle (then False, the graph unchanged); True also when it exists
    if x == y:
        return False
    if not os_insert(S, x, y, 0):
        return True
    os_insert(S, y, x, 1)
    if S.rank[x] <= S.rank[y]:
        return True
    if forward(S, y, S.rank[x]):
        os_erase(S, x, y, 0)
        os_erase(S, y, x, 1)
        _clear(S, S.deltaf, S.fcnt)
        return False
    _backward(S, x, S.rank[y])
    _reorder(S)
    return True


cdef inline bint reachable(State* S, int64_t x, int64_t y) noexcept nogil:
    # True when y is reachable from x (the path in S.path, S.pathlen long)
    if S.rank[x] >= S.rank[y]:
        return False
    cdef bint found = forward(S, x, S.rank[y])
    _clear(S, S.deltaf, S.fcnt)
    return found
