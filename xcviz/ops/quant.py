"""Quantization (ONNX): QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger,
QLinearMatMul, QLinearConv: per-tensor, per-axis and blocked scales, integer and float8 targets.

Arithmetic follows onnx's reference: integer products accumulate in int32, requantization scales in float64
(NumPy's int32 x float32 promotion), round half to even, then saturate. Under XLA they are plain arithmetic
(round, clamp, convert, integer dot / convolution), which tf2xla compiles on every device.
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, is_np, np_dtype, present
from .conv import conv, conv_flops, conv_jax, infer_conv
from .linalg import matmul_flops, matmul_shape
from .registry import Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _small_float(dt: np.dtype) -> bool:
    return dt.name.startswith(("float8", "float4"))


def _limits(dt: np.dtype) -> tuple[float, float]:
    import ml_dtypes

    info = ml_dtypes.finfo(dt) if _small_float(dt) else ml_dtypes.iinfo(dt) if dt.kind == "V" else np.iinfo(dt)
    return float(info.min), float(info.max)


def _param(xp, p, x, axis: int, block: int):
    """A scale or zero point as an array broadcasting against x: scalar, per-axis (1-D) or blocked."""
    if p.ndim == 0 or p.size == 1 and block == 0:
        return p.reshape(())
    axis %= x.ndim
    if block:
        p = xp.repeat(p, block, axis=axis)
        return p[(slice(None),) * axis + (slice(0, x.shape[axis]),)]
    if p.ndim != 1 or p.shape[0] != x.shape[axis]:
        raise Unsupported(f"quantization parameter of shape {p.shape} for axis {axis} of {x.shape}")
    return p.reshape((-1,) + (1,) * (x.ndim - 1 - axis))


def _out_dtype(a, zp) -> np.dtype:
    if present(zp):
        return np.dtype(zp.dtype)
    to = int(a.get("output_dtype", 0) or 0)
    return np_dtype(to) if to else np.dtype(np.uint8)


def saturate(xp, q, dt: np.dtype):
    """Round half to even, clamp to the type's range, convert (integers); float8 converts with saturation."""
    lo, hi = _limits(dt)
    if _small_float(dt):
        return xp.clip(q, lo, hi).astype(dt)
    return xp.clip(xp.rint(q), lo, hi).astype(dt)


def quantize_linear(xp, a, x, scale, zp=None):
    axis, block = int(a.get("axis", 1)), int(a.get("block_size", 0) or 0)
    dt = _out_dtype(a, zp)
    if "e8m0" in dt.name:
        raise Unsupported(f"QuantizeLinear to {dt}")
    s = _param(xp, scale, x, axis, block).astype(np.float32)
    q = x.astype(np.float32) / s
    if _small_float(dt):
        if not int(a.get("saturate", 1)):
            return q.astype(dt)
        return saturate(xp, q, dt)
    q = xp.rint(q)
    if present(zp):
        q = q + _param(xp, zp, x, axis, block).astype(np.float32)
    return saturate(xp, q, dt)


def dequantize_linear(xp, a, x, scale, zp=None):
    axis, block = int(a.get("axis", 1)), int(a.get("block_size", 0) or 0)
    s = _param(xp, scale, x, axis, block)
    y = x.astype(np.float32)
    if present(zp):
        y = y - _param(xp, zp, x, axis, block).astype(np.float32)
    to = int(a.get("output_dtype", 0) or 0)
    return (y * s.astype(np.float32)).astype(np_dtype(to) if to else scale.dtype)


def dynamic_quantize_linear(xp, a, x):
    x = x.astype(np.float32)
    lo = xp.minimum(xp.min(x), np.float32(0))
    hi = xp.maximum(xp.max(x), np.float32(0))
    scale = ((hi - lo) / np.float32(255)).astype(np.float32)
    zp = xp.clip(xp.rint(np.float32(0) - lo / scale), 0, 255).astype(np.uint8)
    y = xp.clip(xp.rint(x / scale) + zp.astype(np.float32), 0, 255).astype(np.uint8)
    return y, scale, zp


def _shifted(xp, v, zp, axis_of_vector: int | None):
    """v - zero point in int32; a 1-D zero point runs along `axis_of_vector` (rows of A, columns of B, ...)."""
    v = v.astype(np.int32)
    if not present(zp):
        return v
    z = zp.astype(np.int32)
    if z.ndim == 1 and z.size > 1 and axis_of_vector is not None:
        shape = [1] * v.ndim
        shape[axis_of_vector % v.ndim] = -1
        z = z.reshape(shape)
    return v - z


def _int_matmul(xp, a, b, azp, bzp):
    return xp.matmul(_shifted(xp, a, azp, -2), _shifted(xp, b, bzp, -1))


def matmul_integer(xp, attrs, a, b, azp=None, bzp=None):
    return _int_matmul(xp, a, b, azp, bzp).astype(np.int32)


def _int_conv(xp, attrs, x, w, xzp, wzp):
    xs, ws = _shifted(xp, x, xzp, None), _shifted(xp, w, wzp, 0)
    if is_np(xp):
        return conv(xp, attrs, xs, ws)
    # XLA's CPU convolution is floating point: float64 holds every int8 x int8 sum exactly (< 2^53)
    return xp.rint(conv_jax(xp, attrs, xs.astype(np.float64), ws.astype(np.float64))).astype(np.int32)


def conv_integer(xp, attrs, x, w, xzp=None, wzp=None):
    return _int_conv(xp, attrs, x, w, xzp, wzp).astype(np.int32)


def _requantize(xp, acc, multiplier, yzp, fallback_dtype):
    y = acc.astype(np.float64) * multiplier.astype(np.float64)
    dt = np.dtype(yzp.dtype) if present(yzp) else np.dtype(fallback_dtype)
    if present(yzp):
        y = y + yzp.astype(np.float64)
    return saturate(xp, y, dt)


def qlinear_matmul(xp, attrs, a, a_s, azp, b, b_s, bzp, y_s, yzp=None):
    acc = _int_matmul(xp, a, b, azp, bzp)
    mult = a_s.astype(np.float32) * b_s.astype(np.float32) / y_s.astype(np.float32)
    return _requantize(xp, acc, mult, yzp, a.dtype)


def qlinear_conv(xp, attrs, x, x_s, xzp, w, w_s, wzp, y_s, yzp=None, b=None):
    acc = _int_conv(xp, attrs, x, w, xzp, wzp)
    if present(b):
        acc = acc + b.astype(np.int32).reshape((1, -1) + (1,) * (x.ndim - 2))
    ws = w_s.astype(np.float32)
    if ws.ndim == 1 and ws.size > 1:
        ws = ws.reshape((1, -1) + (1,) * (x.ndim - 2))
    mult = x_s.astype(np.float32) * ws / y_s.astype(np.float32)
    return _requantize(xp, acc, mult, yzp, x.dtype)


# ---- shape rules ---------------------------------------------------------------------------------
def infer_quantize(ctx: Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    to = int(ctx.attrs.get("output_dtype", 0) or 0)
    dt = ctx.dtype(2) if len(ctx.inputs) > 2 and ctx.dtype(2) else (
        canonical_dtype(str(to)) if to else "uint8")
    return [TensorType(ctx.shape(0), dt)]


def infer_dequantize(ctx: Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    to = int(ctx.attrs.get("output_dtype", 0) or 0)
    return [TensorType(ctx.shape(0), canonical_dtype(str(to)) if to else ctx.dtype(1))]


def infer_dynamic_quantize(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), "uint8"), TensorType((), "float32"), TensorType((), "uint8")]


def _picked(ctx: Ctx, slots: tuple[int, int], dtype: str | None = None) -> Ctx:
    return Ctx([ctx.inputs[i] if i < len(ctx.inputs) else TensorType() for i in slots], ctx.attrs, [], [], 1)


def infer_int_matmul(slots, out_slot):
    def rule(ctx: Ctx) -> list[TensorType]:
        dt = "int32" if out_slot is None else (ctx.dtype(out_slot) if len(ctx.inputs) > out_slot else ctx.dtype(0))
        return [TensorType(matmul_shape(ctx.shape(slots[0]), ctx.shape(slots[1])), dt)]
    return rule


def infer_int_conv(slots, out_slot):
    def rule(ctx: Ctx) -> list[TensorType]:
        dt = "int32" if out_slot is None else (ctx.dtype(out_slot) if len(ctx.inputs) > out_slot else ctx.dtype(0))
        return [TensorType(infer_conv(_picked(ctx, slots, dt))[0].shape, dt)]
    return rule


def picked_flops(rule, slots):
    def flops(ctx: Ctx, out: list[TensorType]) -> int | None:
        return rule(_picked(ctx, slots, None), out)
    return flops


def integer_matmul_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    return matmul_flops(ctx, out)


def integer_conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    return conv_flops(ctx, out)


CONV_ATTRS = {"strides": None, "pads": None, "dilations": None, "group": 1, "auto_pad": "NOTSET"}
op("quantize_linear", "QuantizeLinear", infer=infer_quantize, flops=r.input_flops(3), min_inputs=2, max_inputs=3,
   attrs={"axis": 1, "block_size": 0, "saturate": 1, "output_dtype": 0}, impl=quantize_linear,
   doc="round(x / scale) + zero point, saturated (per tensor, axis or block; int8/uint8/int16/int4/float8) "
       "(tf2xla: Round, ClipByValue, Cast)")
op("dequantize_linear", "DequantizeLinear", infer=infer_dequantize, flops=r.input_flops(2), min_inputs=2,
   max_inputs=3, attrs={"axis": 1, "block_size": 0, "output_dtype": 0}, impl=dequantize_linear,
   doc="(x - zero point) * scale (per tensor, axis or block) (tf2xla: Cast, Sub, Mul)")
op("dynamic_quantize_linear", "DynamicQuantizeLinear", infer=infer_dynamic_quantize, flops=r.input_flops(5),
   num_outputs=3, min_inputs=1, max_inputs=1, impl=dynamic_quantize_linear,
   doc="uint8 quantization with scale and zero point from the tensor's range (tf2xla: Min, Max, Round, Cast)")
op("matmul_integer", "MatMulInteger", infer=infer_int_matmul((0, 1), None), flops=integer_matmul_flops, min_inputs=2,
   max_inputs=4, impl=matmul_integer, doc="(A - a_zp) @ (B - b_zp) in int32 (tf2xla: MatMul, Cast, Sub)",
   cost_class="dot")
op("conv_integer", "ConvInteger", infer=infer_int_conv((0, 1), None), flops=integer_conv_flops, min_inputs=2,
   max_inputs=4, attrs=CONV_ATTRS, impl=conv_integer,
   doc="convolution of (x - x_zp) and (w - w_zp) in int32 (tf2xla: Conv2D, Cast, Sub)", cost_class="conv")
op("qlinear_matmul", "QLinearMatMul", infer=infer_int_matmul((0, 3), 7),
   flops=picked_flops(matmul_flops, (0, 3)), min_inputs=8, max_inputs=8, impl=qlinear_matmul,
   doc="integer matmul requantized to y's scale and zero point (tf2xla: MatMul, Round, ClipByValue, Cast)",
   cost_class="dot")
op("qlinear_conv", "QLinearConv", infer=infer_int_conv((0, 3), 7), flops=picked_flops(conv_flops, (0, 3)),
   min_inputs=8, max_inputs=9, attrs=CONV_ATTRS, impl=qlinear_conv,
   doc="integer convolution (+ int32 bias) requantized to y's scale and zero point "
       "(tf2xla: Conv2D, Round, ClipByValue, Cast)", cost_class="conv")
