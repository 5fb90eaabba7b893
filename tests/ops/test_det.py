"""Det (ops/linalg.py): batched, singular and permuted matrices against onnxruntime and onnx's reference, and
what it refuses."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from tests.support.onnx_op import check_op, refused  # noqa: E402

RNG = np.random.default_rng(31)


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 5), (2, 3, 3), (2, 2, 4, 4), (0, 3, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_batched_matches_onnxruntime(shape, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    check_op("Det", [x], rtol=1e-4, atol=1e-5, use_ort=dtype == np.float32)  # onnxruntime: float32 only


def test_det_singular_and_permuted_matrices():
    a = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32)  # rank 2: exactly 0
    p = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]], np.float32)  # a swap: -1 (pivoting's sign)
    got = check_op("Det", [np.stack([a, p, 3 * np.eye(3, dtype=np.float32)])], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, [0, -1, 27], atol=1e-5)


def test_det_refusals_and_xla_verdict():
    assert "[..., M, M]" in refused("Det", [np.ones((2, 3), np.float32)])
    det = REGISTRY.get("Det")
    assert not det.devices and "MatrixDeterminant" in det.reason and det.source.startswith("XLA")
