"""More of TensorFlow's elementwise ops under their TF names (`tf.<Op>`): the activations, comparisons, logic and
integer arithmetic Keras layers and keras.applications emit, with TF's semantics.

Integer division follows TF, not NumPy, where they differ: `FloorDiv`/`FloorMod` round toward -inf (the
result of FloorMod takes the divisor's sign), `TruncateDiv`/`TruncateMod` and integer `Div` toward zero.
`LeakyRelu(features; alpha)`, `Elu`, `Selu` (TF's constants), `Softplus`, `ClipByValue(t, min, max)`."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r, sym_values as symv
from ..arrays import is_np, lit
from ..registry import ELEMENTWISE, VALUE_RULE, Entries, plus_groups
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _binary_type(ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), ctx.dtype(0) or ctx.dtype(1))]


def _compare_type(ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), "bool")]


def _bool_type(ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), "bool")]


binary = dict(groups=ELEMENTWISE, infer=_binary_type, flops=r.output_flops(1), min_inputs=2, max_inputs=2)
compare = dict(groups=ELEMENTWISE, infer=_compare_type, flops=r.output_flops(1), min_inputs=2, max_inputs=2)
unary = dict(groups=ELEMENTWISE, infer=r.same, min_inputs=1, max_inputs=1)
test = dict(groups=ELEMENTWISE, infer=_bool_type, flops=r.output_flops(1), min_inputs=1, max_inputs=1)


def dev(name: str) -> dict:
    return {"devices": xla_devices(name)}


def cost(n: int) -> dict:
    return {"flops": r.output_flops(n)}


def _int(x) -> bool:
    return np.dtype(x.dtype).kind in "iu"


def _trunc_div(xp, x, y):
    q = xp.abs(x) // xp.abs(y)
    return xp.where((x < 0) != (y < 0), -q, q).astype(x.dtype)


def _div(xp, a, x, y):
    return _trunc_div(xp, x, y) if _int(x) else x / y


def _floor_div(xp, a, x, y):
    return (x // y) if _int(x) else xp.floor(x / y)


def _floor_mod(xp, a, x, y):
    return xp.mod(x, y) if _int(x) else x - xp.floor(x / y) * y


def _truncate_div(xp, a, x, y):
    return _trunc_div(xp, x, y) if _int(x) else xp.trunc(x / y)


def _trunc_mod(xp, a, x, y):
    return x - _trunc_div(xp, x, y) * y if _int(x) else xp.fmod(x, y)


def _div_no_nan(xp, a, x, y):
    safe = xp.where(y == 0, lit(y, 1), y)
    return xp.where(y == 0, lit(x, 0), x / safe)


op("tf.Div", **binary, **dev("Div"), impl=_div, doc="TF Div(x, y): integers round toward zero")
op("tf.FloorDiv", **plus_groups(binary, VALUE_RULE), **dev("FloorDiv"), impl=_floor_div, sym_value=symv.floor_div,
   doc="TF FloorDiv(x, y): toward -inf")
op("tf.FloorMod", **binary, **dev("FloorMod"), impl=_floor_mod, doc="TF FloorMod(x, y): the divisor's sign")
op("tf.TruncateDiv", **binary, **dev("TruncateDiv"), impl=_truncate_div, doc="TF TruncateDiv(x, y): toward zero")
op("tf.TruncateMod", **binary, **dev("TruncateMod"), impl=_trunc_mod, doc="TF TruncateMod(x, y): the dividend's sign")
op("tf.DivNoNan", **binary, **dev("DivNoNan"), impl=_div_no_nan, doc="TF DivNoNan(x, y): 0 where y == 0")
op("tf.Atan2", **binary, **dev("Atan2"), impl=lambda xp, a, y, x: xp.arctan2(y, x), doc="TF Atan2(y, x)")
op("tf.LogicalOr", loop_role="|", **compare, **dev("LogicalOr"), impl=lambda xp, a, x, y: xp.logical_or(x, y),
   doc="TF LogicalOr(x, y)")
op("tf.Equal", **plus_groups(compare, VALUE_RULE), **dev("Equal"), impl=lambda xp, a, x, y: x == y, sym_value=symv.equal,
   doc="TF Equal(x, y) -> bool")
op("tf.NotEqual", **compare, **dev("NotEqual"), impl=lambda xp, a, x, y: x != y, doc="TF NotEqual(x, y) -> bool")
op("tf.LessEqual", loop_role="<=", **compare, **dev("LessEqual"), impl=lambda xp, a, x, y: x <= y, doc="TF LessEqual(x, y) -> bool")


def _softplus(xp, a, x):
    return xp.logaddexp(x, lit(x, 0))


def _elu(xp, a, x):
    return xp.where(x > 0, x, xp.expm1(xp.minimum(x, lit(x, 0))))


def _selu(xp, a, x):
    return lit(x, SELU_SCALE) * xp.where(x > 0, x, lit(x, SELU_ALPHA) * xp.expm1(xp.minimum(x, lit(x, 0))))


def _erf(xp, a, x):
    if is_np(xp):
        from scipy.special import erf

        return erf(x).astype(x.dtype)
    from jax.scipy.special import erf as jerf

    return jerf(x)


op("tf.Square", **unary, **dev("Square"), **cost(1), impl=lambda xp, a, x: x * x, doc="TF Square(x)")
op("tf.Log", **unary, **dev("Log"), **cost(4), impl=lambda xp, a, x: xp.log(x), doc="TF Log(x)")
op("tf.Log1p", **unary, **dev("Log1p"), **cost(4), impl=lambda xp, a, x: xp.log1p(x), doc="TF Log1p(x)")
op("tf.Floor", **unary, **dev("Floor"), **cost(1), impl=lambda xp, a, x: xp.floor(x), doc="TF Floor(x)")
op("tf.Ceil", **unary, **dev("Ceil"), **cost(1), impl=lambda xp, a, x: xp.ceil(x), doc="TF Ceil(x)")
op("tf.Sign", **unary, **dev("Sign"), **cost(1), impl=lambda xp, a, x: xp.sign(x), doc="TF Sign(x)")
op("tf.Reciprocal", **unary, **dev("Reciprocal"), **cost(1), impl=lambda xp, a, x: lit(x, 1) / x,
   doc="TF Reciprocal(x)")
op("tf.Inv", **unary, **dev("Inv"), **cost(1), impl=lambda xp, a, x: lit(x, 1) / x, doc="TF Inv(x) = 1 / x")
op("tf.Softplus", **unary, **dev("Softplus"), **cost(4), impl=_softplus, doc="TF Softplus(features)")
op("tf.Softsign", **unary, **dev("Softsign"), **cost(2), impl=lambda xp, a, x: x / (lit(x, 1) + xp.abs(x)),
   doc="TF Softsign(features)")
op("tf.Elu", **unary, **dev("Elu"), **cost(4), impl=_elu, doc="TF Elu(features)")
op("tf.Selu", **unary, **dev("Selu"), **cost(4), impl=_selu, doc="TF Selu(features), TF's alpha and scale")
op("tf.Cos", **unary, **dev("Cos"), **cost(4), impl=lambda xp, a, x: xp.cos(x), doc="TF Cos(x)")
op("tf.Tan", **unary, **dev("Tan"), **cost(4), impl=lambda xp, a, x: xp.tan(x), doc="TF Tan(x)")
op("tf.Erf", **unary, **dev("Erf"), **cost(8), impl=_erf, doc="TF Erf(x)")
op("tf.Atan", **unary, **dev("Atan"), **cost(4), impl=lambda xp, a, x: xp.arctan(x), doc="TF Atan(x)")
op("tf.Sinh", **unary, **dev("Sinh"), **cost(4), impl=lambda xp, a, x: xp.sinh(x), doc="TF Sinh(x)")
op("tf.Cosh", **unary, **dev("Cosh"), **cost(4), impl=lambda xp, a, x: xp.cosh(x), doc="TF Cosh(x)")
op("tf.Asin", **unary, **dev("Asin"), **cost(4), impl=lambda xp, a, x: xp.arcsin(x), doc="TF Asin(x)")
op("tf.Acos", **unary, **dev("Acos"), **cost(4), impl=lambda xp, a, x: xp.arccos(x), doc="TF Acos(x)")
op("tf.Rint", **unary, **dev("Rint"), **cost(1), impl=lambda xp, a, x: xp.round(x), doc="TF Rint(x): half to even")
op("tf.ZerosLike", **unary, **dev("ZerosLike"), flops=r.zero_flops, impl=lambda xp, a, x: xp.zeros_like(x),
   doc="TF ZerosLike(x)")
op("tf.OnesLike", **unary, **dev("OnesLike"), flops=r.zero_flops, impl=lambda xp, a, x: xp.ones_like(x),
   doc="TF OnesLike(x)")
op("tf.LeakyRelu", **unary, **dev("LeakyRelu"), **cost(2), attrs={"alpha": 0.2},
   impl=lambda xp, a, x: xp.where(x > 0, x, x * lit(x, a.get("alpha", 0.2))), doc="TF LeakyRelu(features; alpha)")
op("tf.IsNan", **test, **dev("IsNan"), impl=lambda xp, a, x: xp.isnan(x), doc="TF IsNan(x) -> bool")
op("tf.IsInf", **test, **dev("IsInf"), impl=lambda xp, a, x: xp.isinf(x), doc="TF IsInf(x) -> bool")
op("tf.IsFinite", **test, **dev("IsFinite"), impl=lambda xp, a, x: xp.isfinite(x), doc="TF IsFinite(x) -> bool")
op("tf.LogicalNot", loop_role="!", **test, **dev("LogicalNot"), impl=lambda xp, a, x: xp.logical_not(x), doc="TF LogicalNot(x)")


def _clip_type(ctx):
    return [TensorType(r.broadcast(ctx.shape(0), r.broadcast(ctx.shape(1), ctx.shape(2))), ctx.dtype(0))]


op("tf.ClipByValue", groups=ELEMENTWISE, devices=xla_devices("ClipByValue"), min_inputs=3, max_inputs=3,
   infer=_clip_type, flops=r.output_flops(2), impl=lambda xp, a, t, lo, hi: xp.minimum(xp.maximum(t, lo), hi),
   doc="TF ClipByValue(t, clip_value_min, clip_value_max)")
