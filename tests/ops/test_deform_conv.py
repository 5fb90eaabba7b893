"""DeformConv (ops/deform_conv.py) on configurations beyond the node tests, against onnxruntime's CPU provider
and onnx's reference: NumPy implementation, JAX lowering and the loaded graph alike."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY, Unsupported
from tests.support.single_node import check

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _f(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


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
