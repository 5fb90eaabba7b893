"""CausalConvWithState and DeformConv (ops/conv_causal_deform.py) on configurations beyond the node tests, against
onnxruntime's CPU provider and onnx's reference: NumPy implementation, JAX lowering and the loaded graph alike."""
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


@pytest.mark.parametrize("engine", ["onnx", "ort"])
@pytest.mark.parametrize("seed", range(10))
def test_deform_conv_random_configs(seed, engine):
    rng = np.random.default_rng(seed)
    group, og = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    c = group * og * int(rng.integers(1, 3))
    oc = group * int(rng.integers(1, 3))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw, dh, dw = (int(v) for v in rng.integers(1, 3, 4))
    pads = [int(v) for v in rng.integers(0, 3, 4)]
    h, wd = int(rng.integers(4, 8)), int(rng.integers(4, 8))
    oh = (h + pads[0] + pads[2] - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd + pads[1] + pads[3] - ((kw - 1) * dw + 1)) // sw + 1
    offset = (rng.standard_normal((1, og * kh * kw * 2, oh, ow)) * 2.5).astype(np.float32)  # some taps off the image
    mask = rng.random((1, og * kh * kw, oh, ow)).astype(np.float32) if seed % 2 else None
    bias = _f(rng, oc) if seed % 3 else None
    inputs = [_f(rng, 1, c, h, wd), _f(rng, oc, c // group, kh, kw), offset, bias, mask]
    while inputs[-1] is None:
        inputs.pop()
    attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw], pads=pads, group=group,
                 offset_group=og)
    check("DeformConv", inputs, 1, 22, engine, rtol=1e-4, atol=1e-4, **attrs)


def test_deform_conv_with_zero_offsets_is_a_convolution():
    rng = np.random.default_rng(3)
    x, w, b = _f(rng, 2, 4, 6, 5), _f(rng, 6, 2, 3, 3), _f(rng, 6)
    a = {**REGISTRY.get("DeformConv").attrs, "group": 2, "pads": [1, 0, 1, 2], "strides": [2, 1]}
    offset = np.zeros((2, 18, 3, 5), np.float32)
    got = REGISTRY.get("DeformConv").native(a, x, w, offset, b)
    conv = REGISTRY.get("Conv").native({**REGISTRY.get("Conv").attrs, "group": 2, "pads": [1, 0, 1, 2],
                                        "strides": [2, 1]}, x, w, b)
    np.testing.assert_allclose(got, conv, rtol=1e-5, atol=1e-5)


def test_deform_conv_refuses_other_ranks_and_bad_offsets():
    fn = REGISTRY.get("DeformConv").native
    with pytest.raises(Unsupported, match="only 2-D"):
        fn({}, np.ones((1, 1, 5), np.float32), np.ones((1, 1, 2), np.float32), np.zeros((1, 4, 4), np.float32))
    with pytest.raises(Unsupported, match="offset"):
        fn({}, np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 2, 2), np.float32), np.zeros((1, 4, 2, 2), np.float32))
