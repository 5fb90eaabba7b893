"""Elementwise ops: unary activations and math, casts, binary broadcasting arithmetic and comparisons."""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from . import rules as r, sym_values as symv
from .arrays import Unsupported, is_np, lit, np_dtype, present
from .e8m0 import to_e8m0
from .registry import ELEMENTWISE, EXPENSIVE, VALUE_RULE, Entries, plus_groups

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

E = ELEMENTWISE


def _erf(xp, x):
    if is_np(xp):
        try:
            from scipy.special import erf
        except ImportError:  # scipy is optional
            return _erf_numpy(x)
        return erf(x).astype(x.dtype)
    import jax.scipy.special as jss

    return jss.erf(x)


def _erf_numpy(x):
    """erf without scipy, vectorised: exact (math.erf) in float64, Abramowitz-Stegun 7.1.26 in lower
    precision (|error| < 1.5e-7, below float32's resolution of erf's range), so native timings stay fair."""
    if np.dtype(x.dtype) == np.float64:
        return np.vectorize(math.erf, otypes=[x.dtype])(x)
    t64 = np.asarray(x, dtype=np.float64)
    a = np.abs(t64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (np.sign(t64) * (1.0 - poly * np.exp(-a * a))).astype(x.dtype)


def gelu(xp, a, x):
    if str(a.get("approximate", "none")) == "tanh":
        inner = lit(x, math.sqrt(2 / math.pi)) * (x + lit(x, 0.044715) * x * x * x)
        return lit(x, 0.5) * x * (lit(x, 1) + xp.tanh(inner))
    return lit(x, 0.5) * x * (lit(x, 1) + _erf(xp, x / lit(x, math.sqrt(2))))


def _sigmoid(xp, x):
    return lit(x, 1) / (lit(x, 1) + xp.exp(-x))


# ---- unary ---------------------------------------------------------------------------------------
unary = dict(groups=E, infer=r.same, min_inputs=1, max_inputs=1)

op("relu", "Relu", **unary, flops=r.output_flops(1), doc="max(x, 0)", impl=lambda xp, a, x: xp.maximum(x, lit(x, 0)))
op("relu6", "Relu6", **unary, flops=r.output_flops(2),
   impl=lambda xp, a, x: xp.minimum(xp.maximum(x, lit(x, 0)), lit(x, 6)))
op("gelu", "Gelu", **plus_groups(unary, EXPENSIVE), attrs={"approximate": "none"}, flops=r.output_flops(8),
   doc="Gaussian error linear unit",
   impl=gelu)
op("sigmoid", "Sigmoid", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4),
   impl=lambda xp, a, x: _sigmoid(xp, x))
op("tanh", "Tanh", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.tanh(x))
op("exp", "Exp", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.exp(x))
op("log", "Log", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), positive_inputs=(0,),
   impl=lambda xp, a, x: xp.log(x))
op("sqrt", "Sqrt", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(2), positive_inputs=(0,),
   impl=lambda xp, a, x: xp.sqrt(x))
op("rsqrt", "Rsqrt", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(2), positive_inputs=(0,),
   impl=lambda xp, a, x: lit(x, 1) / xp.sqrt(x))
op("reciprocal", "Reciprocal", "Inv", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(1),
   impl=lambda xp, a, x: lit(x, 1) / x)
op("neg", "Neg", **plus_groups(unary, VALUE_RULE), flops=r.output_flops(1), impl=lambda xp, a, x: -x)
op("abs", "Abs", **plus_groups(unary, VALUE_RULE), flops=r.output_flops(1), impl=lambda xp, a, x: xp.abs(x),
   sym_value=symv.absolute)
op("erf", "Erf", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(8), impl=lambda xp, a, x: _erf(xp, x))
op("floor", "Floor", **plus_groups(unary, VALUE_RULE), flops=r.output_flops(1), impl=lambda xp, a, x: xp.floor(x))
op("ceil", "Ceil", **plus_groups(unary, VALUE_RULE), flops=r.output_flops(1), impl=lambda xp, a, x: xp.ceil(x))
op("sin", "Sin", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.sin(x))
op("cos", "Cos", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.cos(x))
op("softplus", "Softplus", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4),
   impl=lambda xp, a, x: xp.log(xp.exp(x) + lit(x, 1)))
op("leaky_relu", "LeakyRelu", **unary, attrs={"alpha": 0.01}, flops=r.output_flops(2),
   impl=lambda xp, a, x: xp.where(x < 0, x * lit(x, a.get("alpha", 0.01)), x))
op("elu", "Elu", **unary, attrs={"alpha": 1.0}, flops=r.output_flops(4),
   impl=lambda xp, a, x: xp.where(x < 0, lit(x, a.get("alpha", 1.0)) * xp.expm1(x), x))  # expm1: exact near 0
op("hard_sigmoid", "HardSigmoid", **unary, attrs={"alpha": 0.2, "beta": 0.5}, flops=r.output_flops(3),
   impl=lambda xp, a, x: xp.clip(x * lit(x, a.get("alpha", 0.2)) + lit(x, a.get("beta", 0.5)), lit(x, 0), lit(x, 1)))
op("hard_swish", "HardSwish", **unary, flops=r.output_flops(4),
   impl=lambda xp, a, x: x * xp.clip(x / lit(x, 6) + lit(x, 0.5), lit(x, 0), lit(x, 1)))
op("silu", "Swish", "swish", **unary, flops=r.output_flops(5), attrs={"alpha": 1.0},
   impl=lambda xp, a, x: x * _sigmoid(xp, x if float(a.get("alpha", 1.0)) == 1.0 else x * float(a["alpha"])),
   doc="x * sigmoid(alpha x): torch's SiLU (alpha 1) and ONNX's Swish (opset 24, attribute alpha)")
op("tan", "Tan", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.tan(x))
op("asin", "Asin", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.arcsin(x))
op("acos", "Acos", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.arccos(x))
op("atan", "Atan", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.arctan(x))
op("sinh", "Sinh", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.sinh(x))
op("cosh", "Cosh", **plus_groups(unary, EXPENSIVE), flops=r.output_flops(4), impl=lambda xp, a, x: xp.cosh(x))
op("asinh", "Asinh", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.arcsinh(x))
op("acosh", "Acosh", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.arccosh(x))
op("atanh", "Atanh", **unary, flops=r.output_flops(4), impl=lambda xp, a, x: xp.arctanh(x))
op("sign", "Sign", **unary, flops=r.output_flops(1), impl=lambda xp, a, x: xp.sign(x).astype(x.dtype))
op("round", "Round", **unary, flops=r.output_flops(1), doc="half to even (tf2xla: Round)",
   impl=lambda xp, a, x: xp.round(x))
op("softsign", "Softsign", **unary, flops=r.output_flops(3), impl=lambda xp, a, x: x / (lit(x, 1) + xp.abs(x)))
op("selu", "Selu", **unary, attrs={"alpha": 1.67326319217681884765625, "gamma": 1.05070102214813232421875},
   flops=r.output_flops(4), impl=lambda xp, a, x: xp.where(
       x > 0, x * lit(x, a["gamma"]), lit(x, a["gamma"]) * (lit(x, a["alpha"]) * xp.exp(x) - lit(x, a["alpha"]))))
op("thresholded_relu", "ThresholdedRelu", **unary, attrs={"alpha": 1.0}, flops=r.output_flops(1),
   impl=lambda xp, a, x: xp.where(x > lit(x, a["alpha"]), x, lit(x, 0)))
op("is_nan", "IsNaN", "IsNan", groups=E, infer=lambda ctx: [TensorType(ctx.shape(0), "bool")], min_inputs=1,
   max_inputs=1, flops=r.output_flops(1), impl=lambda xp, a, x: xp.isnan(x))
op("is_inf", "IsInf", groups=E, infer=lambda ctx: [TensorType(ctx.shape(0), "bool")], min_inputs=1,
   max_inputs=1, attrs={"detect_negative": 1, "detect_positive": 1}, flops=r.output_flops(1),
   impl=lambda xp, a, x: (xp.isposinf(x) & bool(a["detect_positive"])) | (xp.isneginf(x) & bool(a["detect_negative"])))
op("not", "Not", "LogicalNot", loop_role="!", **plus_groups(unary, VALUE_RULE), flops=r.output_flops(1),
   impl=lambda xp, a, x: xp.logical_not(x))


def clip(xp, a, x, lo=None, hi=None):
    lo = lo if present(lo) else a.get("min")
    hi = hi if present(hi) else a.get("max")
    if lo is not None:
        x = xp.maximum(x, xp.asarray(lo, dtype=x.dtype))
    if hi is not None:
        x = xp.minimum(x, xp.asarray(hi, dtype=x.dtype))
    return x


op("clip", "Clip", "ClipByValue", groups=E, infer=r.same, min_inputs=1, max_inputs=3,
   flops=r.output_flops(2), doc="clamp to [min, max] (attrs or inputs 2 and 3)", impl=clip)


def infer_cast(ctx: r.Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    to = ctx.attrs.get("to")
    return [TensorType(ctx.shape(0), canonical_dtype(str(to)) if to is not None else None)]


def cast(xp, a, x):
    """ONNX Cast over the whole matrix ml_dtypes spells (bfloat16, float8, float4, int4/uint4, int2/uint2): to a
    float type round to nearest even; to float8 with `saturate` (default) out-of-range values and infinities clamp
    to the largest finite value, as onnx's reference does; to float8e8m0 by `round_mode` (ops.e8m0). Float to an
    integer truncates toward zero; to 2- and 4-bit integers out-of-range values wrap as onnxruntime does (the spec
    leaves them undefined for float sources), computed here rather than by ml_dtypes, whose own casts changed
    this between versions."""
    to = a.get("to", a.get("DstT"))
    if to is None:
        raise Unsupported("Cast needs a `to` attribute")
    dt = np_dtype(to)
    if "e8m0" in dt.name:
        return to_e8m0(xp, x, bool(int(a.get("saturate", 1))), str(a.get("round_mode", "up")))
    if x.dtype == dt:
        return x
    if dt.name.startswith("float8") and int(a.get("saturate", 1)):
        import ml_dtypes

        top = float(ml_dtypes.finfo(dt).max)
        x = xp.clip(x, lit(x, -top), lit(x, top))  # NaN stays NaN
    if dt.name in ("int4", "uint4", "int2", "uint2") and x.dtype.kind != "b":
        # out-of-range values wrap (onnx's reference, ml_dtypes); XLA's convert would saturate instead
        bits = int(dt.name[-1])
        low = -(1 << (bits - 1)) if dt.name.startswith("int") else 0
        y = x.astype(np.int32) if x.dtype.kind in "iu" or is_np(xp) else x.astype(xp.int32)
        return ((y - low) % (1 << bits) + low).astype(dt)
    if dt.kind in "iu" and x.dtype.kind == "f" and is_np(xp):
        with np.errstate(invalid="ignore"):
            return x.astype(dt)
    return x.astype(dt)


op("cast", "Cast", loop_role="=", groups=(E, VALUE_RULE), infer=infer_cast, min_inputs=1, max_inputs=1, flops=r.zero_flops, impl=cast,
   sym_value=symv.cast)


# ---- binary and variadic, with broadcasting ------------------------------------------------------
def broadcast_all(ctx: r.Ctx) -> list[TensorType]:
    shape = ctx.shape(0)
    for i in range(1, len(ctx.inputs)):
        shape = r.broadcast(shape, ctx.shape(i))
    dtype = next((t.dtype for t in ctx.inputs if t.dtype), None)
    return [TensorType(shape, dtype)]


def div(xp, a, x, y):
    if np.dtype(x.dtype).kind in "iu":
        return xp.trunc(x / y).astype(x.dtype) if is_np(xp) else (x / y).astype(x.dtype)
    return x / y


def power(xp, a, x, y):
    if np.dtype(x.dtype).kind == "f":
        return xp.power(x, y.astype(x.dtype) if hasattr(y, "astype") else y).astype(x.dtype)
    return xp.power(x, y).astype(x.dtype)


def mod(xp, a, x, y):
    if int(a.get("fmod", 0)):
        return xp.fmod(x, y).astype(x.dtype)
    if is_np(xp) and np.dtype(x.dtype).kind in "iu" and np.any(np.asarray(y) == 0):
        raise Unsupported("integer Mod by zero")
    return xp.mod(x, y).astype(x.dtype)


def variadic(name):
    """fn(xp, a, *xs): xs folded left with xp.<name>."""
    def fn(xp, a, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = getattr(xp, name)(out, x)
        return out
    fn.__name__ = name
    return fn


def bias_add(xp, a, x, b):
    if str(a.get("data_format", "NHWC")).upper().startswith("NC") and x.ndim > 2:
        return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return x + b


binary = dict(groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(1))
many = dict(groups=E, infer=broadcast_all, min_inputs=1, flops=r.output_flops(1))
op("add", "Add", "AddV2", loop_role="+", **plus_groups(binary, VALUE_RULE), impl=lambda xp, a, x, y: x + y)
op("sub", "Sub", loop_role="-", **plus_groups(binary, VALUE_RULE), impl=lambda xp, a, x, y: x - y)
op("mul", "Mul", **plus_groups(binary, VALUE_RULE), impl=lambda xp, a, x, y: x * y)
op("div", "Div", "RealDiv", **plus_groups(binary, EXPENSIVE, VALUE_RULE), impl=div, sym_value=symv.div)
op("pow", "Pow", **plus_groups(binary, EXPENSIVE), impl=power)
op("max", "Max", "Maximum", **plus_groups(many, VALUE_RULE), impl=variadic("maximum"), sym_value=symv.maximum)
op("min", "Min", "Minimum", **plus_groups(many, VALUE_RULE), impl=variadic("minimum"), sym_value=symv.minimum)
op("sum", "Sum", "AddN", **many, doc="elementwise sum of any number of inputs", impl=variadic("add"))
op("mean", "Mean", **many, doc="elementwise mean of any number of inputs (ONNX Mean)",
   impl=lambda xp, a, *xs: (variadic("add")(xp, a, *xs) / len(xs)).astype(xs[0].dtype))
op("mod", "Mod", "FloorMod", **plus_groups(binary, VALUE_RULE), attrs={"fmod": 0},
   impl=lambda xp, a, x, y: mod(xp, a, x, y),
   doc="fmod=0: the sign of the divisor, fmod=1: of the dividend (tf2xla: FloorMod, TruncateMod)")
op("squared_difference", "SquaredDifference", **binary, impl=lambda xp, a, x, y: (x - y) * (x - y))
op("bias_add", "BiasAdd", groups=E, infer=r.same, min_inputs=2, max_inputs=2, flops=r.output_flops(1),
   doc="x + bias along the channel axis (TF)", impl=bias_add)


# ---- comparisons, logic, select ------------------------------------------------------------------
def compare(ctx: r.Ctx) -> list[TensorType]:
    return [TensorType(broadcast_all(ctx)[0].shape, "bool")]


def _no_strings(xp, x):
    if not is_np(xp) and np.dtype(x.dtype).kind in "OSU":
        raise Unsupported("string tensors (XLA has no string type)")
    return None


def infer_where(ctx: r.Ctx) -> list[TensorType]:
    shape = r.broadcast(r.broadcast(ctx.shape(0), ctx.shape(1)), ctx.shape(2))
    return [TensorType(shape, ctx.dtype(1) or ctx.dtype(2))]


cmp = dict(groups=E, infer=compare, min_inputs=2, max_inputs=2, flops=r.output_flops(1))
op("equal", "Equal", **plus_groups(cmp, VALUE_RULE), impl=lambda xp, a, x, y: _no_strings(xp, x) or xp.equal(x, y),
   sym_value=symv.equal)
op("less", "Less", loop_role="<", **plus_groups(cmp, VALUE_RULE), impl=lambda xp, a, x, y: xp.less(x, y), sym_value=symv.less)
op("greater", "Greater", loop_role=">", **plus_groups(cmp, VALUE_RULE), impl=lambda xp, a, x, y: xp.greater(x, y),
   sym_value=symv.greater)
op("less_equal", "LessOrEqual", "LessEqual", loop_role="<=", **cmp, impl=lambda xp, a, x, y: xp.less_equal(x, y))
op("greater_equal", "GreaterOrEqual", "GreaterEqual", loop_role=">=", **cmp, impl=lambda xp, a, x, y: xp.greater_equal(x, y))
op("xor", "Xor", **cmp, doc="(tf2xla: LogicalAnd, LogicalOr, LogicalNot; tf.math.logical_xor composes them)",
   impl=lambda xp, a, x, y: xp.logical_xor(x, y))
op("and", "And", "LogicalAnd", loop_role="&", **plus_groups(cmp, VALUE_RULE), impl=lambda xp, a, x, y: xp.logical_and(x, y))
op("or", "Or", "LogicalOr", loop_role="|", **plus_groups(cmp, VALUE_RULE), impl=lambda xp, a, x, y: xp.logical_or(x, y))
op("where", "Where", "Select", "SelectV2", groups=(E, VALUE_RULE), infer=infer_where, min_inputs=3, max_inputs=3,
   flops=r.output_flops(1), doc="select(cond, x, y) with broadcasting",
   impl=lambda xp, a, c, x, y: xp.where(c.astype(bool), x, y))


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


# ---- PyTorch's: atan2, not-equal, add with alpha, division with a rounding mode ----------------------------
op("atan2", "Atan2", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(8),
   impl=lambda xp, a, y, x: xp.arctan2(y, x).astype(y.dtype), doc="the angle of (x, y): atan2(y, x)")
op("not_equal", "NotEqual", groups=E, infer=compare, min_inputs=2, max_inputs=2, flops=r.output_flops(1),
   impl=lambda xp, a, x, y: xp.not_equal(x, y))


def div_rounding(xp, a, x, y):
    mode = str(a.get("rounding_mode"))
    if mode == "None":  # true division, in the output's float type
        to = np.dtype(a.get("to") or "float32")
        return (x.astype(to) / xp.asarray(y).astype(to)).astype(to)
    if np.dtype(x.dtype).kind in "iu" and np.dtype(getattr(y, "dtype", x.dtype)).kind in "iu":
        q = xp.floor_divide(x, y)
        if mode == "trunc":  # floor and trunc differ where the signs differ and the division is inexact
            q = xp.where((q < 0) & (q * y != x), q + 1, q)
        return q.astype(x.dtype)
    q = x / y
    return (xp.floor(q) if mode == "floor" else xp.trunc(q)).astype(q.dtype)


op("div_rounding", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(2),
   attrs={"rounding_mode": "trunc", "to": None}, impl=div_rounding,
   doc="x / y rounded toward zero (trunc) or down (floor), integer or float, or (None) true division into the "
       "float type `to` (torch.div with rounding_mode; integers divided)")
op("add_scaled", groups=E, infer=broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(2),
   attrs={"alpha": 1.0}, impl=lambda xp, a, x, y: (x + y * lit(y, a["alpha"])).astype(x.dtype),
   doc="x + alpha * y (torch.add with alpha; torch.sub is alpha negated)")
