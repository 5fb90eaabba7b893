"""TensorFlow's elementwise, reduction and activation ops under their TF names and signatures (`tf.<Op>`).

TF's reductions take the axes as a second input (`Mean(input, axis; keep_dims)`), `BiasAdd` knows
`data_format`, `Cast` names its target in `DstT`, `SelectV2` broadcasts; devices come from TF's
XLA kernel registry (tf/kernels.py)."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r, sym_values as symv
from ..arrays import ints, is_np, lit, np_dtype
from ..registry import ELEMENTWISE, REDUCTION, VALUE_RULE, Entries, plus_groups
from ..rules import Ctx
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _binary_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), ctx.dtype(0) or ctx.dtype(1))]


def _compare_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), ctx.shape(1)), "bool")]


binary = dict(groups=ELEMENTWISE, infer=_binary_type, flops=r.output_flops(1), min_inputs=2, max_inputs=2)
compare = dict(groups=ELEMENTWISE, infer=_compare_type, flops=r.output_flops(1), min_inputs=2, max_inputs=2)
unary = dict(groups=ELEMENTWISE, infer=r.same, min_inputs=1, max_inputs=1)


def dev(name: str) -> dict:
    return {"devices": xla_devices(name)}


op("tf.AddV2", loop_role="+", **plus_groups(binary, VALUE_RULE), **dev("AddV2"), impl=lambda xp, a, x, y: x + y, doc="TF AddV2(x, y), broadcasting")
op("tf.Sub", loop_role="-", **plus_groups(binary, VALUE_RULE), **dev("Sub"), impl=lambda xp, a, x, y: x - y, doc="TF Sub(x, y)")
op("tf.Mul", **plus_groups(binary, VALUE_RULE), **dev("Mul"), impl=lambda xp, a, x, y: x * y, doc="TF Mul(x, y)")
op("tf.RealDiv", **binary, **dev("RealDiv"), impl=lambda xp, a, x, y: x / y, doc="TF RealDiv(x, y)")
op("tf.Maximum", **plus_groups(binary, VALUE_RULE), **dev("Maximum"), impl=lambda xp, a, x, y: xp.maximum(x, y),
   sym_value=symv.maximum, doc="TF Maximum(x, y)")
op("tf.Minimum", **plus_groups(binary, VALUE_RULE), **dev("Minimum"), impl=lambda xp, a, x, y: xp.minimum(x, y),
   sym_value=symv.minimum, doc="TF Minimum(x, y)")
op("tf.Pow", **binary, **dev("Pow"), impl=lambda xp, a, x, y: xp.power(x, y), doc="TF Pow(x, y)")
op("tf.SquaredDifference", **binary, **dev("SquaredDifference"), impl=lambda xp, a, x, y: (x - y) * (x - y),
   doc="TF SquaredDifference(x, y) = (x - y)^2")
op("tf.Less", loop_role="<", **plus_groups(compare, VALUE_RULE), **dev("Less"), impl=lambda xp, a, x, y: x < y, sym_value=symv.less,
   doc="TF Less(x, y) -> bool")
op("tf.Greater", loop_role=">", **plus_groups(compare, VALUE_RULE), **dev("Greater"), impl=lambda xp, a, x, y: x > y, sym_value=symv.greater,
   doc="TF Greater(x, y) -> bool")
op("tf.GreaterEqual", loop_role=">=", **compare, **dev("GreaterEqual"), impl=lambda xp, a, x, y: x >= y, doc="TF GreaterEqual(x, y)")
op("tf.LogicalAnd", loop_role="&", **compare, **dev("LogicalAnd"), impl=lambda xp, a, x, y: xp.logical_and(x, y),
   doc="TF LogicalAnd(x, y)")

op("tf.Relu", **unary, **dev("Relu"), flops=r.output_flops(1), impl=lambda xp, a, x: xp.maximum(x, lit(x, 0)),
   doc="TF Relu(features)")
op("tf.Relu6", **unary, **dev("Relu6"), flops=r.output_flops(2),
   impl=lambda xp, a, x: xp.minimum(xp.maximum(x, lit(x, 0)), lit(x, 6)), doc="TF Relu6(features) = min(max(x, 0), 6)")
op("tf.Abs", **plus_groups(unary, VALUE_RULE), **dev("Abs"), flops=r.output_flops(1), impl=lambda xp, a, x: xp.abs(x), sym_value=symv.absolute,
   doc="TF Abs(x)")
op("tf.Tanh", **unary, **dev("Tanh"), flops=r.output_flops(4), impl=lambda xp, a, x: xp.tanh(x), doc="TF Tanh(x)")
op("tf.Sigmoid", **unary, **dev("Sigmoid"), flops=r.output_flops(4),
   impl=lambda xp, a, x: lit(x, 1) / (lit(x, 1) + xp.exp(-x)), doc="TF Sigmoid(x)")
op("tf.Exp", **unary, **dev("Exp"), flops=r.output_flops(4), impl=lambda xp, a, x: xp.exp(x), doc="TF Exp(x)")
op("tf.Expm1", **unary, **dev("Expm1"), flops=r.output_flops(4), impl=lambda xp, a, x: xp.expm1(x), doc="TF Expm1(x)")
op("tf.Sin", **unary, **dev("Sin"), flops=r.output_flops(4), impl=lambda xp, a, x: xp.sin(x), doc="TF Sin(x)")
op("tf.Neg", **unary, **dev("Neg"), flops=r.output_flops(1), impl=lambda xp, a, x: -x, doc="TF Neg(x)")
op("tf.Sqrt", **unary, **dev("Sqrt"), flops=r.output_flops(2), impl=lambda xp, a, x: xp.sqrt(x), doc="TF Sqrt(x)")
op("tf.Rsqrt", **unary, **dev("Rsqrt"), flops=r.output_flops(2), impl=lambda xp, a, x: lit(x, 1) / xp.sqrt(x),
   doc="TF Rsqrt(x) = 1 / sqrt(x)")
op("tf.Round", **unary, **dev("Round"), flops=r.output_flops(1), impl=lambda xp, a, x: xp.round(x),
   doc="TF Round(x): half to even")


def _erfc(xp, a, x):
    if is_np(xp):
        from scipy.special import erfc

        return erfc(x).astype(x.dtype)
    from jax.scipy.special import erfc as jerfc

    return jerfc(x)


op("tf.Erfc", **unary, **dev("Erfc"), flops=r.output_flops(8), impl=_erfc, doc="TF Erfc(x) (Keras GELU)")


def _cast_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.attrs.get("DstT"))]


op("tf.Cast", loop_role="=", groups=(ELEMENTWISE, VALUE_RULE), **dev("Cast"), infer=_cast_type, flops=r.zero_flops, min_inputs=1, max_inputs=1,
   attrs={"DstT": None}, impl=lambda xp, a, x: x.astype(np_dtype(a["DstT"])), sym_value=symv.cast, doc="TF Cast(x; DstT)")


def _select_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(r.broadcast(ctx.shape(0), r.broadcast(ctx.shape(1), ctx.shape(2))), ctx.dtype(1))]


op("tf.SelectV2", groups=ELEMENTWISE, **dev("SelectV2"), infer=_select_type, flops=r.output_flops(1), min_inputs=3,
   max_inputs=3, impl=lambda xp, a, c, x, y: xp.where(c, x, y), doc="TF SelectV2(condition, t, e), broadcasting")


def _addn_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]


def _addn(xp, a, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


op("tf.AddN", groups=ELEMENTWISE, **dev("AddN"), infer=_addn_type, flops=r.output_flops(1), min_inputs=1,
   impl=_addn, doc="TF AddN(inputs...)")


def _bias_type(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]


def _bias_add(xp, a, x, b):
    if str(a.get("data_format") or "NHWC") == "NCHW" and x.ndim > 2:
        return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return x + b


op("tf.BiasAdd", groups=ELEMENTWISE, **dev("BiasAdd"), infer=_bias_type, flops=r.output_flops(1), min_inputs=2,
   max_inputs=2, attrs={"data_format": "NHWC"}, impl=_bias_add, doc="TF BiasAdd(value, bias; data_format)")


def _softmax(xp, a, x):
    e = xp.exp(x - xp.max(x, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)


def _log_softmax(xp, a, x):
    z = x - xp.max(x, axis=-1, keepdims=True)
    return z - xp.log(xp.sum(xp.exp(z), axis=-1, keepdims=True))


norm = dict(cost_class="norm", fusion="two_reductions", cpu_kernels=4, cpu_passes=(3, 5, 3))   # as ONNX's Softmax
op("tf.LogSoftmax", **unary, **dev("LogSoftmax"), flops=r.input_flops(5), impl=_log_softmax, **norm,
   doc="TF LogSoftmax(logits), last axis")
op("tf.Softmax", **unary, **dev("Softmax"), flops=r.input_flops(5), impl=_softmax, **norm,
   doc="TF Softmax(logits), last axis")


# ---- reductions: Op(input, axis; keep_dims) -------------------------------------------------------------
def _reduce_type(ctx: Ctx) -> list[TensorType]:
    shape, axes = ctx.shape(0), ctx.const(1)
    if shape is None or axes is None:
        return [TensorType(None, ctx.dtype(0))]
    rank = len(shape)
    ax = {r.norm_axis(int(v), rank) for v in np.asarray(axes).reshape(-1)}
    keep = bool(ctx.attrs.get("keep_dims"))
    out = tuple((1 if i in ax else d) for i, d in enumerate(shape) if keep or i not in ax)
    return [TensorType(out, ctx.dtype(0))]


def _reducer(name: str):
    def impl(xp, a, x, axis):
        ax = tuple(int(v) % max(x.ndim, 1) for v in ints(axis, f"{name} axis"))
        fn = {"Mean": xp.mean, "Sum": xp.sum, "Max": xp.max, "Prod": xp.prod, "All": xp.all, "Min": xp.min,
              "Any": xp.any}[name]
        out = fn(x, axis=ax, keepdims=bool(a.get("keep_dims")))
        return out.astype(x.dtype) if name in ("Mean", "Sum", "Prod") else out
    impl.__name__ = f"tf_{name.lower()}"
    return impl


reduce = dict(groups=REDUCTION, infer=_reduce_type, flops=r.input_flops(1), min_inputs=2, max_inputs=2,
              attrs={"keep_dims": False}, static_inputs=(1,))
op("tf.Mean", **reduce, **dev("Mean"), impl=_reducer("Mean"), doc="TF Mean(input, axis; keep_dims)",
   cost_class="reduce")
op("tf.Sum", **plus_groups(reduce, VALUE_RULE), **dev("Sum"), impl=_reducer("Sum"), doc="TF Sum(input, axis; keep_dims)", cost_class="reduce")
op("tf.Max", **plus_groups(reduce, VALUE_RULE), **dev("Max"), impl=_reducer("Max"), doc="TF Max(input, axis; keep_dims)", cost_class="reduce")
op("tf.Prod", **plus_groups(reduce, VALUE_RULE), **dev("Prod"), impl=_reducer("Prod"), doc="TF Prod(input, axis; keep_dims)",
   cost_class="reduce")
op("tf.All", **reduce, **dev("All"), impl=_reducer("All"), doc="TF All(input, axis; keep_dims)", cost_class="reduce")
op("tf.Min", **plus_groups(reduce, VALUE_RULE), **dev("Min"), impl=_reducer("Min"), doc="TF Min(input, axis; keep_dims)")
op("tf.Any", **reduce, **dev("Any"), impl=_reducer("Any"), doc="TF Any(input, axis; keep_dims)")

