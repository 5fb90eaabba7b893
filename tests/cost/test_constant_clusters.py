"""Issue 36, item 3: constant clusters stay out of the claim. A cluster whose values depend on no runtime input
(weights, constants and static shapes only) is folded by XLA when it compiles it, as Grappler, onnxruntime's
optimizer and torch.compile fold it: it is shown as folding to a constant, has `constant: true` and null
speedups in JSON, and is left out of the model's estimated and measured speedup."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from tests.support.paths import ROOT

import xcviz

TF = os.path.join(ROOT, "tests", "data", "tf_keras")
SHAPE_CHAIN = os.path.join(TF, "shape_chain_savedmodel")   # x: (None, 6); Shape(x)[1] -> Range -> ... -> Exp


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    io = np.load(os.path.join(TF, "shape_chain_io.npz"))
    path = tmp_path_factory.mktemp("in") / "x.npz"
    np.savez(path, x=io["in_x"])
    return str(path)


def _cluster(run_cli, *args) -> dict:
    code, out, err = run_cli("cluster", *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_the_shape_of_input_chain_is_a_constant_cluster_once_the_shape_is_known(run_cli, inputs):
    unbound = _cluster(run_cli, SHAPE_CHAIN)     # batch unknown: Shape(x) is not known before a call
    assert not any(c["constant"] for c in unbound["clusters"])
    bound = _cluster(run_cli, SHAPE_CHAIN, "--inputs", inputs)
    const = [c for c in bound["clusters"] if c["constant"]]
    assert len(const) == 1 and bound["stats"]["constant_clusters"] == 1
    (c,) = const
    assert "tf.Shape" in c["ops"] and "tf.Exp" in c["ops"] and c["speedup_estimate"] is None
    assert all(c2["speedup_estimate"] is not None for c2 in bound["clusters"] if not c2["constant"])


def test_a_constant_cluster_is_left_out_of_the_estimate(inputs):
    from xcviz.cost import compute_stats, hardware_for
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.loaders.npz import read_npz

    a = xcviz.analyse(SHAPE_CHAIN)
    feeds = bind_inputs(a.graph, read_npz(inputs), 0)
    g = xcviz.ir.bind_dims(a.graph, feeds.dims)
    s = compute_stats(g, a.clustering, hardware_for(g))
    (k,) = [k for k, c in enumerate(s.clusters_detail) if c.constant]
    # the same clustering with the folded cluster's nodes run natively: it costs the fallback what it costs natively
    from xcviz.clustering import ClusterOptions, run_clustering

    members = a.clustering.clusters[k]
    no_fold = run_clustering(g, ClusterOptions(deny=frozenset(g.nodes[j].op for j in members if g.nodes[j].op != "tf.Const")))
    assert s.time_before < compute_stats(g, no_fold, hardware_for(g)).time_before   # its ops: no native time either
    assert s.clusters_detail[k].time_fused == 0 and s.clusters_detail[k].speedup_estimate is None


def test_summary_and_table_say_it_folds(run_cli, inputs):
    code, out, err = run_cli("cluster", SHAPE_CHAIN, "--inputs", inputs)
    assert code == 0, err
    text = " ".join((out + err).split())
    assert "folds to a constant" in text and "(1 folds to a constant, left out of the estimate)" in text


@pytest.mark.slow
def test_validate_flags_it_and_times_the_rest(run_cli, inputs):
    pytest.importorskip("jax", reason="needs the jax extra")
    code, out, err = run_cli("validate", SHAPE_CHAIN, "--inputs", inputs, "--json", "--repeats", "3")
    assert code == 0, err
    d = json.loads(out)
    rows = {c["id"]: c for c in d["clusters"]}
    const = [c for c in rows.values() if c["constant"]]
    assert len(const) == 1
    (c,) = const
    assert c["status"] == "ok" and c["max_abs_error"] == 0.0     # still checked against the reference
    assert c["speedup"] is None and c["est_speedup"] is None and c["native_ms"] is None and c["xla_ms"] is None
    assert "folds to a constant" in c["message"]
    assert d["model"]["speedup"] is not None and d["model"]["est_speedup"] is not None


def test_random_clusters_are_not_constant(run_cli):
    """A stateful random op draws new numbers each call: its cluster is not constant (stateless ones with
    constant seeds are, as TF folds them)."""
    from xcviz.cost.params import VOLATILE_OPS

    assert {"tf.RandomUniform", "tf.RandomStandardNormal"} <= VOLATILE_OPS
    d = _cluster(run_cli, os.path.join(TF, "random_strings_savedmodel"))
    for c in d["clusters"]:
        if any(op.startswith("tf.Random") for op in c["ops"]):
            assert not c["constant"], c["ops"]
