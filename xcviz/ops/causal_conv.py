"""ONNX CausalConvWithState: a stateful causal depthwise 1-D convolution (past state or zeros, then the input;
optional SiLU), and the state it leaves for the next call."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from .arrays import Unsupported, present
from .registry import Entries
from .rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _text(v, default: str) -> str:
    if v is None:
        return default
    return v.decode() if isinstance(v, bytes) else str(v)


# ---- causal_conv_with_state: concat(past or zeros, x) -> depthwise conv1d (valid) -> optional SiLU -----------
ACTIVATIONS = ("none", "silu", "swish")


def causal_conv_with_state(xp, a, x, w, b=None, past=None):
    act = _text(a.get("activation"), "none")
    if act not in ACTIVATIONS:
        raise Unsupported(f"CausalConvWithState activation {act!r}", hint=f"one of {', '.join(ACTIVATIONS)}")
    if x.ndim != 3 or w.ndim != 3 or w.shape[1] != 1 or w.shape[0] != x.shape[1]:
        raise Unsupported(f"CausalConvWithState input {x.shape} / weight {w.shape}: want (B, C, L) and (C, 1, k)")
    bsz, c, n = x.shape
    k = w.shape[2]
    if present(past):
        if tuple(past.shape) != (bsz, c, k - 1):
            raise Unsupported(f"CausalConvWithState past_state {past.shape}: want {(bsz, c, k - 1)}")
        pad = past.astype(x.dtype)
    else:
        pad = xp.zeros((bsz, c, k - 1), dtype=x.dtype)
    padded = xp.concatenate([pad, x], axis=2)
    # half-precision inputs accumulate in float32 (as the reference's conv), then round once
    acc = np.float32 if x.dtype.itemsize < 4 else x.dtype
    pf, wf = padded.astype(acc), w[:, 0, :].astype(acc)
    y = pf[:, :, 0:n] * wf[None, :, 0:1]
    for j in range(1, k):  # k taps: a depthwise valid convolution written as shifted multiply-adds
        y = y + pf[:, :, j:j + n] * wf[None, :, j:j + 1]
    if present(b):
        y = y + b.astype(acc).reshape(1, c, 1)
    y = y.astype(x.dtype)
    if act != "none":  # SiLU on the rounded convolution, in float32, rounded again (the reference's order)
        yf = y.astype(np.float32)
        y = (yf / (1 + xp.exp(-yf))).astype(x.dtype)
    return y, padded[:, :, padded.shape[2] - (k - 1):]


def infer_causal_conv(ctx: Ctx) -> list[TensorType]:
    x, w, dt = ctx.shape(0), ctx.shape(1), ctx.dtype(0)
    state = None
    if x is not None and w is not None and len(x) == 3 and len(w) == 3 and isinstance(w[2], int):
        state = (x[0], x[1], w[2] - 1)
    return [TensorType(x, dt), TensorType(state, dt)][:max(ctx.num_outputs, 1)]


def causal_conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n, w = numel(ctx.shape(0)), ctx.shape(1)
    if n is None or w is None or len(w) != 3 or not isinstance(w[2], int):
        return None
    silu = 4 if _text(ctx.attrs.get("activation"), "none") != "none" else 0
    return n * (2 * w[2] + silu)


op("causal_conv_with_state", "CausalConvWithState", infer=infer_causal_conv, flops=causal_conv_flops,
   num_outputs=None, min_inputs=2, max_inputs=4, attrs={"activation": "none"}, impl=causal_conv_with_state,
   doc="stateful causal depthwise conv1d: past_state (or zeros) + input, k taps, optional SiLU; "
       "present_state = the last k-1 positions")
