"""Expected clusters by node name: the seed demo, the cycle rule, effective size, phases, devices, scopes."""
import os

import pytest

import xcviz
from xcviz.clustering import ClusterOptions, run_clustering
from tests.support.paths import GRAPHS


SEED = os.path.join(GRAPHS, "seed_demo.yaml")


def names(graph, clustering):
    return [[graph.nodes[i].name for i in c] for c in clustering.clusters]


def reason(graph, clustering, name):
    return clustering.reason[graph.index[name]]


def test_seed_mark_min1_gives_article_clusters():
    g = xcviz.load(SEED)
    c = xcviz.cluster(g, min_cluster_size=1)
    assert names(g, c) == [["c1", "r1", "m1"], ["a1"]]
    assert reason(g, c, "p1") == "forced off (compile: false)"
    assert reason(g, c, "l1").startswith("unsupported on cpu: custom op")


def test_seed_mark_default_min_size_drops_everything_with_reasons():
    g = xcviz.load(SEED)
    c = xcviz.cluster(g)
    assert c.clusters == []
    assert all(r for r in c.reason), c.reason
    assert reason(g, c, "c1") == "cluster below minimum size (3 < 4)"
    assert reason(g, c, "a1") == "cluster below minimum size (1 < 4)"
    assert c.code[g.index["c1"]] == "min-size"


def test_seed_greedy_reproduces_the_article_split():
    # the article's output: [c1 r1] xla, p1 native, [m1] xla, l1 native, [a1] xla
    g = xcviz.load(SEED)
    c = xcviz.cluster(g, strategy="greedy")
    assert names(g, c) == [["c1", "r1"], ["m1"], ["a1"]]
    assert c.cluster_of[g.index["p1"]] == -1 and c.cluster_of[g.index["l1"]] == -1


CYCLE = """
name: cyc
inputs: [{name: x, shape: [4], dtype: float32}]
nodes:
  - {name: A, op: relu, inputs: [x]}
  - {name: B, op: PyFunc, inputs: [A], shape: [4], dtype: float32}
  - {name: C, op: add, inputs: [A, B]}
outputs: [C]
"""


def test_cycle_merge_refused_and_reason_names_the_blocking_node(write_graph):
    g = xcviz.load(write_graph(CYCLE))
    c = xcviz.cluster(g, min_cluster_size=1)
    assert names(g, c) == [["A"], ["C"]]
    refused = c.refused()
    assert len(refused) >= 1
    first = refused[0]
    assert (g.nodes[first.src].name, g.nodes[first.dst].name) == ("A", "C")
    assert first.code == "cycle" and "via B" in first.reason
    assert [g.nodes[p].name for p in first.path] == ["B"]


def test_const_and_identity_count_zero_toward_effective_size(write_graph):
    text = """
name: eff
inputs: [{name: x, shape: [4], dtype: float32}]
nodes:
  - {name: k, op: Const, attrs: {value: [1.0, 2.0, 3.0, 4.0]}}
  - {name: i, op: Identity, inputs: [x]}
  - {name: a, op: add, inputs: [i, k]}
  - {name: r, op: relu, inputs: [a]}
outputs: [r]
"""
    g = xcviz.load(write_graph(text))
    assert xcviz.cluster(g, min_cluster_size=2).clusters and names(g, xcviz.cluster(g, min_cluster_size=2)) == [["k", "i", "a", "r"]]
    c = xcviz.cluster(g, min_cluster_size=3)
    assert c.clusters == []
    assert reason(g, c, "k") == "cluster below minimum size (2 < 3)"
    # --min-cluster-size 0 keeps every candidate, even a lone Const
    lone = xcviz.load(write_graph("name: c\nnodes:\n  - {name: k, op: Const, attrs: {value: 1.0}}\noutputs: [k]\n", "c.yaml"))
    assert names(lone, xcviz.cluster(lone, min_cluster_size=0)) == [["k"]]
    assert xcviz.cluster(lone, min_cluster_size=1).clusters == []


def test_devices_and_scopes_are_never_mixed(write_graph):
    text = """
name: mix
inputs: [{name: x, shape: [4], dtype: float32}]
nodes:
  - {name: a, op: relu, inputs: [x], scope: s1}
  - {name: b, op: relu, inputs: [a], scope: s2}
  - {name: c, op: relu, inputs: [b], scope: s2, device: gpu:0}
  - {name: d, op: relu, inputs: [c], device: gpu:0}
outputs: [d]
"""
    g = xcviz.load(write_graph(text))
    c = xcviz.cluster(g, min_cluster_size=1)
    assert names(g, c) == [["a"], ["b"], ["c", "d"]]
    codes = {a.code for a in c.refused()}
    assert {"scope", "device"} <= codes


def test_max_cluster_size_is_respected(write_graph):
    text = "name: chain\ninputs: [{name: x, shape: [2], dtype: float32}]\nnodes:\n" + "".join(
        f"  - {{name: n{i}, op: relu, inputs: [{'x' if i == 0 else f'n{i - 1}'}]}}\n" for i in range(6)) + "outputs: [n5]\n"
    g = xcviz.load(write_graph(text))
    c = xcviz.cluster(g, min_cluster_size=1, max_cluster_size=2)
    assert all(len(cl) <= 2 for cl in c.clusters)
    assert sum(len(cl) for cl in c.clusters) == 6
    assert any(a.code == "max-size" for a in c.refused())


def test_phase0_contracts_shape_consumers_first(write_graph):
    text = """
name: p0
inputs: [{name: x, shape: [2, 3], dtype: float32}]
nodes:
  - {name: a, op: relu, inputs: [x]}
  - {name: s, op: Shape, inputs: [a]}
  - {name: b, op: relu, inputs: [a]}
outputs: [s, b]
"""
    g = xcviz.load(write_graph(text))
    c = xcviz.cluster(g, min_cluster_size=1)
    assert c.attempts[0].phase == 0
    assert (g.nodes[c.attempts[0].src].name, g.nodes[c.attempts[0].dst].name) == ("a", "s")
    assert names(g, c) == [["a", "s", "b"]]


def test_allow_deny_and_supported_ops(write_graph):
    g = xcviz.load(SEED)
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, deny=frozenset({"relu"})))
    assert reason(g, c, "r1") == "denied by --deny (relu)"
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, allow=frozenset({"custom_nms"})))
    assert names(g, c) == [["c1", "r1", "m1", "l1", "a1"]]
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, supported_ops=frozenset({"conv2d", "relu"})))
    assert names(g, c) == [["c1", "r1"]]
    assert reason(g, c, "m1") == "not in the supported-ops file (matmul)"


def test_unknown_op_declared_supported_clusters(write_graph):
    text = """
name: tf
inputs: [{name: x, shape: [4], dtype: float32}]
nodes:
  - {name: a, op: FancyTfOp, inputs: [x], shape: [4], dtype: float32}
  - {name: b, op: relu, inputs: [a]}
  - {name: c, op: OtherOp, inputs: ["a:0"], num_outputs: 4}
outputs: [b, "c:3"]
"""
    p = write_graph(text)
    with pytest.raises(xcviz.XcvizError, match="unknown op 'FancyTfOp'"):
        xcviz.load(p)
    g = xcviz.load(p, allow_unknown=True)
    c = xcviz.cluster(g, min_cluster_size=1)
    assert reason(g, c, "a") == "unknown op FancyTfOp" and c.code[0] == "unknown"
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, supported_ops=frozenset({"FancyTfOp", "relu"})))
    assert names(g, c) == [["a", "b"]]


@pytest.mark.parametrize("strategy", ["mark", "greedy"])
def test_clusters_numbered_by_first_member(strategy):
    g = xcviz.load(os.path.join(GRAPHS, "cycle_refused.yaml"))
    c = xcviz.cluster(g, strategy=strategy, min_cluster_size=1)
    firsts = [cl[0] for cl in c.clusters]
    assert firsts == sorted(firsts)


def test_cycle_example_graph_keeps_encoder_and_decoder_apart():
    g = xcviz.load(os.path.join(GRAPHS, "cycle_refused.yaml"))
    c = xcviz.cluster(g)
    assert names(g, c) == [["embed", "enc_act", "enc_norm", "enc_scale"], ["merge", "dec_act", "dec_proj", "dec_norm"]]
    assert all("via tokenize_hook" in a.reason for a in c.refused())
