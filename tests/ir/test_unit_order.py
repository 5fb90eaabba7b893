"""ir.unit_order: the order a clustering runs in (clusters contracted). Every unit once, every edge between
units forward, and Kahn's smallest-ready-first order (file order where free), on generated graphs of 300-3000
nodes with their clusterings and with random ones, and a cycle of clusters refused."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xcviz
from xcviz.ir import topo_order, unit_order
from tests.support.paths import ROOT


def _graph(n: int, seed: int, tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from generate import to_json
    from ratios import typed

    path = tmp_path / f"g{n}_{seed}.json"
    path.write_text(to_json(typed(n, seed=seed)), encoding="utf-8")
    return xcviz.load(str(path))


def _reference(graph, cluster_of, nc):
    """The order by node objects and sets, one node at a time (how runtime.execute.units made it)."""
    unit_of = [c if c >= 0 else nc + i for i, c in enumerate(cluster_of)]
    present = sorted(set(unit_of))
    pos = {u: p for p, u in enumerate(present)}
    preds = [set() for _ in present]
    for j, node in enumerate(graph.nodes):
        for i in [s for s in graph.input_sources(j) if 0 <= s < len(graph.nodes)] + \
                [graph.index[r] for r in node.control_inputs if r in graph.index]:
            if unit_of[i] != unit_of[j]:
                preds[pos[unit_of[j]]].add(pos[unit_of[i]])
    order = topo_order(len(present), [sorted(p) for p in preds])
    return None if order is None else [("cluster", present[p]) if present[p] < nc else ("node", present[p] - nc)
                                       for p in order]


@pytest.mark.parametrize("n, seed", [(300, 1), (1000, 2), (3000, 3)])
def test_the_order_of_a_clustering_is_the_reference_order(n, seed, tmp_path):
    g = _graph(n, seed, tmp_path)
    c = xcviz.cluster(g)
    order = unit_order(g, np.array(c.cluster_of), len(c.clusters))
    assert order == _reference(g, list(c.cluster_of), len(c.clusters))
    position = {u: k for k, u in enumerate(order)}
    unit = [("cluster", k) if k >= 0 else ("node", j) for j, k in enumerate(c.cluster_of)]
    for j in range(len(g.nodes)):
        for s in g.input_sources(j):
            if 0 <= s < len(g.nodes) and unit[s] != unit[j]:
                assert position[unit[s]] < position[unit[j]]


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_random_groupings_order_as_the_reference_or_are_refused_alike(tmp_path_factory, data):
    g = _graph(300, 7, tmp_path_factory.mktemp("g"))
    k = data.draw(st.integers(1, 6))
    cluster_of = data.draw(st.lists(st.integers(-1, k - 1), min_size=len(g.nodes), max_size=len(g.nodes)))
    nc = max(cluster_of) + 1
    assert unit_order(g, np.array(cluster_of), nc) == _reference(g, cluster_of, nc)
