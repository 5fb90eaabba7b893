"""The fast `mark` (numba, integer ids) must give exactly what the reference pass gives.

Identical clusters, groups, per-node decisions AND attempt records (phase, sides, reason, blocking path),
on random DAGs (hypothesis) and on every graph in graphs/ and the benchmark generator's graphs.
"""
from __future__ import annotations

import glob
import os
import sys

import pytest

pytest.importorskip("numba")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import xcviz  # noqa: E402
from xcviz.clustering import ClusterOptions, find_candidates  # noqa: E402
from xcviz.clustering import mark_fast, mark_reference  # noqa: E402

from strategies import dags  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def assert_same(graph, opts: ClusterOptions) -> None:
    # the fast pass on candidates of its own: it reads their table, not the lists the reference reads
    fast = mark_fast.mark_for_compilation(graph, find_candidates(graph, opts), opts)
    ref = mark_reference.mark_for_compilation(graph, find_candidates(graph, opts), opts)
    # the arrays the cost model reads, before any list is made from them
    for got, want in zip(fast.arrays(), ref.arrays()):
        assert got.tolist() == want.tolist()
    assert fast.clusters == ref.clusters
    assert fast.groups == ref.groups
    assert fast.cluster_of == ref.cluster_of
    assert fast.code == ref.code and fast.reason == ref.reason
    assert fast.candidate == ref.candidate and fast.device == ref.device
    assert fast == ref
    assert len(fast.attempts) == len(ref.attempts)
    assert list(fast.attempts) == list(ref.attempts)
    assert fast.refused() == ref.refused()
    assert fast.refused_count() == ref.refused_count() == len(ref.refused())
    for limit in (0, 1, 3):  # (the log picks refused rows from its table)
        assert fast.refused(limit) == ref.refused(limit) == ref.refused()[:limit]
    from xcviz.clustering.explain import replay  # (the log hands `explain` its rows as integers)

    n = len(graph.nodes)
    for focus in (None, 0, n // 2, n - 1):
        assert list(replay(fast, n, focus)) == list(replay(ref, n, focus))


@pytest.mark.parametrize("path", sorted([p for p in glob.glob(os.path.join(ROOT, "graphs", "*.*")) if p.endswith((".yaml", ".yml", ".json", ".onnx"))]))
def test_example_graphs(path):
    g = xcviz.load(path, allow_unknown=True)
    for opts in (ClusterOptions(), ClusterOptions(min_cluster_size=1, max_cluster_size=2),
                 ClusterOptions(device="gpu", record=False)):
        assert_same(g, opts)


@pytest.mark.slow
@pytest.mark.parametrize("n,seed", [(300, 0), (2000, 1), (5000, 7)])
def test_generated_ml_graphs(tmp_path, n, seed):
    from generate import write

    g = xcviz.load(write(n, str(tmp_path / f"g{n}.json"), seed))
    assert_same(g, ClusterOptions())
    assert_same(g, ClusterOptions(max_cluster_size=7))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dags(), st.sampled_from([None, 1, 3]), st.sampled_from([None, 2, 5]), st.sampled_from(["cpu", "gpu"]))
def test_random_dags(graph, min_size, max_size, device):
    assert_same(graph, ClusterOptions(min_cluster_size=min_size, max_cluster_size=max_size, device=device))


def test_dispatch_small_graphs_use_reference(monkeypatch):
    """Small graphs never pay numba's start-up; XCVIZ_MARK forces either implementation."""
    from xcviz.clustering import mark
    from xcviz.clustering._kernel import first_use
    from xcviz.fastpath import FAST_MIN_NODES, use_fast

    monkeypatch.delenv("XCVIZ_MARK", raising=False)
    monkeypatch.setattr(first_use, "cached", lambda: True)
    assert not mark._use_fast(10)
    assert mark._use_fast(FAST_MIN_NODES)
    # nothing cached: the compile pays only for the biggest graphs; smaller ones run the reference while
    # a background process compiles the kernel for the next run
    started = []
    monkeypatch.setattr(first_use, "cached", lambda: False)
    monkeypatch.setattr(first_use, "compile_in_background", lambda: started.append(1) or True)
    assert not mark._use_fast(FAST_MIN_NODES) and started == [1]
    assert mark._use_fast(first_use.COLD_MIN_NODES) and started == [1]
    monkeypatch.setenv("XCVIZ_MARK", "fast")
    assert use_fast(10, "XCVIZ_MARK") and mark._use_fast(10)
    monkeypatch.setenv("XCVIZ_MARK", "reference")
    assert not use_fast(10**7, "XCVIZ_MARK") and not mark._use_fast(10**7)


def test_lists_are_made_on_first_read_only():
    """The compiled pass hands over arrays; a list exists once someone reads it, and writes stick."""
    from xcviz.clustering.lazy import Deferred, stored

    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    opts = ClusterOptions(min_cluster_size=3)
    cands = find_candidates(g, opts)
    assert all(type(stored(cands, f)) is Deferred for f in ("ok", "code", "reason", "device"))
    c = mark_fast.mark_for_compilation(g, cands, opts)
    names = ("clusters", "cluster_of", "candidate", "code", "reason", "device", "groups")
    assert all(type(stored(c, f)) is Deferred for f in names)
    assert all(type(stored(cands, f)) is Deferred for f in ("ok", "code", "reason", "device"))
    ref = mark_reference.mark_for_compilation(g, find_candidates(g, opts), opts)
    assert c.code == ref.code and type(stored(c, "code")) is list and type(stored(c, "reason")) is Deferred
    c.code[0] = "edited"
    assert c.code[0] == "edited"
