"""CausalConvWithState (ops/causal_conv.py) on configurations beyond the node tests, against onnxruntime's CPU
provider and onnx's reference: NumPy implementation, JAX lowering and the loaded graph alike."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY, Unsupported
from tests.support.single_node import check

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _f(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("engine", ["onnx", "ort"])
@pytest.mark.parametrize("seed", range(8))
def test_causal_conv_with_state_random_configs(seed, engine):
    rng = np.random.default_rng(seed)
    b, c, n, k = int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 12)), int(rng.integers(1, 6))
    bias = _f(rng, c) if seed % 2 else None
    past = _f(rng, b, c, k - 1) if seed % 3 else None
    inputs = [_f(rng, b, c, n), _f(rng, c, 1, k), bias, past]
    while inputs[-1] is None:
        inputs.pop()
    act = ("none", "silu", "swish")[seed % 3]
    check("CausalConvWithState", inputs, 2, 27, engine, activation=act)


def test_causal_conv_state_chains_decode_steps_into_the_prefill_result():
    """Feeding present_state back one token at a time gives the outputs of one call over the whole sequence."""
    rng = np.random.default_rng(1)
    x, w, bias = _f(rng, 2, 3, 7), _f(rng, 3, 1, 4), _f(rng, 3)
    fn = REGISTRY.get("CausalConvWithState").native
    whole, state_all = fn({"activation": "silu"}, x, w, bias)
    state, steps = np.zeros((2, 3, 3), np.float32), []
    for t in range(7):
        y, state = fn({"activation": "silu"}, x[:, :, t:t + 1], w, bias, state)
        steps.append(y)
    np.testing.assert_allclose(np.concatenate(steps, axis=2), whole, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(state, state_all)


def test_causal_conv_refuses_what_it_does_not_define():
    fn = REGISTRY.get("CausalConvWithState").native
    x, w = np.ones((1, 2, 4), np.float32), np.ones((2, 1, 3), np.float32)
    with pytest.raises(Unsupported, match="activation 'gelu'"):
        fn({"activation": "gelu"}, x, w)
    with pytest.raises(Unsupported, match="past_state"):
        fn({}, x, w, None, np.ones((1, 2, 5), np.float32))
