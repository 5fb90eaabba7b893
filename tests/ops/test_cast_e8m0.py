"""Cast to float8e8m0 matches onnx's reference (numpy_helper.to_float8e8m0) bit for bit, natively and under
JAX, for every round_mode and saturate, over random float32 bit patterns (NaN, infinities, subnormals)."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY, Unsupported

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, numpy_helper  # noqa: E402


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    edge = np.array([0, 1, 0x7F7FFFFF, 0x7F000000, 0x7F000001, 0x7F400000, 0x7F600000, 0x7F800000, 0xFF800000,
                     0x7FC00000, 0x00400000, 0x3F800000, 0x3FC00000, 0x3FA00000, 0x3FE00001, 0x80000000], np.uint32)
    return np.concatenate([bits, edge]).view(np.float32)


@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_to_e8m0_matches_onnx_bit_for_bit(mode, saturate):
    x = _inputs()
    want = numpy_helper.to_float8e8m0(x, bool(saturate), mode).view(np.uint8)
    cast = REGISTRY.get("Cast")
    attrs = {"to": TensorProto.FLOAT8E8M0, "saturate": saturate, "round_mode": mode}
    assert np.array_equal(np.asarray(cast.native(attrs, x)).view(np.uint8), want)
    pytest.importorskip("jax", reason="pip install -e '.[jax]' to check the JAX lowering")
    got = np.asarray(cast.jax(attrs, x))
    assert np.array_equal(got.view(np.uint8), want)
    half = x[np.isfinite(x) & (np.abs(x) < 6e4)].astype(np.float16)  # float16 goes through float32 as in onnx
    want16 = numpy_helper.to_float8e8m0(half.astype(np.float32), bool(saturate), mode).view(np.uint8)
    assert np.array_equal(np.asarray(cast.native(attrs, half)).view(np.uint8), want16)


def test_an_unknown_round_mode_is_refused():
    with pytest.raises(Unsupported, match="round_mode"):
        REGISTRY.get("Cast").native({"to": TensorProto.FLOAT8E8M0, "round_mode": "odd"}, np.ones(2, np.float32))
