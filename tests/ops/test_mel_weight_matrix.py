"""MelWeightMatrix (ops/signal.py) over filter-bank configurations against onnxruntime, and its refusal past
Nyquist."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from tests.support.onnx_op import check_op, refused  # noqa: E402


@pytest.mark.parametrize("bins,dft,rate,low,high", [(8, 16, 8192, 0.0, 4096.0), (20, 512, 16000, 20.0, 8000.0),
                                                    (40, 400, 22050, 0.0, 11025.0), (3, 64, 1000, 100.0, 300.0)])
def test_mel_weight_matrix_configs(bins, dft, rate, low, high):
    xs = [np.array(bins, np.int64), np.array(dft, np.int64), np.array(rate, np.int64), np.array(low, np.float32),
          np.array(high, np.float32)]
    y = check_op("MelWeightMatrix", xs)
    assert y.shape == (dft // 2 + 1, bins)


def test_mel_weight_matrix_past_nyquist_is_refused():
    xs = [np.array(8, np.int64), np.array(16, np.int64), np.array(8000, np.int64), np.array(0.0, np.float32),
          np.array(9000.0, np.float32)]
    assert "past the" in refused("MelWeightMatrix", xs)
