"""Activation functions beyond elementwise.py's: Celu, Mish, Shrink, PRelu and the gated SwiGLU."""
from __future__ import annotations

import numpy as np

from . import rules as r
from .arrays import Unsupported, lit
from .registry import ELEMENTWISE, Entries

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

E = ELEMENTWISE


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


# ---- gated activations ------------------------------------------------------------------------
def swiglu(xp, a, x, gate):
    if x.shape != gate.shape:
        raise Unsupported(f"SwiGLU inputs of shapes {x.shape} and {gate.shape} (ONNX does not broadcast them)")
    alpha = lit(x, float(a.get("alpha", 1.0)))
    return (x * (lit(x, 1) / (lit(x, 1) + xp.exp(-alpha * x))).astype(x.dtype) * gate).astype(x.dtype)


op("swiglu", "SwiGLU", infer=r.same, flops=r.input_flops(5), min_inputs=2, max_inputs=2, attrs={"alpha": 1.0},
   impl=swiglu, doc="a * sigmoid(alpha * a) * b, a and b of one shape")
