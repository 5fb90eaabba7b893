"""Bernoulli (ops/random.py): its node tests under the check every draw must pass, and its draws against
the probabilities and against onnx's reference, statistically."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.conformance import check_output, collect, run_case
from xcviz.ops import REGISTRY, Unsupported
from tests.support.single_node import feeds, model, reference


def test_bernoulli_node_tests_pass_natively_and_the_check_can_fail():
    cases = [c for c in collect() if c.onnx_op == "Bernoulli"]
    assert len(cases) == 3
    for c in cases:
        assert run_case(c, "native") == ("pass", None), c.name
    c = cases[0]
    exp = np.asarray(c.outputs[0])
    assert check_output(c, exp, exp, "y") is None
    assert "outside" in check_output(c, np.full_like(exp, 0.5), exp, "y")
    assert "float32" in check_output(c, exp.astype(np.float32), exp, "y")
    forced = c.__class__(**{**c.__dict__, "inputs": [np.where(np.arange(10) < 5, 0.0, 1.0)]})
    assert "probability of 0 or 1" in check_output(forced, np.zeros(10), exp, "y")


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.93, 1.0])
def test_draws_follow_the_probability_like_onnx_s_reference(p):
    n = 200_000
    x = np.full(n, p, np.float32)
    ours = REGISTRY.get("Bernoulli").native({"seed": 3.0}, x)
    (ref,) = reference("Bernoulli", [x], 1, 22, seed=3.0)
    assert ours.dtype == ref.dtype == np.float32 and set(np.unique(ours)) <= {0.0, 1.0}
    sigma = np.sqrt(p * (1 - p) / n)
    assert abs(ours.mean() - p) <= 5 * sigma + 1e-12 and abs(ref.mean() - p) <= 5 * sigma + 1e-12


def test_seed_and_dtype():
    fn = REGISTRY.get("Bernoulli").native
    x = np.random.default_rng(0).random((4, 50)).astype(np.float64)
    a, b, c = fn({"seed": 1.0}, x), fn({"seed": 1.0}, x), fn({"seed": 2.0}, x)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert fn({"dtype": 6}, x).dtype == np.int32 and fn({}, x).dtype == np.float64
    with pytest.raises(Unsupported, match="probabilities"):
        fn({}, np.ones(3, np.int64))


def test_bernoulli_loads_infers_and_falls_back_as_a_stateful_rng_op():
    import xcviz
    from xcviz.passes.prepare import prepare
    from xcviz.loaders.onnx_model import graph_from_model
    from xcviz.runtime.execute import execute

    x = np.full((3, 4), 0.5, np.float32)
    g = prepare(graph_from_model(model("Bernoulli", [x], 1, 22, dtype=7), "bern"), onnx=True)
    assert (g.nodes[0].outputs[0].shape, g.nodes[0].outputs[0].dtype) == ((3, 4), "int64")
    (y,) = execute(g, feeds([x]), "hybrid").outputs.values()
    assert y.dtype == np.int64 and y.shape == (3, 4)
    c = xcviz.cluster(g, min_cluster_size=1)
    assert not c.candidate[0] and "stateful random op" in c.reason[0]
