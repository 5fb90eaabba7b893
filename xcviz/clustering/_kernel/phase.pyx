# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The pass: one phase of for_each_edge, each edge contraction with its refusal checks; run_pass, the whole pass.

Every step mirrors mark_reference.py (the executable spec): the equivalence tests hold them together."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport free, malloc

import numpy as np

from xcviz.clustering._kernel.cycle_graph cimport CycleGraph
from xcviz.clustering._kernel.order cimport insert_edge, reachable
from xcviz.clustering._kernel.sets cimport edge_key, ht_grow, ht_pop, ht_short, os_erase, os_insert
from xcviz.clustering._kernel.state cimport (A_CODE, A_COLS, A_DST, A_MERGED, A_PHASE, A_PL, A_PS, A_SRC, A_X1,
                                             A_X2, C_CROSS, C_CYCLE, C_DEADNESS, C_DEVICE, C_MAXSIZE, C_NONE,
                                             C_RESOURCE, C_SCOPE, CP, E_MEMORY, HS, IN, LN, SMW, ST, State)

from xcviz.clustering._kernel.cycle_graph import build, check

# the refusal codes of the attempt table's A_CODE column (state.pxd's C_*), as the reference names them
REFUSALS = (None, "device", "scope", "max-size", "cross-device", "cycle", "deadness", "resource")
ATTEMPT_COLUMNS = A_COLS


ctypedef struct Clusters:
    # Per node of the cycle graph (graph nodes from `base` to `end`): candidacy and the clusters merged so far.
    int64_t base          # id of the first graph node
    int64_t end           # base + n; ids from here on (TF's frame nodes) are never candidates
    uint8_t* ok           # per graph node: a compilation candidate
    uint8_t* alive        # not yet merged into another node
    int32_t* parent_uf    # union-find parent: the cluster a node was merged into
    int32_t* size         # nodes in the cluster
    int32_t* eff          # effective size (zero-size ops do not count)
    uint8_t* forced       # holds a node that keeps its cluster whatever its size
    int32_t* device       # device code
    uint8_t* xdev         # the cluster has a candidate predecessor on another device (see mark_reference.py's
                          # xdev: it spares the scan of a growing cluster's inputs)
    int32_t* scope        # XLA scope code, -1 for none
    int32_t* groups       # per graph node: 1 lone shape consumer, 2 lone no-op, else 0
    uint8_t* sc_succ      # a successor is a candidate lone shape consumer (groups 1); phase 0 looks only at
                          # those nodes' edges while they are alone
    int64_t max_size      # max cluster size (2^62 for none)
    bint record           # keep a row per attempt
    # TensorFlow's rules (tf_rules.py; NULL for other graphs)
    int32_t* dead         # per graph node: its deadness predicate, as a code
    uint8_t* no_from      # per graph node: not merged from in phase 1 while alone
    int32_t* res_head     # per cycle-graph node: the cluster's first resource operation (graph position), -1
    int32_t* res_next     # per graph node: the next resource operation of its cluster, -1
    const int64_t* unsafe  # sorted a * n + b: resource operations a, b that must not share a cluster
    int64_t n_unsafe


cdef inline int64_t _find(int32_t* parent_uf, int64_t v) noexcept nogil:
    cdef int64_t root = v, nxt
    while parent_uf[root] != root:
        root = parent_uf[root]
    while parent_uf[v] != root:
        nxt = parent_uf[v]
        parent_uf[v] = <int32_t>root
        v = nxt
    return root


cdef inline int64_t _cluster(Clusters* C, int64_t v) noexcept nogil:
    if v < C.base or v >= C.end or not C.ok[v - C.base]:
        return -1
    return _find(C.parent_uf, v)


cdef inline void _add_edge(State* S, int64_t x, int64_t y) noexcept nogil:
    # insert_edge, its common case (no re-ordering: x already ranks below y) inline rather than a call
    if S.rank[x] <= S.rank[y] and x != y:
        if os_insert(S, x, y, 0):
            os_insert(S, y, x, 1)
    else:
        insert_edge(S, x, y)


cdef inline bint _may_reach(State* S, int64_t a, int64_t b) noexcept nogil:
    # False when no path a -> ... -> b can exist: a is ranked above b, or every predecessor of b is ranked at
    # or below a (a path's last step comes from a node ranked between them). Spares most contractions the
    # forward search.
    cdef int64_t ra = S.rank[a], k
    if ra >= S.rank[b]:
        return False
    cdef int32_t* s = S.pool + S.SM[b * SMW + IN + ST]
    for k in range(S.SM[b * SMW + IN + LN]):
        if S.rank[s[k]] > ra:
            return True
    return False


cdef int64_t _contract(State* S, int64_t a, int64_t b, uint8_t* alive) noexcept nogil:
    # merge along a -> b: the survivor, or -1 (the blocking path in S.path)
    cdef int64_t n_out, n_in, k, t, N = S.N
    cdef int32_t* s
    os_erase(S, a, b, 0)
    os_erase(S, b, a, 1)
    if _may_reach(S, a, b) and reachable(S, a, b):
        insert_edge(S, a, b)
        return -1
    if S.SM[b * SMW + IN + LN] + S.SM[b * SMW + LN] > S.SM[a * SMW + IN + LN] + S.SM[a * SMW + LN]:
        t = a
        a = b
        b = t
    cdef int32_t* row = S.SM + b * SMW
    # copies of b's sets (the pool changes below)
    n_out, n_in = row[LN], row[IN + LN]
    s = S.pool + row[ST]
    for k in range(n_out):
        S.sc_out[k] = s[k]
    s = S.pool + row[IN + ST]
    for k in range(n_in):
        S.sc_in[k] = s[k]
    if row[HS]:
        for k in range(n_out):
            ht_pop(S.HK, S.HV, S.hcap, edge_key(b, S.sc_out[k], 0, N))
        S.ht_live -= n_out
        row[HS] = 0
    if row[IN + HS]:
        for k in range(n_in):
            ht_pop(S.HK, S.HV, S.hcap, edge_key(b, S.sc_in[k], 1, N))
        S.ht_live -= n_in
        row[IN + HS] = 0
    row[LN] = 0
    row[IN + LN] = 0
    row[CP] = 0
    row[IN + CP] = 0
    for k in range(n_out):
        os_erase(S, S.sc_out[k], b, 1)
    for k in range(n_in):
        os_erase(S, S.sc_in[k], b, 0)
    alive[b] = 0
    for k in range(n_out):
        _add_edge(S, a, S.sc_out[k])
    for k in range(n_in):
        _add_edge(S, S.sc_in[k], a)
    return a


cdef inline bint _unsafe(Clusters* C, int64_t key) noexcept nogil:
    cdef int64_t lo = 0, hi = C.n_unsafe, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if C.unsafe[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < C.n_unsafe and C.unsafe[lo] == key


cdef bint _breaks_resources(Clusters* C, int64_t frm, int64_t to) noexcept nogil:
    # a resource operation of frm's cluster and one of to's that XLA could not keep in order in one cluster
    cdef int64_t a = C.res_head[frm], b, n = C.end - C.base
    while a >= 0:
        b = C.res_head[to]
        while b >= 0:
            if _unsafe(C, a * n + b):
                return True
            b = C.res_next[b]
        a = C.res_next[a]
    return False


cdef int64_t _try_contract(State* S, Clusters* C, int64_t frm, int64_t to) noexcept nogil:
    # C_NONE when merged; otherwise the refusal's code, its details in S.x1, S.x2 and, for a cycle, the
    # blocking path in S.path
    cdef int32_t* device = C.device
    cdef int32_t* scope = C.scope
    cdef int32_t* size = C.size
    cdef int64_t k, p, cin, other, survivor, base = C.base, tail
    cdef int32_t* s
    S.x1 = 0
    S.x2 = 0
    if C.dead != NULL and C.dead[frm - base] != C.dead[to - base]:
        S.x1, S.x2 = frm - base, to - base
        return C_DEADNESS
    if device[frm] != device[to]:
        S.x1, S.x2 = device[frm], device[to]
        return C_DEVICE
    if scope[frm] >= 0 and scope[to] >= 0 and scope[frm] != scope[to]:
        S.x1, S.x2 = scope[frm], scope[to]
        return C_SCOPE
    if size[frm] + size[to] > C.max_size:
        S.x1 = size[frm] + size[to]
        return C_MAXSIZE
    if C.xdev[to]:  # without it the scan finds nothing (devices never mix in a cluster)
        s = S.pool + S.SM[to * SMW + IN + ST]
        for k in range(S.SM[to * SMW + IN + LN]):
            p = s[k]
            cin = _cluster(C, p)
            if cin >= 0 and (device[cin] != device[to] or device[cin] != device[frm]):
                S.x1 = p - base
                return C_CROSS
    if C.res_head != NULL and (C.res_head[frm] >= 0 or C.res_head[to] >= 0) and _breaks_resources(C, frm, to):
        return C_RESOURCE
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
    C.parent_uf[other] = <int32_t>survivor
    if C.res_head != NULL and (C.res_head[frm] >= 0 or C.res_head[to] >= 0):
        # the survivor holds frm's resource operations, then to's
        k = C.res_head[frm]
        if k < 0:
            k = C.res_head[to]
        else:
            tail = k
            while C.res_next[tail] >= 0:
                tail = C.res_next[tail]
            C.res_next[tail] = C.res_head[to]
        C.res_head[other] = -1
        C.res_head[survivor] = <int32_t>k
    return C_NONE


cdef class _Pass:
    """One run of the pass: the cycle graph, the clusters and the attempt log (grown as needed)."""

    cdef CycleGraph G
    cdef Clusters C
    cdef object A, P, keep      # the attempt table, the path pool, the arrays C points into
    cdef int32_t* Ap
    cdef int32_t* Pp
    cdef int64_t n_att, n_path, cap_att, cap_path

    cdef int _grow_attempts(self) except -1:
        self.cap_att = self.cap_att + self.cap_att // 2 + 16
        A = np.empty((self.cap_att, A_COLS), np.int32)
        A[:self.n_att] = self.A[:self.n_att]
        self.A = A
        cdef int32_t[:, ::1] v = A
        self.Ap = &v[0, 0]
        return 0

    cdef int _grow_paths(self, int64_t need) except -1:
        self.cap_path = max(2 * self.cap_path, need)
        P = np.empty(self.cap_path, np.int32)
        P[:self.n_path] = self.P[:self.n_path]
        self.P = P
        cdef int32_t[::1] v = P
        self.Pp = &v[0]
        return 0

    cdef int run_phase(self, int64_t phase, int64_t mode) except -1:
        """One pass of for_each_edge (recorded as `phase`); mode 0: the target must be a lone shape consumer,
        1: not a lone no-op, 2: any. Sets self.changed when a contraction merged."""
        cdef State* S = &self.G.S
        cdef Clusters* C = &self.C
        cdef int64_t N = S.N, base = C.base, v, r, frm, to, w, k, n_outs, lone, room, code, plen, m, c, i, p
        cdef int32_t* row
        cdef int32_t* at
        cdef bint go, changed = False
        cdef int32_t* at_rank = <int32_t*>malloc(N * sizeof(int32_t))
        if at_rank == NULL:
            raise MemoryError()
        for v in range(N):
            at_rank[v] = -1
        for v in range(N):
            if C.alive[v]:
                at_rank[S.rank[v]] = <int32_t>v
        for r in range(N - 1, -1, -1):
            v = at_rank[r]
            if v < 0:
                continue
            frm = _cluster(C, v)
            if frm < 0:
                continue
            if mode == 0 and C.size[frm] == 1 and not C.sc_succ[frm]:
                continue  # a lone node has a lone shape consumer as successor only by an edge it had from the start
            # snapshot of frm's successors, as the reference's list(gc.out[frm])
            n_outs = S.SM[frm * SMW + LN]
            at = S.pool + S.SM[frm * SMW + ST]
            for k in range(n_outs):
                S.snap[k] = at[k]
            for k in range(n_outs):
                w = S.snap[k]
                to = _cluster(C, w)
                frm = _cluster(C, v)
                if to < 0 or to == frm:
                    continue
                lone = C.groups[to - base] if C.size[to] == 1 else 0
                if mode == 0:
                    go = lone == 1
                elif mode == 1:
                    go = lone != 2 and not (C.no_from != NULL and C.size[frm] == 1 and C.no_from[frm - base])
                else:
                    go = True
                if not go:
                    continue
                # a merge hashes at most the two clusters' entries (see ht_grow)
                room = (S.SM[frm * SMW + LN] + S.SM[frm * SMW + IN + LN] + S.SM[to * SMW + LN]
                        + S.SM[to * SMW + IN + LN])
                if ht_short(S, room) and ht_grow(S, room) < 0:
                    free(at_rank)
                    check(self.G)
                code = _try_contract(S, C, frm, to)
                if code == C_NONE:
                    changed = True
                if not C.record or (code != C_NONE and phase < 0):
                    continue
                if self.n_att == self.cap_att:
                    self._grow_attempts()
                row = self.Ap + self.n_att * A_COLS
                row[A_PHASE] = <int32_t>phase
                row[A_SRC] = <int32_t>(frm - base)
                row[A_DST] = <int32_t>(to - base)
                row[A_MERGED] = code == C_NONE
                row[A_CODE] = <int32_t>code
                row[A_X1] = <int32_t>S.x1
                row[A_X2] = <int32_t>S.x2
                row[A_PS] = 0
                row[A_PL] = 0
                if code == C_CYCLE:
                    plen = S.pathlen - 1  # the path after frm, graph nodes only
                    m = self.n_path
                    if m + plen > self.cap_path:
                        self._grow_paths(m + plen)
                    c = 0
                    for i in range(1, plen + 1):
                        p = S.path[i]
                        if base <= p < C.end:
                            self.Pp[m + c] = <int32_t>(p - base)
                            c += 1
                    if plen > 0:
                        row[A_PS] = <int32_t>m
                        row[A_PL] = <int32_t>c
                    self.n_path = m + c
                self.n_att += 1
        free(at_rank)
        check(self.G)
        return changed


def run_pass(CycleGraph G, const uint8_t[::1] has_out, const uint8_t[::1] ok, int64_t base, int32_t[::1] device,
             int32_t[::1] scope, int32_t[::1] eff, uint8_t[::1] forced, int32_t[::1] groups, int64_t max_size,
             bint record, int64_t attempts_hint, tf=None):
    """The whole pass on the cycle graph G (cycle_graph.build; has_out: whether each node has a successor
    among the graph's edges): the per-node flags that read the edges, phases 0-2, the idempotence check;
    returns whether that check changed anything (a bug), the attempt table (rows of A_COLS int32) and path
    pool, and the final groups (see final_groups). device, scope, eff and forced (per cycle-graph node) are
    updated as clusters merge; ok and groups are per graph node. tf: TensorFlow's rules as arrays
    (deadness codes, phase-1 exclusions, resource flags, sorted unsafe pair keys a * n + b)."""
    cdef int64_t N = G.S.N, n = ok.shape[0], i
    cdef _Pass R = _Pass()
    cdef Clusters* C = &R.C
    alive, parent_uf, size = np.ones(N, np.uint8), np.arange(N, dtype=np.int32), np.ones(N, np.int32)
    xdev, sc_succ = np.zeros(N, np.uint8), np.zeros(N, np.uint8)
    R.keep = [alive, parent_uf, size, xdev, sc_succ]
    C.base, C.end, C.max_size, C.record = base, base + n, max_size, record
    C.ok, C.alive, C.parent_uf, C.size = _u8(ok), _u8(alive), _i32(parent_uf), _i32(size)
    C.eff, C.forced, C.device, C.xdev = _i32(eff), _u8(forced), _i32(device), _u8(xdev)
    C.scope, C.groups, C.sc_succ = _i32(scope), _i32(groups), _u8(sc_succ)
    C.dead = C.no_from = C.res_head = C.res_next = NULL
    C.unsafe, C.n_unsafe = NULL, 0
    if tf is not None:
        dead, no_from, res, unsafe = tf
        res_head = np.full(N, -1, np.int32)
        flagged = np.flatnonzero(np.asarray(res, np.bool_))
        res_head[base + flagged] = flagged
        res_next = np.full(max(n, 1), -1, np.int32)
        dead, no_from = np.ascontiguousarray(dead, np.int32), np.ascontiguousarray(no_from, np.uint8)
        unsafe = np.ascontiguousarray(unsafe, np.int64)
        R.keep += [dead, no_from, res_head, res_next, unsafe]
        C.dead, C.no_from, C.res_head, C.res_next = _i32(dead), _u8(no_from), _i32(res_head), _i32(res_next)
        C.unsafe, C.n_unsafe = _ci64(unsafe), len(unsafe)
    _edge_flags(G, C, has_out)
    R.G = G
    R.cap_att, R.cap_path = max(16, attempts_hint), 1024
    R.A, R.P = np.empty((R.cap_att, A_COLS), np.int32), np.empty(R.cap_path, np.int32)
    cdef int32_t[:, ::1] av = R.A
    cdef int32_t[::1] pv = R.P
    R.Ap, R.Pp = &av[0, 0], &pv[0]
    for i in range(3):
        R.run_phase(i, i)
    changed = R.run_phase(-1, 2)
    grouped, sizes, g_root = final_groups(parent_uf, ok, base)
    return bool(changed), R.A[:R.n_att], R.P[:R.n_path], grouped, sizes, g_root


cdef void _edge_flags(CycleGraph G, Clusters* C, const uint8_t[::1] has_out) noexcept:
    """The per-node flags that read the edges: C.groups loses its 2 (a lone no-op) where the node has a
    successor; C.xdev, the candidates with a candidate predecessor on another device (mark_reference.py's
    xdev); C.sc_succ, the nodes with a candidate lone shape consumer (groups 1) as successor. The edges are
    the cycle graph's predecessor sets (kept for every node but SINK, which is no candidate)."""
    cdef State* S = &G.S
    cdef int64_t base = C.base, j, y, x, k
    cdef int32_t* s
    for j in range(C.end - base):
        if C.groups[j] == 2 and has_out[base + j]:
            C.groups[j] = 0
    for y in range(base, C.end):
        if not C.ok[y - base]:
            continue
        s = S.pool + S.SM[y * SMW + IN + ST]
        for k in range(S.SM[y * SMW + IN + LN]):
            x = s[k]
            if C.groups[y - base] == 1:
                C.sc_succ[x] = 1
            if base <= x < C.end and C.ok[x - base] and C.device[x] != C.device[y]:
                C.xdev[y] = 1


def final_groups(const int32_t[::1] parent_uf_in, const uint8_t[::1] ok, int64_t base):
    """The candidates' groups in order of their first member, members ascending: every group's members back
    to back, each group's size and its root (the node that holds its size and flags)."""
    cdef int64_t n = ok.shape[0], G = 0, j, r, g, total = 0
    gid_a, of_a = np.full(n, -1, np.int64), np.full(n, -1, np.int64)
    sizes_a, g_root_a = np.zeros(n, np.int64), np.empty(n, np.int64)
    cdef int64_t[::1] gid = gid_a, of = of_a, sizes = sizes_a, g_root = g_root_a
    cdef int32_t* parent_uf = <int32_t*>&parent_uf_in[0]  # (path compression only: the same roots)
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
    at_a = np.empty(G, np.int64)
    cdef int64_t[::1] at = at_a
    for g in range(G):
        at[g] = total
        total += sizes[g]
    grouped_a = np.empty(total, np.int64)
    cdef int64_t[::1] grouped = grouped_a
    for j in range(n):
        g = of[j]
        if g >= 0:
            grouped[at[g]] = j
            at[g] += 1
    return grouped_a, sizes_a[:G], g_root_a[:G]


# pointers into arrays the pass keeps alive (a zero-length array gives a pointer never read)
cdef uint8_t _empty_u8[1]
cdef int32_t _empty_i32[1]
cdef int64_t _empty_i64[1]


cdef uint8_t* _u8(const uint8_t[::1] a):
    return <uint8_t*>&a[0] if a.shape[0] else _empty_u8


cdef int32_t* _i32(const int32_t[::1] a):
    return <int32_t*>&a[0] if a.shape[0] else _empty_i32


cdef const int64_t* _ci64(const int64_t[::1] a):
    return &a[0] if a.shape[0] else _empty_i64
