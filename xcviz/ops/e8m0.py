"""Conversion to float8e8m0 (a bare 8-bit exponent: powers of two, no sign), rounding as onnx's reference does."""
from __future__ import annotations

import numpy as np

from .arrays import Unsupported

MODES = ("up", "down", "nearest")


def to_e8m0(xp, x, saturate: bool = True, mode: str = "up"):
    """onnx.numpy_helper.to_float8e8m0 over NumPy or jax.numpy: the value goes through float32 first, its
    exponent field is kept and rounded by `mode` on the mantissa bits; NaN and infinity become 0xFF (NaN);
    with `saturate` a value above the largest exponent stays at it instead of rounding up to NaN."""
    import ml_dtypes

    if mode not in MODES:
        raise Unsupported(f"Cast round_mode {mode!r}", hint="round_mode is one of up, down, nearest")
    bits = x.astype(np.float32).view(np.uint32)
    exponent = (bits >> 23) & 0xFF
    special = exponent == 0xFF
    if mode == "up":
        round_up = (bits & 0x7FFFFF) > 0
    elif mode == "nearest":
        guard, rnd = (bits & 0x400000) > 0, (bits & 0x200000) > 0
        sticky, lsb = (bits & 0x1FFFFF) > 0, exponent > 0
        round_up = guard & (rnd | sticky | lsb)
    else:
        round_up = xp.zeros(bits.shape, bool)
    round_up = round_up & ~special
    if saturate:
        round_up = round_up & (exponent != 0xFE)
    out = xp.where(special, 0xFF, exponent + round_up.astype(np.uint32)).astype(np.uint8)
    return out.view(ml_dtypes.float8_e8m0fnu)
