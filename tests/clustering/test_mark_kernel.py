"""The compiled `mark` kernel's pieces (xcviz/clustering/_kernel/, Cython) against plain models.

test_mark_matches_reference.py compares whole passes with the reference; these pin what it rarely reaches at
test sizes: the directly written cycle graph (sets and Pearce-Kelly ranks) against inserting every edge,
the hash table's deletion by shifting back, the pool's compaction, and node lists that are not in
topological order (which take the edge-by-edge build).
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xcviz.clustering import ClusterOptions, find_candidates
from xcviz.clustering import _kernel as K
from xcviz.clustering import mark, mark_reference

from tests.support.strategies import dags

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)
HASH_MIN = 16  # (state.pxd: a set longer than this has its positions in the hash table)


def check_hashed(G):
    """Every hashed set's positions are in the hash table, and it holds nothing else."""
    live = 0
    for d in (0, 1):
        for x, (hashed, seq) in enumerate(zip(G.hashed(d), G.sets(d))):
            assert hashed or len(seq) <= HASH_MIN  # (a set stays hashed once it grew past HASH_MIN)
            if hashed:
                for i, y in enumerate(seq):
                    assert G.hash_position(x, y, d) == i
                live += len(seq)
    assert G.hash_counts() == (live, live)


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
    assert direct.rank == inserted.rank
    for d in (0, 1):
        assert direct.sets(d) == inserted.sets(d)
        assert direct.hashed(d) == inserted.hashed(d)
    check_hashed(direct)
    check_hashed(inserted)
    # every edge is in its destination's predecessors, and in its source's successors unless that set is one
    # the pass does not keep (SOURCE's and the graph inputs' successors, SINK's predecessors)
    outs, ins = direct.sets(0), direct.sets(1)
    assert all(not outs[x] for x in range(base)) and not ins[1]
    edges = set(zip(esrc.tolist(), edst.tolist()))
    assert {(x, y) for y in range(N) for x in ins[y]} == {(x, y) for x, y in edges if y != 1 and x != y}
    assert {(x, y) for x in range(N) for y in outs[x]} == {(x, y) for x, y in edges if x >= base and x != y}


def test_hash_table_against_a_dict():
    rng = random.Random(5)
    table = K.HashTable(64)
    model: dict[int, int] = {}
    for step in range(20000):
        key = rng.randrange(1, 200)  # few keys, small table: long probe runs that wrap around
        if key in model and rng.random() < 0.5:
            assert table.pop(key) == model.pop(key)
        elif key not in model and len(model) < 32:
            table.put(key, step)
            model[key] = step
        elif key in model:
            table.set(key, -step)
            model[key] = -step
        assert table.get(key) == model.get(key, -1)
        assert table.live == len(model) == table.occupied()
    for key in range(1, 200):
        assert table.get(key) == model.get(key, -1)


def test_pool_compaction_keeps_every_set():
    """Sets that keep growing and shrinking run the pool out of free space; the pool is packed then."""
    rng = random.Random(7)
    N, E = 40, 60
    es = np.array([rng.randrange(2, 20) for _ in range(E)], np.int64)
    ed = np.array([rng.randrange(20, N) for _ in range(E)], np.int64)
    order = np.argsort(ed, kind="stable")
    esrc, edst, _ = K.cycle_edges(es[order], ed[order], N)
    G = K.build(N, esrc, edst, len(es), 0)  # (base 0: a bare table that keeps every set)
    model = [G.sets(0), G.sets(1)]
    limit = sum(map(len, model[0])) + sum(map(len, model[1]))  # live entries never exceed the build's
    compactions, last_end = 0, G.pool_end
    for _ in range(20000):
        x, y, d = rng.randrange(N), rng.randrange(N), rng.randrange(2)
        if x == y:
            continue
        seq = model[d][x]
        if y in seq:
            G.erase(x, y, d)
            i = seq.index(y)
            last = seq.pop()
            if last != y:
                seq[i] = last
        elif sum(map(len, model[0])) + sum(map(len, model[1])) < limit:
            assert G.insert(x, y, d)
            seq.append(y)
        compactions += G.pool_end < last_end
        last_end = G.pool_end
    assert compactions > 0
    assert [G.sets(0), G.sets(1)] == model
    check_hashed(G)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(nodes=(2, 30), shuffle=True), st.sampled_from([None, 1]))
def test_unordered_node_list_matches_reference(graph, min_size):
    opts = ClusterOptions(min_cluster_size=min_size)
    cands = find_candidates(graph, opts)
    ref = mark_reference.mark_for_compilation(graph, cands, opts)
    got = mark.mark_for_compilation(graph, cands, opts)
    assert got.clusters == ref.clusters and got.groups == ref.groups
    assert got.code == ref.code and got.reason == ref.reason
    assert list(got.attempts) == list(ref.attempts)
