"""Window arithmetic shared by convolution and pooling (ONNX padding rules, auto_pad, ceil_mode): once over
symbolic shapes (the inference rules), once over concrete ones (the implementations)."""
from __future__ import annotations

import math
from typing import Sequence

from ..ir import Dim
from .rules import Ctx, ShapeError, fmt


def out_size(size: Dim, k: int, s: int, pad: int, d: int, ceil: bool = False, pad_begin: int = 0) -> Dim:
    """Windows of size k, stride s and dilation d over `size` with `pad` padding in all."""
    if isinstance(size, str):
        return f"{size}'"  # derived symbolic dim
    eff = d * (k - 1) + 1
    num = size + pad - eff
    if num < 0:
        raise ShapeError(f"window {k} (dilation {d}) does not fit input size {size} with padding {pad}")
    out = (math.ceil(num / s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + pad_begin:
        out -= 1  # ONNX: a last window that would start in the padding is dropped
    return out


def spatial_out(ctx: Ctx, kernel: Sequence[int]) -> list[Dim]:
    """The output's spatial sizes of a window `kernel` over input 0 (symbolic sizes stay symbolic)."""
    x = ctx.shape(0)
    assert x is not None
    nsp = len(x) - 2
    strides = list(ctx.attrs.get("strides") or [1] * nsp)
    dil = list(ctx.attrs.get("dilations") or [1] * nsp)
    pads = list(ctx.attrs.get("pads") or [0] * (2 * nsp))
    auto = str(ctx.attrs.get("auto_pad", "NOTSET")).upper()
    if len(kernel) != nsp or len(strides) != nsp or len(pads) != 2 * nsp:
        raise ShapeError(f"kernel/strides/pads do not match {nsp} spatial dims of input {fmt(x)}")
    out: list[Dim] = []
    for i in range(nsp):
        size = x[2 + i]
        if auto in ("SAME_UPPER", "SAME_LOWER", "SAME"):
            out.append(f"{size}'" if isinstance(size, str) else -(-size // strides[i]))
        else:
            total = 0 if auto == "VALID" else pads[i] + pads[i + nsp]
            out.append(out_size(size, kernel[i], strides[i], total, dil[i], bool(ctx.attrs.get("ceil_mode")),
                                 0 if auto == "VALID" else pads[i]))
    return out


def window_geometry(a, spatial, kernel, ceil=False):
    """strides, dilations, (begin, end) pads per spatial dim, and output sizes (ONNX rules incl. auto_pad)."""
    n = len(spatial)
    strides = [int(s) for s in (a.get("strides") or [1] * n)]
    dil = [int(d) for d in (a.get("dilations") or [1] * n)]
    pads = [int(p) for p in (a.get("pads") or [0] * (2 * n))]
    auto = str(a.get("auto_pad", "NOTSET")).upper()
    begin, end, out = [], [], []
    for i in range(n):
        eff = dil[i] * (kernel[i] - 1) + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-spatial[i] // strides[i])
            total = max((o - 1) * strides[i] + eff - spatial[i], 0)
            b = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(b)
            end.append(total - b)
        elif auto == "VALID":
            begin.append(0)
            end.append(0)
        else:
            begin.append(pads[i])
            end.append(pads[i + n])
        num = spatial[i] + begin[i] + end[i] - eff
        o = (math.ceil(num / strides[i]) if ceil else num // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= spatial[i] + begin[i]:
            o -= 1  # the last window would start in the padding
        out.append(o)
    return strides, dil, begin, end, out


def window_slices(off, strides, dil, out):
    return tuple(slice(off[i] * dil[i], off[i] * dil[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                 for i in range(len(off)))
