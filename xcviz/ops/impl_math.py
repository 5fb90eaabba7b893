"""Elementwise, linear-algebra and reduction implementations, each written once over `xp` (numpy or jax.numpy)."""
from __future__ import annotations

import math

import numpy as np

from .impl import Impl, Unsupported, ints, is_np, np_dtype, present, static


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


def _f(x, v):
    """A Python scalar as an array of x's dtype (keeps float32 float32 in both namespaces)."""
    return np.asarray(v, dtype=x.dtype)


def _no_strings(xp, x):
    if not is_np(xp) and np.dtype(x.dtype).kind in "OSU":
        raise Unsupported("string tensors (XLA has no string type)")
    return None


def unary(fn):
    return Impl(lambda xp, a, x: fn(xp, a, x))


def gelu(xp, a, x):
    if str(a.get("approximate", "none")) == "tanh":
        inner = _f(x, math.sqrt(2 / math.pi)) * (x + _f(x, 0.044715) * x * x * x)
        return _f(x, 0.5) * x * (_f(x, 1) + xp.tanh(inner))
    return _f(x, 0.5) * x * (_f(x, 1) + _erf(xp, x / _f(x, math.sqrt(2))))


def sigmoid(xp, x):
    return _f(x, 1) / (_f(x, 1) + xp.exp(-x))


def clip(xp, a, x, lo=None, hi=None):
    lo = lo if present(lo) else a.get("min")
    hi = hi if present(hi) else a.get("max")
    if lo is not None:
        x = xp.maximum(x, xp.asarray(lo, dtype=x.dtype))
    if hi is not None:
        x = xp.minimum(x, xp.asarray(hi, dtype=x.dtype))
    return x


def cast(xp, a, x):
    to = a.get("to", a.get("DstT"))
    if to is None:
        raise Unsupported("Cast needs a `to` attribute")
    dt = np_dtype(to)
    if dt.itemsize < 2 and dt.kind not in "iub" or dt.name.startswith(("bfloat16", "float8", "int4", "uint4", "int2", "uint2")) \
            or str(x.dtype).startswith(("bfloat16", "float8", "int4", "uint4", "int2", "uint2")):
        raise Unsupported(f"Cast between {x.dtype} and {dt} (sub-16-bit and bfloat16 rounding rules are not implemented)")
    if x.dtype == dt:
        return x
    if dt.kind in "iu" and x.dtype.kind == "f" and is_np(xp):
        with np.errstate(invalid="ignore"):
            return x.astype(dt)
    return x.astype(dt)


def div(xp, a, x, y):
    if np.dtype(x.dtype).kind in "iu":
        return xp.trunc(x / y).astype(x.dtype) if is_np(xp) else (x / y).astype(x.dtype)
    return x / y


def power(xp, a, x, y):
    if np.dtype(x.dtype).kind == "f":
        return xp.power(x, y.astype(x.dtype) if hasattr(y, "astype") else y).astype(x.dtype)
    return xp.power(x, y).astype(x.dtype)


def variadic(name):
    def fn(xp, a, *xs):
        out = xs[0]
        for x in xs[1:]:
            out = getattr(xp, name)(out, x)
        return out
    fn.__name__ = name
    return Impl(fn)


def bias_add(xp, a, x, b):
    if str(a.get("data_format", "NHWC")).upper().startswith("NC") and x.ndim > 2:
        return x + b.reshape((1, -1) + (1,) * (x.ndim - 2))
    return x + b


def where(xp, a, c, x, y):
    return xp.where(c.astype(bool), x, y)


IMPLS: dict[str, Impl] = {
    "relu": unary(lambda xp, a, x: xp.maximum(x, _f(x, 0))),
    "relu6": unary(lambda xp, a, x: xp.minimum(xp.maximum(x, _f(x, 0)), _f(x, 6))),
    "gelu": Impl(gelu),
    "sigmoid": unary(lambda xp, a, x: sigmoid(xp, x)),
    "tanh": unary(lambda xp, a, x: xp.tanh(x)),
    "exp": unary(lambda xp, a, x: xp.exp(x)),
    "log": unary(lambda xp, a, x: xp.log(x)),
    "sqrt": unary(lambda xp, a, x: xp.sqrt(x)),
    "rsqrt": unary(lambda xp, a, x: _f(x, 1) / xp.sqrt(x)),
    "reciprocal": unary(lambda xp, a, x: _f(x, 1) / x),
    "neg": unary(lambda xp, a, x: -x),
    "abs": unary(lambda xp, a, x: xp.abs(x)),
    "erf": unary(lambda xp, a, x: _erf(xp, x)),
    "floor": unary(lambda xp, a, x: xp.floor(x)),
    "ceil": unary(lambda xp, a, x: xp.ceil(x)),
    "sin": unary(lambda xp, a, x: xp.sin(x)),
    "cos": unary(lambda xp, a, x: xp.cos(x)),
    "softplus": unary(lambda xp, a, x: xp.log(xp.exp(x) + _f(x, 1))),
    "leaky_relu": unary(lambda xp, a, x: xp.where(x < 0, x * _f(x, a.get("alpha", 0.01)), x)),
    "elu": unary(lambda xp, a, x: xp.where(x < 0, _f(x, a.get("alpha", 1.0)) * (xp.exp(x) - _f(x, 1)), x)),
    "hard_sigmoid": unary(lambda xp, a, x: xp.clip(x * _f(x, a.get("alpha", 0.2)) + _f(x, a.get("beta", 0.5)),
                                                    _f(x, 0), _f(x, 1))),
    "hard_swish": unary(lambda xp, a, x: x * xp.clip(x / _f(x, 6) + _f(x, 0.5), _f(x, 0), _f(x, 1))),
    "silu": unary(lambda xp, a, x: x * sigmoid(xp, x)),
    "not": unary(lambda xp, a, x: xp.logical_not(x)),
    "clip": Impl(clip),
    "cast": Impl(cast),
    "add": Impl(lambda xp, a, x, y: x + y),
    "sub": Impl(lambda xp, a, x, y: x - y),
    "mul": Impl(lambda xp, a, x, y: x * y),
    "div": Impl(div),
    "pow": Impl(power),
    "max": variadic("maximum"),
    "min": variadic("minimum"),
    "sum": variadic("add"),
    "mean": Impl(lambda xp, a, *xs: (variadic("add").fn(xp, a, *xs) / len(xs)).astype(xs[0].dtype)),
    "squared_difference": Impl(lambda xp, a, x, y: (x - y) * (x - y)),
    "bias_add": Impl(bias_add),
    "equal": Impl(lambda xp, a, x, y: _no_strings(xp, x) or xp.equal(x, y)),
    "less": Impl(lambda xp, a, x, y: xp.less(x, y)),
    "greater": Impl(lambda xp, a, x, y: xp.greater(x, y)),
    "and": Impl(lambda xp, a, x, y: xp.logical_and(x, y)),
    "or": Impl(lambda xp, a, x, y: xp.logical_or(x, y)),
    "where": Impl(where),
}


# ---- linear algebra and reductions ---------------------------------------------------------------
def _swap(x):
    return xp_swap(x) if x.ndim >= 2 else x


def xp_swap(x):
    return x.swapaxes(-1, -2)


def matmul(xp, a, x, y):
    if a.get("transpose_a") or a.get("adj_x"):
        x = _swap(x)
    if a.get("transpose_b") or a.get("adj_y"):
        y = _swap(y)
    return xp.matmul(x, y)


def gemm(xp, a, x, y, c=None):
    if a.get("transA"):
        x = x.T
    if a.get("transB"):
        y = y.T
    out = xp.matmul(x, y)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    if alpha != 1.0:
        out = out * _f(out, alpha)
    if present(c):
        out = out + (c * _f(c, beta) if beta != 1.0 else c)
    return out


def einsum(xp, a, *xs):
    if any(str(x.dtype) == "bfloat16" for x in xs):
        raise Unsupported("Einsum on bfloat16")
    return xp.einsum(str(a.get("equation", "")).replace(" ", ""), *xs)


def _reduce_axes(a, x, axes_in):
    axes = a.get("axes")
    if axes is None and present(axes_in):
        axes = ints(axes_in, "axes")
    if not axes:
        return None if not a.get("noop_with_empty_axes") else ()
    return tuple(int(v) % x.ndim if x.ndim else 0 for v in axes)


def reducer(name):
    def fn(xp, a, x, axes_in=None):
        axes = _reduce_axes(a, x, axes_in)
        if axes == ():
            return x
        keep = bool(a.get("keepdims", 1))
        if name == "mean" and is_np(xp) and x.size == 0:
            return np.full(np.sum(x, axis=axes, keepdims=keep).shape, np.nan, dtype=x.dtype)
        if name in ("max", "min") and x.size == 0:
            # ONNX: max/min over an empty set is the identity element (-inf / +inf, or the int/bool bound)
            kind = np.dtype(x.dtype).kind
            big = True if kind == "b" else (np.inf if kind == "f" else np.iinfo(x.dtype).max)
            low = False if kind == "b" else (-np.inf if kind == "f" else np.iinfo(x.dtype).min)
            init = low if name == "max" else big
            shape = np.sum(np.zeros(x.shape, np.float32), axis=axes, keepdims=keep).shape
            return xp.full(shape, init, dtype=x.dtype)
        out = getattr(xp, name)(x, axis=axes, keepdims=keep)
        return out.astype(x.dtype)
    fn.__name__ = f"reduce_{name}"
    return Impl(fn, static=(1,))


def arg_reduce(kind):
    def fn(xp, a, x):
        axis = int(a.get("axis", 0)) % max(x.ndim, 1)
        keep = bool(a.get("keepdims", 1))
        f = xp.argmax if kind == "max" else xp.argmin
        if a.get("select_last_index"):
            out = x.shape[axis] - 1 - f(xp.flip(x, axis), axis=axis)
        else:
            out = f(x, axis=axis)
        out = out.astype(np.int64)
        return xp.expand_dims(out, axis) if keep else out
    fn.__name__ = f"arg{kind}"
    return Impl(fn)


def cumsum(xp, a, x, axis):
    ax = int(static(axis, "CumSum axis").reshape(-1)[0]) % x.ndim
    if a.get("reverse"):
        x = xp.flip(x, ax)
    out = xp.cumsum(x, axis=ax).astype(x.dtype)
    if a.get("exclusive"):
        out = out - x
    if a.get("reverse"):
        out = xp.flip(out, ax)
    return out


def topk(xp, a, x, k=None):
    kk = a.get("k")
    if kk is None:
        if not present(k):
            raise Unsupported("TopK needs k (attribute or constant input)")
        kk = ints(k, "TopK k")[0]
    axis = int(a.get("axis", -1)) % x.ndim
    if not int(a.get("sorted", 1)) and False:
        raise Unsupported("unsorted TopK")
    key = x.astype(np.int64) if np.dtype(x.dtype).kind == "u" else x
    if int(a.get("largest", 1)):
        key = -key
    idx = np.argsort(key, axis=axis, kind="stable") if is_np(xp) else xp.argsort(key, axis=axis, stable=True)
    idx = xp.take(idx, np.arange(kk), axis=axis)
    return xp.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


IMPLS.update({
    "matmul": Impl(matmul),
    "gemm": Impl(gemm),
    "einsum": Impl(einsum),
    "reduce_mean": reducer("mean"),
    "reduce_sum": reducer("sum"),
    "reduce_max": reducer("max"),
    "reduce_min": reducer("min"),
    "reduce_prod": reducer("prod"),
    "argmax": arg_reduce("max"),
    "argmin": arg_reduce("min"),
    "cumsum": Impl(cumsum, static=(1,)),
    "topk": Impl(topk, static=(1,)),
})
