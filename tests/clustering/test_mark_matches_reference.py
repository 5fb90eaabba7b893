"""The compiled `mark` (Cython, integer ids; every graph takes it) must give exactly what the reference pass gives.

Identical clusters, groups, per-node decisions AND attempt records (phase, sides, reason, blocking path),
on random DAGs (hypothesis), on every graph in graphs/ and the benchmark generator's graphs, and on every
TensorFlow dump of tests/data (TF's own rules: frames, deadness, resource operations).
"""
from __future__ import annotations

import glob
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import xcviz
from xcviz.clustering import ClusterOptions, find_candidates
from xcviz.clustering import mark, mark_reference
from xcviz.clustering.tf_rules import tf_candidates

from tests.support.strategies import dags
from tests.support.paths import ROOT

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))


def assert_same(graph, opts: ClusterOptions, candidates=find_candidates) -> None:
    # the compiled pass on candidates of its own: it reads their table, not the lists the reference reads
    fast = mark.mark_for_compilation(graph, candidates(graph, opts), opts)
    ref = mark_reference.mark_for_compilation(graph, candidates(graph, opts), opts)
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


TF_DUMPS = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "tf_*", "*", "*", "before_mark_for_compilation.pbtxt")))


@pytest.mark.parametrize("path", TF_DUMPS, ids=lambda p: "/".join(p.split(os.sep)[-4:-1]))
def test_tensorflow_dumps(path):
    """TF's rules (tf_rules.py) in the compiled pass: frame nodes, deadness, resource operations, phase 1's
    exclusions, each refusal with its words."""
    g = xcviz.load(path)
    for opts in (ClusterOptions(min_cluster_size=1), ClusterOptions(), ClusterOptions(max_cluster_size=3, device="gpu")):
        assert_same(g, opts, tf_candidates)


def test_tensorflow_refusals_are_reached():
    """The dumps above reach every refusal TF's rules add (so the comparison covers them)."""
    codes = set()
    for path in TF_DUMPS:
        g = xcviz.load(path)
        opts = ClusterOptions(min_cluster_size=1)
        codes |= {a.code for a in mark.mark_for_compilation(g, tf_candidates(g, opts), opts).attempts}
    assert {"deadness", "resource", "cycle"} <= codes


def test_every_graph_takes_the_compiled_pass(monkeypatch):
    """One path for every size: a three-node graph's clustering comes from the kernel (its attempt log)."""
    from xcviz.clustering.attempts import AttemptLog

    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    monkeypatch.setattr(mark_reference, "mark_for_compilation", None)  # (never called)
    assert isinstance(xcviz.cluster(g).attempts, AttemptLog)


def test_lists_are_made_on_first_read_only():
    """The compiled pass hands over arrays; a list exists once someone reads it, and writes stick."""
    from xcviz.clustering.deferred import Deferred, stored

    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_block.yaml"))
    opts = ClusterOptions(min_cluster_size=3)
    cands = find_candidates(g, opts)
    assert all(type(stored(cands, f)) is Deferred for f in ("ok", "code", "reason", "device"))
    c = mark.mark_for_compilation(g, cands, opts)
    names = ("clusters", "cluster_of", "candidate", "code", "reason", "device", "groups")
    assert all(type(stored(c, f)) is Deferred for f in names)
    assert all(type(stored(cands, f)) is Deferred for f in ("ok", "code", "reason", "device"))
    ref = mark_reference.mark_for_compilation(g, find_candidates(g, opts), opts)
    assert c.code == ref.code and type(stored(c, "code")) is list and type(stored(c, "reason")) is Deferred
    c.code[0] = "edited"
    assert c.code[0] == "edited"


def test_every_pyx_is_built_as_an_extension_module():
    """setup.py builds every xcviz/**/*.pyx (by glob): each imports as a compiled module, not as source."""
    import importlib
    import importlib.machinery

    pyx = sorted(glob.glob(os.path.join(ROOT, "xcviz", "**", "*.pyx"), recursive=True))
    assert len(pyx) >= 2
    for path in pyx:
        name = os.path.splitext(os.path.relpath(path, ROOT))[0].replace(os.sep, ".")
        origin = importlib.import_module(name).__spec__.origin
        assert origin.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), (name, origin)
