"""Bitwise ops: and/or/xor/not, BitShift and BitCast (integer tensors; BitCast reinterprets bits)."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, is_np, np_dtype
from .registry import ELEMENTWISE, Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

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


def _dtype_name(to) -> str | None:
    from ..ir import canonical_dtype

    return canonical_dtype(str(np_dtype(to)))


# ---- BitCast ---------------------------------------------------------------------------------------
_SUB_BYTE = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")


def _bitcast_target(x, to) -> np.dtype:
    if to is None:
        raise Unsupported("BitCast needs a `to` attribute")
    dt, src = np_dtype(to), np.dtype(x.dtype)
    for d in (src, dt):
        if d.kind in "OSU":
            raise Unsupported("BitCast of a string tensor (strings have no fixed bit pattern)")
        if d.name in _SUB_BYTE:
            raise Unsupported(f"BitCast of {d.name}: sub-byte types pack several values per byte")
    if dt.kind == "b":
        raise Unsupported("BitCast to bool: byte values other than 0 and 1 have no bool meaning",
                          hint="compare with 0 (Not/Equal) to get a bool tensor")
    if src.itemsize != dt.itemsize:
        raise Unsupported(f"BitCast from {src.name} ({8 * src.itemsize} bits) to {dt.name} ({8 * dt.itemsize} bits): "
                          "ONNX requires types of one bit width")
    return dt


def bit_cast(xp, a, x):
    """The same bits read as type `to` (same width, so the same shape). A bool is one byte 0/1: to (u)int8 it is
    the Cast of that byte (XLA's bitcast takes no PRED); everything else is XLA's BitcastConvert / a NumPy view."""
    dt = _bitcast_target(x, a.get("to"))
    if np.dtype(x.dtype).kind == "b":
        return x.astype(dt)
    if is_np(xp):
        return np.asarray(x).view(dt)  # one width: a view needs no contiguous copy
    if "complex" in (np.dtype(x.dtype).name + dt.name):
        raise Unsupported("BitCast of complex numbers under XLA (its BitcastConvert takes no complex type)")
    from jax import lax

    return lax.bitcast_convert_type(x, dt)


def infer_bit_cast(ctx: Ctx) -> list[TensorType]:
    to = ctx.attrs.get("to")
    return [TensorType(ctx.shape(0), _dtype_name(to) if to is not None else None)]


op("bit_cast", "BitCast", infer=infer_bit_cast, min_inputs=1, max_inputs=1, flops=r.zero_flops, attrs={"to": None},
   groups=ELEMENTWISE, impl=bit_cast, doc="reinterprets each element's bits as type `to` of the same width")
