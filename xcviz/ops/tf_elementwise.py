"""More of TensorFlow's elementwise ops under their TF names (`tf.<Op>`): the activations, comparisons, logic and
integer arithmetic Keras layers and keras.applications emit, with TF's semantics.

Integer division follows TF, not NumPy, where they differ: `FloorDiv`/`FloorMod` round toward -inf (the
result of FloorMod takes the divisor's sign), `TruncateDiv`/`TruncateMod` and integer `Div` toward zero.
`LeakyRelu(features; alpha)`, `Elu`, `Selu` (TF's constants), `Softplus`, `ClipByValue(t, min, max)`."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import is_np, lit
from .registry import ELEMENTWISE, op
from .tf_kernels import xla_devices
from .tf_math import binary, compare, unary

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _entry(name: str, kind: dict, impl, doc: str, cost: int = 1, **kw) -> None:
    op(f"tf.{name}", **kind, devices=xla_devices(name), impl=impl, doc=doc,
       **({"flops": r.output_flops(cost)} if "flops" not in kind else {}), **kw)


def _int(x) -> bool:
    return np.dtype(x.dtype).kind in "iu"


def _trunc_div(xp, x, y):
    q = xp.abs(x) // xp.abs(y)
    return xp.where((x < 0) != (y < 0), -q, q).astype(x.dtype)


def _div(xp, a, x, y):
    return _trunc_div(xp, x, y) if _int(x) else x / y


def _floor_mod(xp, a, x, y):
    return xp.mod(x, y) if _int(x) else x - xp.floor(x / y) * y


def _trunc_mod(xp, a, x, y):
    return x - _trunc_div(xp, x, y) * y if _int(x) else xp.fmod(x, y)


def _div_no_nan(xp, a, x, y):
    safe = xp.where(y == 0, lit(y, 1), y)
    return xp.where(y == 0, lit(x, 0), x / safe)


for name, fn, doc in (
        ("Div", _div, "TF Div(x, y): integers round toward zero"),
        ("FloorDiv", lambda xp, a, x, y: (x // y) if _int(x) else xp.floor(x / y), "TF FloorDiv(x, y)"),
        ("FloorMod", _floor_mod, "TF FloorMod(x, y): the divisor's sign"),
        ("TruncateDiv", lambda xp, a, x, y: _trunc_div(xp, x, y) if _int(x) else xp.trunc(x / y),
         "TF TruncateDiv(x, y): toward zero"),
        ("TruncateMod", _trunc_mod, "TF TruncateMod(x, y): the dividend's sign"),
        ("DivNoNan", _div_no_nan, "TF DivNoNan(x, y): 0 where y == 0"),
        ("Atan2", lambda xp, a, y, x: xp.arctan2(y, x), "TF Atan2(y, x)"),
        ("LogicalOr", lambda xp, a, x, y: xp.logical_or(x, y), "TF LogicalOr(x, y)")):
    _entry(name, compare if name == "LogicalOr" else binary, fn, doc)
for name, fn in (("Equal", lambda xp, a, x, y: x == y), ("NotEqual", lambda xp, a, x, y: x != y),
                 ("LessEqual", lambda xp, a, x, y: x <= y)):
    _entry(name, compare, fn, f"TF {name}(x, y) -> bool")


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


for name, fn, cost in (
        ("Square", lambda xp, a, x: x * x, 1), ("Log", lambda xp, a, x: xp.log(x), 4),
        ("Log1p", lambda xp, a, x: xp.log1p(x), 4), ("Floor", lambda xp, a, x: xp.floor(x), 1),
        ("Ceil", lambda xp, a, x: xp.ceil(x), 1), ("Sign", lambda xp, a, x: xp.sign(x), 1),
        ("Reciprocal", lambda xp, a, x: lit(x, 1) / x, 1), ("Inv", lambda xp, a, x: lit(x, 1) / x, 1),
        ("Softplus", _softplus, 4), ("Softsign", lambda xp, a, x: x / (lit(x, 1) + xp.abs(x)), 2),
        ("Elu", _elu, 4), ("Selu", _selu, 4), ("Cos", lambda xp, a, x: xp.cos(x), 4),
        ("Tan", lambda xp, a, x: xp.tan(x), 4), ("Erf", _erf, 8), ("Atan", lambda xp, a, x: xp.arctan(x), 4),
        ("Sinh", lambda xp, a, x: xp.sinh(x), 4), ("Cosh", lambda xp, a, x: xp.cosh(x), 4),
        ("Asin", lambda xp, a, x: xp.arcsin(x), 4), ("Acos", lambda xp, a, x: xp.arccos(x), 4),
        ("Rint", lambda xp, a, x: xp.round(x), 1),
        ("ZerosLike", lambda xp, a, x: xp.zeros_like(x), 0), ("OnesLike", lambda xp, a, x: xp.ones_like(x), 0)):
    _entry(name, unary, fn, f"TF {name}(x)", cost)
_entry("LeakyRelu", unary, lambda xp, a, x: xp.where(x > 0, x, x * lit(x, a.get("alpha", 0.2))),
       "TF LeakyRelu(features; alpha=0.2)", 2, attrs={"alpha": 0.2})
for name, fn in (("IsNan", lambda xp, a, x: xp.isnan(x)), ("IsInf", lambda xp, a, x: xp.isinf(x)),
                 ("IsFinite", lambda xp, a, x: xp.isfinite(x)), ("LogicalNot", lambda xp, a, x: xp.logical_not(x))):
    op(f"tf.{name}", groups=ELEMENTWISE, devices=xla_devices(name), min_inputs=1, max_inputs=1,
       flops=r.output_flops(1), infer=lambda ctx: [TensorType(ctx.shape(0), "bool")], impl=fn,
       doc=f"TF {name}(x) -> bool")


def _clip_type(ctx):
    return [TensorType(r.broadcast(ctx.shape(0), r.broadcast(ctx.shape(1), ctx.shape(2))), ctx.dtype(0))]


op("tf.ClipByValue", groups=ELEMENTWISE, devices=xla_devices("ClipByValue"), min_inputs=3, max_inputs=3,
   infer=_clip_type, flops=r.output_flops(2), impl=lambda xp, a, t, lo, hi: xp.minimum(xp.maximum(t, lo), hi),
   doc="TF ClipByValue(t, clip_value_min, clip_value_max)")
