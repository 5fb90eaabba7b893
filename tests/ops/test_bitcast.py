"""BitCast (ops/bitwise.py) on every same-width dtype pair and what it refuses, against onnxruntime and onnx's
reference (tests/support/onnx_op.py)."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import TensorProto, helper  # noqa: E402

from tests.support.onnx_op import check_op, refused  # noqa: E402

RNG = np.random.default_rng(31)


_WIDTHS = {1: (np.int8, np.uint8), 2: (np.float16, np.int16, np.uint16), 4: (np.float32, np.int32, np.uint32),
           8: (np.float64, np.int64, np.uint64)}


@pytest.mark.parametrize("src,dst", [(s, d) for ts in _WIDTHS.values() for s in ts for d in ts if s != d])
def test_bitcast_every_same_width_pair_keeps_the_bits(src, dst):
    raw = RNG.integers(0, 256, size=(2, 3, 4) if src != np.int8 else (5,), dtype=np.uint8)
    x = np.frombuffer(raw.tobytes()[: raw.size // np.dtype(src).itemsize * np.dtype(src).itemsize], src)
    x = x.reshape(-1, 2) if x.size % 2 == 0 else x  # NaN payloads, -0.0 and subnormals included
    check_op("BitCast", [x.copy()], to=helper.np_dtype_to_tensor_dtype(np.dtype(dst)))


def test_bitcast_refuses_what_has_no_same_width_meaning():
    assert "bit width" in refused("BitCast", [np.ones(3, np.float32)], to=TensorProto.INT64)
    assert "bool" in refused("BitCast", [np.ones(3, np.uint8)], to=TensorProto.BOOL)
    assert "bit width" in refused("BitCast", [np.ones(3, np.float32)], run="jit", to=TensorProto.FLOAT16)
    z = np.array([1 + 2j, -0.5j], np.complex64)  # natively a view; XLA's BitcastConvert takes no complex
    check_op("BitCast", [z], reference=True, use_ort=False, to=TensorProto.DOUBLE, modes=("native",))
    assert "complex" in refused("BitCast", [z], run="jit", to=TensorProto.DOUBLE)
