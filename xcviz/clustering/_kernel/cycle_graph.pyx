# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The cycle graph before contraction: every edge in the reference's order, written directly when it can be.

graph_edges and cycle_edges list the edges as the reference inserts them (the graph's, then SOURCE's and
SINK's fixups). When every data edge goes forward in id order (the IR is topologically sorted), the sets
and the ranks that inserting the edges one by one would leave are written directly (_fill_sets,
_fixup_ranks) rather than inserted edge by edge through Pearce-Kelly. The rest of the module shows the
sets and the hash table to the tests."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport calloc, free, malloc

import numpy as np

from xcviz.clustering._kernel.order cimport insert_edge
from xcviz.clustering._kernel.sets cimport (_ht_place, edge_key, ht_get, ht_grow, ht_pop, ht_set, ht_short,
                                            os_erase, os_find, os_insert, unkept)
from xcviz.clustering._kernel.state cimport CP, HASH_MIN, HS, IN, LN, SMW, ST, State


def graph_edges(int64_t N, int64_t base, const int64_t[::1] src, const int64_t[::1] lens, bint positions):
    """The data and control edges in the reference's insertion order (node order, each node's inputs then its
    control inputs), as (es, ed) in cycle-graph ids: lens[j] edges into node base + j, their sources
    src[...] back to back. positions: src holds the graph's own numbering (node positions, n + i for graph
    input i, -1 for an absent input, which is no edge) rather than cycle-graph ids."""
    cdef int64_t n = N - base, E = src.shape[0], k = 0, at = 0, j, t, x
    es_a = np.empty(E, np.int64)
    ed_a = np.empty(E, np.int64)
    cdef int64_t[::1] es = es_a, ed = ed_a
    for j in range(n):
        for t in range(lens[j]):
            x = src[at]
            at += 1
            if positions:
                if x < 0:
                    continue
                x = x + base if x < n else x - n + 2
            es[k] = x
            ed[k] = base + j
            k += 1
    return es_a[:k], ed_a[:k]


def cycle_edges(const int64_t[::1] es, const int64_t[::1] ed, int64_t N):
    """Every edge of the cycle graph in the reference's insertion order: SOURCE -> SINK, the graph's
    (es -> ed), then FixupSourceAndSinkEdges's in node-id order (SOURCE -> v before v -> SINK); and
    whether each node has a successor among the graph's edges."""
    cdef int64_t E0 = es.shape[0], fix = 0, i, v, k
    has_in_a = np.zeros(N, np.uint8)
    has_out_a = np.zeros(N, np.uint8)
    cdef uint8_t[::1] has_in = has_in_a, has_out = has_out_a
    for i in range(E0):
        has_out[es[i]] = 1
        has_in[ed[i]] = 1
    for v in range(2, N):
        fix += (not has_in[v]) + (not has_out[v])
    esrc_a = np.empty(1 + E0 + fix, np.int64)
    edst_a = np.empty(1 + E0 + fix, np.int64)
    cdef int64_t[::1] esrc = esrc_a, edst = edst_a
    esrc[0], edst[0] = 0, 1
    for i in range(E0):
        esrc[1 + i] = es[i]
        edst[1 + i] = ed[i]
    k = 1 + E0
    for v in range(2, N):
        if not has_in[v]:
            esrc[k], edst[k] = 0, v
            k += 1
        if not has_out[v]:
            esrc[k], edst[k] = v, 1
            k += 1
    return esrc_a, edst_a, has_out_a


cdef class CycleGraph:
    """The cycle graph while it is contracted (state.pxd's State) and its buffers, allocated once: the pool
    has a fixed size, as contraction never adds edges (each insertion replaces an erased edge), so the sets
    hold at most 2E entries and a pool of 4E + 8 always has room for a set to double after packing."""

    def __cinit__(self, int64_t N, int64_t E, int64_t base):
        cdef State* S = &self.S
        cdef int64_t i
        if N + E + 2 >= 2**31 or 4 * E + 8 >= 2**31:  # (ids, ranks and pool offsets are int32)
            raise OverflowError(f"a cycle graph of {N} nodes and {E} edges is beyond the clustering kernel's "
                                "int32 ids (2^31)")
        S.N, S.base = N, base
        S.pool_len = 4 * E + 8
        S.hcap = 1024
        S.stack_len = N + E + 2
        S.pool = <int32_t*>malloc(S.pool_len * sizeof(int32_t))
        S.HK = <int64_t*>calloc(S.hcap, sizeof(int64_t))
        S.HV = <int32_t*>malloc(S.hcap * sizeof(int32_t))
        S.SM = <int32_t*>calloc(N * SMW + 1, sizeof(int32_t))
        S.rank = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.visited = <uint8_t*>calloc(N + 1, 1)
        S.parent = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.deltaf = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.deltab = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.stack = <int32_t*>malloc(2 * S.stack_len * sizeof(int32_t))
        S.path = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.rbuf = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.snap = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.sc_out = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        S.sc_in = <int32_t*>malloc((N + 1) * sizeof(int32_t))
        if (S.pool == NULL or S.HK == NULL or S.HV == NULL or S.SM == NULL or S.rank == NULL or S.visited == NULL
                or S.parent == NULL or S.deltaf == NULL or S.deltab == NULL or S.stack == NULL or S.path == NULL
                or S.rbuf == NULL or S.snap == NULL or S.sc_out == NULL or S.sc_in == NULL):
            raise MemoryError("the clustering kernel's cycle graph")
        for i in range(N):
            S.rank[i] = <int32_t>i

    def __dealloc__(self):
        cdef State* S = &self.S
        free(S.pool)
        free(S.ptmp)
        free(S.HK)
        free(S.HV)
        free(S.SM)
        free(S.rank)
        free(S.visited)
        free(S.parent)
        free(S.deltaf)
        free(S.deltab)
        free(S.stack)
        free(S.path)
        free(S.rbuf)
        free(S.snap)
        free(S.sc_out)
        free(S.sc_in)

    # ---- for the tests: the sets, ranks and hash table as plain values, and single set operations ----
    @property
    def N(self):
        return self.S.N

    @property
    def rank(self):
        return [self.S.rank[i] for i in range(self.S.N)]

    @property
    def pool_end(self):
        return self.S.pool_end

    def sets(self, int d):
        """Every node's successor (d 0) or predecessor (d 1) set, in its order."""
        cdef int32_t* row
        cdef int64_t x
        out = []
        for x in range(self.S.N):
            row = self.S.SM + x * SMW + d * IN
            out.append([self.S.pool[row[ST] + i] for i in range(row[LN])])
        return out

    def hashed(self, int d):
        cdef int64_t x
        return [bool(self.S.SM[x * SMW + d * IN + HS]) for x in range(self.S.N)]

    def hash_position(self, int64_t x, int64_t y, int d):
        """The position the hash table holds for y in x's set d (-1: none)."""
        return ht_get(self.S.HK, self.S.HV, self.S.hcap, edge_key(x, y, d, self.S.N))

    def hash_counts(self):
        """(keys the table counts, occupied slots)."""
        return self.S.ht_live, sum(1 for i in range(self.S.hcap) if self.S.HK[i] != 0)

    def insert(self, int64_t x, int64_t y, int d):
        if ht_short(&self.S, HASH_MIN + 1):
            ht_grow(&self.S, HASH_MIN + 1)
        ok = os_insert(&self.S, x, y, d)
        _check(&self.S)
        return ok

    def erase(self, int64_t x, int64_t y, int d):
        os_erase(&self.S, x, y, d)


def build(int64_t N, const int64_t[::1] esrc, const int64_t[::1] edst, int64_t ndata, int64_t base,
          bint direct=True):
    """The cycle graph as the reference leaves it after inserting every edge in order (a CycleGraph).

    The edges come as the reference inserts them: SOURCE -> SINK, `ndata` data and control edges in node
    order (so grouped by destination), then FixupSourceAndSinkEdges's edges in node-id order. With
    direct=False (tests compare the two; TF's cycle graph) or when a data edge goes backward, each edge goes
    through Pearce-Kelly as in the reference."""
    cdef int64_t E = esrc.shape[0], i, x, d, hashed = 0, room
    cdef CycleGraph G = CycleGraph(N, E, base)
    cdef State* S = &G.S
    cdef bint fwd = direct
    for i in range(1, 1 + ndata):
        if not fwd or esrc[i] >= edst[i]:
            fwd = False
            break
    if fwd:
        _fill_sets(S, esrc, edst)
        _fixup_ranks(S, esrc, edst, ndata)  # (it reads the graph inputs' successors: dropped only now)
        for x in range(N):
            for d in range(2):
                if unkept(S, x, d):
                    S.SM[x * SMW + d * IN + LN] = 0
                elif S.SM[x * SMW + d * IN + LN] > HASH_MIN:
                    hashed += S.SM[x * SMW + d * IN + LN]
        if ht_short(S, hashed):
            ht_grow(S, hashed)
        _hash_big_sets(S)
    else:
        room = 2 * (HASH_MIN + 1)  # an insertion may hash both of its sets
        for i in range(E):
            if ht_short(S, room):
                ht_grow(S, room)
            insert_edge(S, esrc[i], edst[i])
    _check(S)
    return G


cdef int _fill_sets(State* S, const int64_t[::1] esrc, const int64_t[::1] edst) except -1:
    """Successor and predecessor sets in insertion order, each node's two sets side by side in the pool
    (capacity = length): what inserting the edges one by one leaves. A repeated edge (an op reading one
    tensor twice) is dropped as os_insert would; repeats are next to each other because edges come
    grouped by destination."""
    cdef int64_t E = esrc.shape[0], N = S.N, end = 0, i, x, y, d
    keep_a = np.zeros(E, np.uint8)
    last_a = np.full(N, -1, np.int64)  # last destination seen from each source
    deg_a = np.zeros(2 * N, np.int64)
    cdef uint8_t[::1] keep = keep_a
    cdef int64_t[::1] last = last_a, deg = deg_a
    cdef int32_t* SM = S.SM
    for i in range(E):
        x, y = esrc[i], edst[i]
        if x != y and last[x] != y:
            last[x] = y
            keep[i] = 1
            deg[2 * x] += 1
            deg[2 * y + 1] += 1
    for x in range(N):
        for d in range(2):
            SM[x * SMW + d * IN + ST] = <int32_t>end
            SM[x * SMW + d * IN + CP] = <int32_t>deg[2 * x + d]
            end += deg[2 * x + d]
    S.pool_end = end
    for i in range(E):
        if keep[i]:
            x, y = esrc[i], edst[i]
            S.pool[SM[x * SMW + ST] + SM[x * SMW + LN]] = <int32_t>y
            SM[x * SMW + LN] += 1
            S.pool[SM[y * SMW + IN + ST] + SM[y * SMW + IN + LN]] = <int32_t>x
            SM[y * SMW + IN + LN] += 1
    return 0


cdef void _hash_big_sets(State* S) noexcept nogil:
    """Positions of the sets longer than HASH_MIN in the hash table, as os_insert leaves them."""
    cdef int64_t x, d, i, s
    cdef int32_t* row
    for x in range(S.N):
        for d in range(2):
            row = S.SM + x * SMW + d * IN
            if row[LN] > HASH_MIN:
                row[HS] = 1
                s = row[ST]
                for i in range(row[LN]):
                    S.ht_live += 1
                    _ht_place(S.HK, S.HV, S.hcap, edge_key(x, S.pool[s + i], d, S.N), i)


cdef int _fixup_ranks(State* S, const int64_t[::1] esrc, const int64_t[::1] edst, int64_t ndata) except -1:
    """The ranks Pearce-Kelly leaves after the fixup edges, when all data edges go forward in id order.

    Ranks start as ids; data edges and SOURCE -> v never contradict them. Each v -> SINK (ascending v)
    does: SINK's rank is the previous such v' (1 at first), the backward search from v collects the
    ancestors of v ranked above v' -- exactly v's ancestors with ids in (v', v], still ranked by id --
    and the re-ranking shifts each of them down to the previous one's rank (the first takes v'), SINK
    taking v. One sweep down finds those ancestors for every window, one sweep up shifts the ranks."""
    cdef int64_t N = S.N, i, w, nxt = -1, k, u, s, cur
    is_sink_a = np.zeros(N, np.uint8)
    reach_a = np.zeros(N, np.uint8)  # reaches the first sink at or above it without leaving its window
    cdef uint8_t[::1] is_sink = is_sink_a, reach = reach_a
    cdef int32_t* rank = S.rank
    for i in range(1 + ndata, esrc.shape[0]):
        if edst[i] == 1:
            is_sink[esrc[i]] = 1
    for w in range(N - 1, 1, -1):
        if is_sink[w]:
            nxt = w
            reach[w] = 1
            continue
        if nxt < 0:
            continue
        s = S.SM[w * SMW + ST]
        for k in range(S.SM[w * SMW + LN]):
            u = S.pool[s + k]
            if u <= nxt and reach[u]:
                reach[w] = 1
                break
    cur = rank[1]
    for w in range(2, N):
        if reach[w]:
            rank[w] = <int32_t>cur
            cur = w
    rank[1] = <int32_t>cur
    return 0


cdef int _check(State* S) except -1:
    """Raise what went wrong inside the kernel (state.pxd's E_*): a bug, or no memory."""
    if S.err == 0:
        return 0
    if S.err == 3:
        raise MemoryError("the clustering kernel's hash table")
    raise RuntimeError(f"the clustering kernel overflowed a buffer (error {S.err}: a bug in xcviz)")


def check(CycleGraph G):
    _check(&G.S)


cdef class HashTable:
    """The kernel's hash table on its own, for the tests (a fixed power-of-two capacity)."""

    cdef int64_t* HK
    cdef int32_t* HV
    cdef int64_t cap
    cdef readonly int64_t live

    def __cinit__(self, int64_t cap):
        self.cap = cap
        self.HK = <int64_t*>calloc(cap, sizeof(int64_t))
        self.HV = <int32_t*>malloc(cap * sizeof(int32_t))
        if self.HK == NULL or self.HV == NULL:
            raise MemoryError()

    def __dealloc__(self):
        free(self.HK)
        free(self.HV)

    def get(self, int64_t key):
        return ht_get(self.HK, self.HV, self.cap, key)

    def put(self, int64_t key, int64_t val):
        self.live += 1
        _ht_place(self.HK, self.HV, self.cap, key, val)

    def set(self, int64_t key, int64_t val):
        ht_set(self.HK, self.HV, self.cap, key, val)

    def pop(self, int64_t key):
        self.live -= 1
        return ht_pop(self.HK, self.HV, self.cap, key)

    def occupied(self):
        return sum(1 for i in range(self.cap) if self.HK[i] != 0)
