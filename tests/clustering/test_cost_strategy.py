"""Strategy `cost`: legal (never a cycle, never across devices or scopes) and deterministic on random graphs,
decisions recorded with their reasons, and merges ordered by the cost model's benefit."""
from __future__ import annotations

import pytest
import os

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.strategies import dags, finalized_dags
from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.clustering.cost_strategy import PHASE
from xcviz.ir import parse_ref
from tests.support.paths import GRAPHS

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)



def _quotient_is_acyclic(g, c) -> bool:
    q = nx.DiGraph()
    label = lambda v: ("c", c.cluster_of[v]) if c.cluster_of[v] >= 0 else ("n", v)  # noqa: E731
    q.add_nodes_from(label(v) for v in range(len(g.nodes)))
    for j, node in enumerate(g.nodes):
        for ref in (*node.inputs, *node.control_inputs):
            u = g.index.get(parse_ref(ref)[0]) if ref else None
            if u is not None and label(u) != label(j):
                q.add_edge(label(u), label(j))
    return nx.is_directed_acyclic_graph(q)


def _check(g, c, max_size=None):
    for members in c.clusters:
        assert all(c.candidate[v] for v in members)
        assert len({c.device[v] for v in members}) == 1, "merged across devices"
        assert len({g.nodes[v].scope for v in members} - {None}) <= 1
        if max_size is not None:
            assert len(members) <= max_size
    assert _quotient_is_acyclic(g, c), "contracting the clusters made a cycle"
    for a in c.attempts:
        assert a.phase == PHASE and (a.merged or (a.reason and a.code))


@settings(max_examples=120, deadline=None)
@given(dags(), st.sampled_from([None, 2, 5]), st.sampled_from(["cpu", "h100"]))
def test_cost_strategy_is_legal_on_random_graphs(g, max_size, hw):
    c = run_clustering(g, ClusterOptions(strategy="cost", max_cluster_size=max_size, hardware=hw))
    _check(g, c, max_size)
    # every candidate left out of a cluster says why
    for v, k in enumerate(c.cluster_of):
        if c.candidate[v] and k < 0:
            assert c.code[v] in ("unprofitable", "min-size") and c.reason[v]


@settings(max_examples=60, deadline=None)
@given(finalized_dags())
def test_cost_strategy_is_deterministic_on_finalized_graphs(g):
    a = run_clustering(g, ClusterOptions(strategy="cost"))
    b = run_clustering(g, ClusterOptions(strategy="cost"))
    _check(g, a)
    assert a.clusters == b.clusters and a.attempts == b.attempts and a.reason == b.reason


def test_unprofitable_clusters_are_dropped_with_their_estimate():
    import xcviz

    g = xcviz.load(os.path.join(GRAPHS, "resnet_block.yaml"))
    c = run_clustering(g, ClusterOptions(strategy="cost"))
    from xcviz.cost import compute_stats, load_hardware

    s = compute_stats(g, c, load_hardware("cpu"))
    assert all(x.speedup_estimate is None or x.speedup_estimate > 1 for x in s.clusters_detail)


def _profile(tmp_path, **numbers) -> str:
    import yaml

    path = tmp_path / "hw.yaml"
    path.write_text(yaml.safe_dump({"name": "test", "peak_flops": 1e12, "memory_bandwidth": 1e11, **numbers}))
    return str(path)


def test_nothing_is_kept_where_no_cluster_pays(tmp_path):
    """Each hand-off costs far more than a kernel: merges that change nothing (ΔT = 0) go ahead, but no
    cluster pays, so every candidate falls back with its estimate."""
    from xcviz.pipeline import load_file as load

    g = load(os.path.join(GRAPHS, "cycle_refused.yaml"))
    c = run_clustering(g, ClusterOptions(strategy="cost", hardware=_profile(tmp_path, launch_overhead=1e-6,
                                                                                sync_overhead=1e-3)))
    _check(g, c)
    assert not c.clusters
    dropped = [v for v, code in enumerate(c.code) if code == "unprofitable"]
    assert dropped == [v for v in range(len(g.nodes)) if c.candidate[v]]
    assert all(c.reason[v].startswith("unprofitable (est. 0.") for v in dropped)


FANOUT = """
inputs:
  - {name: x, shape: [4], dtype: float32}
nodes:
  - {name: a1, op: relu, inputs: [x]}
  - {name: a2, op: tanh, inputs: [a1]}
  - {name: a3, op: exp, inputs: [a2]}
  - {name: a4, op: relu, inputs: [a3]}
  - {name: a5, op: tanh, inputs: [a4]}
  - {name: a6, op: exp, inputs: [a5]}
  - {name: b, op: relu, inputs: [a6]}
""" + "".join(f"  - {{name: p{i}, op: py_func, inputs: [b], outputs: [{{shape: [4], dtype: float32}}]}}\n" for i in range(5)) + \
    "outputs: [p0, p1, p2, p3, p4]\n"


def test_a_merge_that_does_not_pay_is_refused_with_its_time(tmp_path):
    """a1..a6 pay as one cluster (6 launches of 10 µs against one and two 20 µs hand-offs); taking b in
    would turn its five native edges into hand-offs: refused with ΔT < 0."""
    from xcviz.pipeline import load_file as load

    p = tmp_path / "g.yaml"
    p.write_text(FANOUT)
    g = load(str(p))
    c = run_clustering(g, ClusterOptions(strategy="cost", hardware=_profile(tmp_path, launch_overhead=1e-5,
                                                                                sync_overhead=2e-5)))
    _check(g, c)
    names = [[g.nodes[v].name for v in m] for m in c.clusters]
    assert names == [["a1", "a2", "a3", "a4", "a5", "a6"]]
    refused = [a for a in c.attempts if not a.merged]
    assert refused and all(a.code == "unprofitable" for a in refused)
    assert refused[0].reason == "not profitable: ΔT = −10.0 µs"
    b = g.index["b"]
    assert c.code[b] == "unprofitable" and c.reason[b].startswith("unprofitable (est. 0.")


@pytest.mark.parametrize("hardware", ["cpu", "cpu_torch", "gpu"])   # calibrated (two profiles), roofline
def test_each_op_is_costed_by_the_cost_model_stats_uses(hardware):
    """One home for the per-op formulas: the strategy's native time of each node is the one `stats` gives it
    (cost.stats: the profile's model), constants apart (stats knows the runtime holds them: they cost it 0)."""
    import numpy as np

    import xcviz
    from xcviz.clustering.cost_strategy import _costs
    from xcviz.cost import load_hardware
    from xcviz.cost.stats import cost_model, node_costs
    from xcviz.cost.view import CostView

    g = xcviz.load(os.path.join(GRAPHS, "transformer_block.yaml"))
    hw = load_hardware(hardware)
    flat = CostView(g)
    costs, _ = node_costs(g, flat)
    model = cost_model(hw, g, flat.nodes, costs.representatives)
    stats_time = model.node_times(costs)
    strategy_time = np.array(_costs(g, hw)[0])
    held = np.array([n.op in ("const", "constant") for n in g.nodes])
    assert len(strategy_time) == len(g.nodes) > 10 and not np.isnan(stats_time).any()
    np.testing.assert_array_equal(strategy_time[~held], stats_time[~held])
    assert (stats_time > 0).all() or hw.calibrated   # (roofline: every op pays its launch)
