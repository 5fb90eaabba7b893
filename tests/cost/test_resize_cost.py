"""A linear or cubic resize is costed in XLA as what xcviz lowers it to: a dense interpolation matmul per resized
axis, at the dot class's rate (cost.classes.xla_class, resize_scale); natively it stays a window op."""
from __future__ import annotations

import pytest

from xcviz.cost.classes import op_class, resize_scale, xla_class


def test_a_bilinear_resize_is_a_dot_in_xla_and_a_window_op_natively():
    assert op_class("resize", {"mode": "linear"}) == "window"
    assert xla_class("resize", {"mode": "linear"}) == xla_class("resize", {"mode": "cubic"}) == "dot"
    assert xla_class("resize", {"mode": "nearest"}) == "window"


def test_the_interpolation_matmuls_flops():
    # 1x32x64x64 -> 1x32x128x128: H first (2*64 FLOPs per element of 1x32x128x64), then W (2*64 per element
    # of 1x32x128x128); the op states 4 per output element
    h = 2 * 64 * (32 * 128 * 64)
    w = 2 * 64 * (32 * 128 * 128)
    assert resize_scale({"mode": "linear"}, (1, 32, 64, 64), (1, 32, 128, 128)) == pytest.approx((h + w) / (4 * 32 * 128 * 128))
    assert resize_scale({"mode": "nearest"}, (1, 32, 64, 64), (1, 32, 128, 128)) == 1.0
    assert resize_scale({"mode": "linear"}, (1, 32, "H", 64), (1, 32, 128, 128)) == 1.0   # (unknown sizes: as stated)
