"""More ONNX elementwise ops (bitwise, shifts, Celu/Mish/Shrink/PRelu), CastLike, EyeLike and SpaceToDepth."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, is_np, lit, np_dtype
from .elementwise import cast
from .registry import ELEMENTWISE, op

E = ELEMENTWISE


def _integers(name, *xs):
    for x in xs:
        if x.dtype.kind not in "iub":
            raise Unsupported(f"{name} takes integer tensors, not {x.dtype}")


def broadcast_pair(ctx: r.Ctx) -> list[TensorType]:
    """Two inputs broadcast NumPy-style; the first input's type."""
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), ctx.dtype(0) or ctx.dtype(1))]


# ---- bitwise -------------------------------------------------------------------------------------
def _bitwise(fn):
    def impl(xp, a, *xs):
        _integers("bitwise op", *xs)
        return getattr(xp, fn)(*xs)

    return impl


bitwise = dict(groups=E, infer=broadcast_pair, min_inputs=2, max_inputs=2, flops=r.output_flops(1))
op("bitwise_and", "BitwiseAnd", **bitwise, impl=_bitwise("bitwise_and"))
op("bitwise_or", "BitwiseOr", **bitwise, impl=_bitwise("bitwise_or"))
op("bitwise_xor", "BitwiseXor", **bitwise, impl=_bitwise("bitwise_xor"))
op("bitwise_not", "BitwiseNot", groups=E, infer=r.same, min_inputs=1, max_inputs=1, flops=r.output_flops(1),
   impl=_bitwise("invert"))


def bit_shift(xp, a, x, s):
    """ONNX BitShift as onnx's reference defines it: a shift by a negative count or by the bit width or more
    gives 0 (a RIGHT shift of a negative signed value gives -1); LEFT wraps (two's complement); RIGHT on a signed
    type is arithmetic. Spelled out because NumPy and XLA leave out-of-range counts to the hardware."""
    _integers("BitShift", x, s)
    direction = str(a.get("direction", "")).upper()
    if direction not in ("LEFT", "RIGHT"):
        raise Unsupported(f"BitShift direction must be LEFT or RIGHT, not {a.get('direction')!r}")
    if s.dtype != x.dtype:
        raise Unsupported(f"BitShift needs both inputs of one type, got {x.dtype} and {s.dtype}")
    x, s = xp.broadcast_arrays(x, s)
    bits = np.dtype(x.dtype).itemsize * 8
    signed = x.dtype.kind == "i"
    out = (s >= bits) | (s < 0) if signed else s >= bits
    count = xp.where(out, xp.zeros_like(s), s)
    if direction == "LEFT":
        y = xp.left_shift(x, count)
        fill = xp.zeros_like(x)
    else:
        y = xp.right_shift(x, count)
        fill = xp.where(x < 0, xp.full_like(x, -1), xp.zeros_like(x)) if signed else xp.zeros_like(x)
    return xp.where(out, fill, y)


op("bit_shift", "BitShift", groups=E, infer=broadcast_pair, min_inputs=2, max_inputs=2, flops=r.output_flops(1),
   attrs={"direction": "LEFT"}, impl=bit_shift)


# ---- activations ---------------------------------------------------------------------------------
def celu(xp, a, x):
    alpha = float(a.get("alpha", 1.0))
    neg = lit(x, alpha) * xp.expm1(x / lit(x, alpha))
    return xp.maximum(x, lit(x, 0)) + xp.minimum(neg, lit(x, 0))


def mish(xp, a, x):
    # log1p(exp(x)) overflows to inf for large x, and tanh(inf) = 1 keeps the product exact
    return x * xp.tanh(xp.log1p(xp.exp(x)))


def shrink(xp, a, x):
    lambd, bias = a.get("lambd", 0.5), a.get("bias", 0.0)
    lo, hi = -float(lambd), float(lambd)
    if x.dtype.kind in "iu":  # integer data: compare against the real threshold, shift by the (integral) bias
        b = int(bias)
        return xp.where(x < lo, x + lit(x, b), xp.where(x > hi, x - lit(x, b), xp.zeros_like(x)))
    return xp.where(x < lit(x, lo), x + lit(x, bias), xp.where(x > lit(x, hi), x - lit(x, bias), lit(x, 0)))


def prelu(xp, a, x, slope):
    """max(0, x) + slope * min(0, x), the slope broadcast to x one way only (ONNX unidirectional broadcasting)."""
    try:
        fits = np.broadcast_shapes(tuple(x.shape), tuple(slope.shape)) == tuple(x.shape)
    except ValueError:
        fits = False
    if not fits:
        raise Unsupported(f"PRelu slope of shape {tuple(slope.shape)} does not broadcast to X {tuple(x.shape)}")
    return xp.where(x > lit(x, 0), x, x * slope.astype(x.dtype))


unary = dict(groups=E, infer=r.same, min_inputs=1, max_inputs=1)
op("celu", "Celu", **unary, attrs={"alpha": 1.0}, flops=r.output_flops(5), impl=celu,
   doc="max(0, x) + min(0, alpha * (exp(x / alpha) - 1))")
op("mish", "Mish", **unary, flops=r.output_flops(9), impl=mish, doc="x * tanh(softplus(x))")
op("shrink", "Shrink", **unary, attrs={"bias": 0.0, "lambd": 0.5}, flops=r.output_flops(4), impl=shrink)
op("prelu", "PRelu", groups=E, infer=r.same, min_inputs=2, max_inputs=2, flops=r.output_flops(2), impl=prelu)


# ---- CastLike ------------------------------------------------------------------------------------
def infer_cast_like(ctx: r.Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(1))]


def cast_like(xp, a, x, like):
    """Cast's implementation with `to` taken from the second input's type (its values are not read), as the
    ONNX enum: that spelling reaches every dtype Cast knows (float8 *fnuz, 4- and 2-bit types), names do not."""
    from onnx.helper import np_dtype_to_tensor_dtype

    return cast(xp, {**a, "to": np_dtype_to_tensor_dtype(np.dtype(like.dtype))}, x)


op("cast_like", "CastLike", groups=E, infer=infer_cast_like, min_inputs=2, max_inputs=2, flops=r.zero_flops,
   attrs={"saturate": 1}, impl=cast_like)


# ---- EyeLike -------------------------------------------------------------------------------------
def _eye_dtype(a: dict, x_dtype):
    dt = a.get("dtype")
    return np_dtype(dt) if dt is not None else np.dtype(x_dtype)


def infer_eye_like(ctx: r.Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    dt = ctx.attrs.get("dtype")
    try:
        dtype = canonical_dtype(str(np_dtype(dt))) if dt is not None else ctx.dtype(0)
    except Unsupported:
        dtype = None
    return [TensorType(ctx.shape(0), dtype)]


def eye_like(xp, a, x):
    if x.ndim != 2:
        raise Unsupported(f"EyeLike takes a 2-D tensor, not rank {x.ndim}")
    dt = _eye_dtype(a, x.dtype)
    if is_np(xp):
        return np.eye(x.shape[0], x.shape[1], k=int(a.get("k", 0)), dtype=dt)
    return xp.eye(x.shape[0], x.shape[1], k=int(a.get("k", 0)), dtype=dt)


op("eye_like", "EyeLike", infer=infer_eye_like, min_inputs=1, max_inputs=1, flops=r.zero_flops, attrs={"k": 0},
   impl=eye_like, doc="ones on diagonal k of a matrix shaped like the input, zeros elsewhere")


# ---- SpaceToDepth --------------------------------------------------------------------------------
def infer_space_to_depth(ctx: r.Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    b = int(ctx.attrs.get("blocksize", 2))
    if x is None or len(x) != 4 or any(isinstance(d, str) for d in x[1:]):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], x[1] * b * b, x[2] // b, x[3] // b), ctx.dtype(0))]


def space_to_depth(xp, a, x):
    """DepthToSpace's inverse (ops.resample): DCR puts the block offsets before the channels, CRD after."""
    b = int(a.get("blocksize", 2))
    if x.ndim != 4:
        raise Unsupported(f"SpaceToDepth takes a 4-D NCHW tensor, not rank {x.ndim}")
    n, c, h, w = x.shape
    if h % b or w % b:
        raise Unsupported(f"SpaceToDepth blocksize {b} does not divide H={h}, W={w}")
    y = x.reshape(n, c, h // b, b, w // b, b)
    mode = str(a.get("mode", "DCR")).upper()
    if mode not in ("DCR", "CRD"):
        raise Unsupported(f"SpaceToDepth mode must be DCR or CRD, not {mode!r}")
    y = y.transpose(0, 1, 3, 5, 2, 4) if mode == "CRD" else y.transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


op("space_to_depth", "SpaceToDepth", infer=infer_space_to_depth, flops=r.zero_flops, min_inputs=1,
   max_inputs=1, attrs={"blocksize": 2, "mode": "DCR"}, impl=space_to_depth)
