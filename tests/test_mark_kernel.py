"""The fast `mark` kernel's pieces (xcviz/clustering/_kernel/) against plain models.

test_mark_matches_reference.py compares whole passes with the reference; these pin what it rarely reaches at
test sizes: the directly written cycle graph (sets and Pearce-Kelly ranks) against inserting every edge,
the hash table's deletion by shifting back, the pool's compaction, and node lists that are not in
topological order (which take the edge-by-edge build).
"""
from __future__ import annotations

import random

import pytest

pytest.importorskip("numba")
import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from xcviz.clustering import ClusterOptions, find_candidates  # noqa: E402
from xcviz.clustering import _kernel as K  # noqa: E402
from xcviz.clustering._kernel import sets as KS  # noqa: E402
from xcviz.clustering._kernel.state import HS, IN, LN, M_HT_LIVE, M_POOL_END, ST  # noqa: E402
from xcviz.clustering import mark_fast, mark_reference  # noqa: E402

from strategies import dags  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def sets_of(S, d):
    pool, SM = S.pool, S.SM
    return [pool[SM[x, d * IN + ST]:SM[x, d * IN + ST] + SM[x, d * IN + LN]].tolist() for x in range(S.N)]


def check_hashed(S):
    """Every hashed set's positions are in the hash table, and it holds nothing else."""
    pool, HK, HV, meta, SM, N = S.pool, S.HK, S.HV, S.meta, S.SM, S.N
    live = 0
    for d in (0, 1):
        for x in np.flatnonzero(SM[:, d * IN + HS]).tolist():
            s, n = SM[x, d * IN + ST], SM[x, d * IN + LN]
            for i, y in enumerate(pool[s:s + n].tolist()):
                assert KS.ht_get(HK, HV, KS.edge_key(x, y, d, N)) == i
            live += n
    assert live == meta[M_HT_LIVE] == np.count_nonzero(HK)


@st.composite
def edge_lists(draw):
    """Data edges grouped by destination, sources before it (repeats, graph inputs, wide fan-in/out)."""
    n_in = draw(st.integers(0, 3))
    n = draw(st.integers(1, 60))
    base = 2 + n_in
    es, ed = [], []
    hub = base + draw(st.integers(0, n - 1))  # a node many later nodes read (a set past HASH_MIN)
    for j in range(n):
        v = base + j
        k = draw(st.sampled_from([0, 1, 2, 3, 20]))
        srcs = list(range(2, v))
        for _ in range(k if srcs else 0):
            es.append(hub if hub < v and draw(st.booleans()) else draw(st.sampled_from(srcs)))
            ed.append(v)
    return base + n, np.array(es, np.int64), np.array(ed, np.int64), base


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_lists())
def test_direct_build_is_edge_by_edge_insertion(graph):
    N, es, ed, base = graph
    esrc, edst, _ = K.cycle_edges(es, ed, N)
    direct = K.build(N, esrc, edst, len(es), base)
    inserted = K.build(N, esrc, edst, len(es), base, False)
    assert direct.rank.tolist() == inserted.rank.tolist()
    for d in (0, 1):
        assert sets_of(direct, d) == sets_of(inserted, d)
        assert (direct.SM[:, d * IN + HS] == inserted.SM[:, d * IN + HS]).all()
    check_hashed(direct)
    check_hashed(inserted)
    # every edge is in its destination's predecessors, and in its source's successors unless that set is one
    # the pass does not keep (SOURCE's and the graph inputs' successors, SINK's predecessors)
    outs, ins = sets_of(direct, 0), sets_of(direct, 1)
    assert all(not outs[x] for x in range(base)) and not ins[1]
    edges = set(zip(esrc.tolist(), edst.tolist()))
    assert {(x, y) for y in range(N) for x in ins[y]} == {(x, y) for x, y in edges if y != 1 and x != y}
    assert {(x, y) for x in range(N) for y in outs[x]} == {(x, y) for x, y in edges if x >= base and x != y}


def test_hash_table_against_a_dict():
    rng = random.Random(5)
    HK, HV, meta = np.zeros(64, np.int64), np.empty(64, np.int64), np.zeros(16, np.int64)
    model: dict[int, int] = {}
    for step in range(20000):
        key = rng.randrange(1, 200)  # few keys, small table: long probe runs that wrap around
        if key in model and rng.random() < 0.5:
            assert KS.ht_pop(HK, HV, meta, key) == model.pop(key)
        elif key not in model and len(model) < 32:
            KS.ht_put(HK, HV, meta, key, step)
            model[key] = step
        elif key in model:
            KS.ht_set(HK, HV, key, -step)
            model[key] = -step
        assert KS.ht_get(HK, HV, key) == model.get(key, -1)
        assert meta[M_HT_LIVE] == len(model) == np.count_nonzero(HK)
    for key in range(1, 200):
        assert KS.ht_get(HK, HV, key) == model.get(key, -1)


def test_pool_compaction_keeps_every_set():
    """Sets that keep growing and shrinking run the pool out of free space; the pool is packed then."""
    rng = random.Random(7)
    N, E = 40, 60
    es = np.array([rng.randrange(2, 20) for _ in range(E)], np.int64)
    ed = np.array([rng.randrange(20, N) for _ in range(E)], np.int64)
    order = np.argsort(ed, kind="stable")
    esrc, edst, _ = K.cycle_edges(es[order], ed[order], N)
    S = K.build(N, esrc, edst, len(es), 0)  # (base 0: a bare table that keeps every set)
    pool, ptmp, HK, HV, meta, SM = S.pool, S.ptmp, S.HK, S.HV, S.meta, S.SM
    model = [sets_of(S, 0), sets_of(S, 1)]
    limit = sum(map(len, model[0])) + sum(map(len, model[1]))  # live entries never exceed the build's
    compactions, last_end = 0, meta[M_POOL_END]
    for _ in range(20000):
        x, y, d = rng.randrange(N), rng.randrange(N), rng.randrange(2)
        if x == y:
            continue
        seq = model[d][x]
        if y in seq:
            KS.os_erase(pool, HK, HV, meta, SM, x, y, d, N)
            i = seq.index(y)
            last = seq.pop()
            if last != y:
                seq[i] = last
        elif sum(map(len, model[0])) + sum(map(len, model[1])) < limit:
            if KS.ht_short(S, KS.HASH_MIN + 1):
                S = KS.ht_grow(S, KS.HASH_MIN + 1)
                HK, HV = S.HK, S.HV
            assert KS.os_insert(pool, ptmp, HK, HV, meta, SM, x, y, d, N)
            seq.append(y)
        compactions += meta[M_POOL_END] < last_end
        last_end = meta[M_POOL_END]
    assert compactions > 0
    assert [sets_of(S, 0), sets_of(S, 1)] == model
    check_hashed(S)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(nodes=(2, 30), shuffle=True), st.sampled_from([None, 1]))
def test_unordered_node_list_matches_reference(graph, min_size):
    opts = ClusterOptions(min_cluster_size=min_size)
    cands = find_candidates(graph, opts)
    ref = mark_reference.mark_for_compilation(graph, cands, opts)
    fast = mark_fast.mark_for_compilation(graph, cands, opts)
    assert fast.clusters == ref.clusters and fast.groups == ref.groups
    assert fast.code == ref.code and fast.reason == ref.reason
    assert list(fast.attempts) == list(ref.attempts)
