"""Invariants of `mark` on random DAGs (hypothesis): acyclic contraction, candidates only, metrics sane."""
import pytest
import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import finalized_dags as dags
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, load_hardware
from xcviz.ir import parse_ref

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _edges(g):
    for j, node in enumerate(g.nodes):
        for ref in (*node.inputs, *node.control_inputs):
            if ref and ref in g.index or (ref and parse_ref(ref)[0] in g.index):
                yield g.index[parse_ref(ref)[0]], j


@settings(max_examples=150, deadline=None)
@given(dags(), st.integers(0, 4), st.sampled_from([None, 2, 5]))
def test_mark_invariants(g, min_size, max_size):
    c = run_clustering(g, ClusterOptions(min_cluster_size=min_size, max_cluster_size=max_size))
    # every clustered node is a candidate; never across devices or scopes; size limits hold
    for k, members in enumerate(c.clusters):
        assert all(c.candidate[v] for v in members)
        assert len({c.device[v] for v in members}) == 1
        assert len({g.nodes[v].scope for v in members} - {None}) <= 1
        if max_size is not None:
            assert len(members) <= max_size
    # contracting every kept cluster leaves the graph acyclic
    q = nx.DiGraph()
    label = lambda v: ("c", c.cluster_of[v]) if c.cluster_of[v] >= 0 else ("n", v)  # noqa: E731
    q.add_nodes_from(label(v) for v in range(len(g.nodes)))
    for u, v in _edges(g):
        if label(u) != label(v):
            q.add_edge(label(u), label(v))
    assert nx.is_directed_acyclic_graph(q)
    # metrics
    s = compute_stats(g, c, load_hardware("cpu"))
    assert 0.0 <= s.coverage <= 1.0
    assert s.clustered_nodes == sum(len(m) for m in c.clusters)
    expected = 0
    for j, node in enumerate(g.nodes):
        for ref in node.inputs:
            src = g.index.get(parse_ref(ref)[0], None) if ref else None
            cs = c.cluster_of[src] if src is not None else -1
            if ref and cs != c.cluster_of[j] and (cs >= 0 or c.cluster_of[j] >= 0):
                expected += g.tensor_type(ref).nbytes()
    for ref in g.outputs:
        src = g.index.get(parse_ref(ref)[0])
        if src is not None and c.cluster_of[src] >= 0:
            expected += g.tensor_type(ref).nbytes()
    assert s.boundary_bytes == expected
    # XLA's kernels per cluster (cost.fusion), each cluster at least one unless it is only bitcasts
    assert s.kernel_launches_after == sum(d.kernels for d in s.clusters_detail) + s.fallback_nodes
    assert all(0 <= d.kernels <= 2 * len(d.nodes) for d in s.clusters_detail)


@settings(max_examples=60, deadline=None)
@given(dags())
def test_mark_is_deterministic_and_greedy_covers_candidates(g):
    a = run_clustering(g, ClusterOptions(min_cluster_size=1))
    b = run_clustering(g, ClusterOptions(min_cluster_size=1))
    assert a.clusters == b.clusters and a.attempts == b.attempts
    gr = run_clustering(g, ClusterOptions(strategy="greedy"))
    assert sorted(v for m in gr.clusters for v in m) == [v for v in range(len(g.nodes)) if gr.candidate[v]]
