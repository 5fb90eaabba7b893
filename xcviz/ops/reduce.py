"""Reductions along axes: reduce_* (incl. L1/L2/log-sum/sum-square), argmax/argmin, cumsum/cumprod and topk."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, is_np, lit, present, static
from .registry import MEAN, REDUCTION, VALUE_RULE, Entries, plus_groups
from .rules import Ctx, norm_axis

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- reduce_* ------------------------------------------------------------------------------------
def infer_reduce(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = ctx.attrs.get("axes")
    if axes is None and ctx.const(1) is not None:
        axes = [int(a) for a in list(ctx.const(1).reshape(-1))]
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if axes is None and ctx.shape(1) is not None and ctx.shape(1) != (0,):
        # axes given as a tensor whose values are not known here: which dims shrink cannot be told
        keep = bool(ctx.attrs.get("keepdims", 1))
        count = ctx.shape(1)[0] if len(ctx.shape(1)) == 1 and isinstance(ctx.shape(1)[0], int) else None
        if keep:
            return [TensorType(tuple(1 if d == 1 else "?" for d in x), ctx.dtype(0))]
        return [TensorType(None if count is None else ("?",) * (len(x) - count), ctx.dtype(0))]
    if not axes and ctx.attrs.get("noop_with_empty_axes"):
        return [TensorType(x, ctx.dtype(0))]
    rank = len(x)
    ax = set(range(rank)) if not axes else {norm_axis(int(a), rank) for a in axes}
    keep = bool(ctx.attrs.get("keepdims", 1))
    shape = tuple((1 if i in ax else d) for i, d in enumerate(x) if keep or i not in ax)
    return [TensorType(shape, ctx.dtype(0))]


def _reduce_axes(a, x, axes_in):
    axes = a.get("axes")
    if axes is None and present(axes_in):
        axes = ints(axes_in, "axes")
    if not axes:
        return None if not a.get("noop_with_empty_axes") else ()
    return tuple(int(v) % x.ndim if x.ndim else 0 for v in axes)


def reducer(name):
    """fn(xp, a, x, axes=None) reducing with xp.<name>, with ONNX's rules for empty inputs."""
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
    return fn


red = dict(groups=REDUCTION, infer=infer_reduce, min_inputs=1, max_inputs=2, attrs={"axes": None, "keepdims": 1},
           static_inputs=(1,))
op("reduce_mean", "ReduceMean", flops=r.input_flops(1), **plus_groups(red, MEAN), impl=reducer("mean"),
   cost_class="reduce", fusion="reduce")
op("reduce_sum", "ReduceSum", flops=r.input_flops(1), **plus_groups(red, VALUE_RULE), impl=reducer("sum"),
   cost_class="reduce", fusion="reduce")
op("reduce_max", "ReduceMax", flops=r.input_flops(1), **red, impl=reducer("max"), cost_class="reduce", fusion="reduce")
op("reduce_min", "ReduceMin", flops=r.input_flops(1), **red, impl=reducer("min"), cost_class="reduce", fusion="reduce")
op("reduce_prod", "ReduceProd", "Prod", flops=r.input_flops(1), **plus_groups(red, VALUE_RULE), impl=reducer("prod"),
   cost_class="reduce", fusion="reduce")


# ---- argmax / argmin -----------------------------------------------------------------------------
def infer_arg_reduce(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, "int64")]
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    keep = bool(ctx.attrs.get("keepdims", 1))
    shape = tuple((1 if i == ax else d) for i, d in enumerate(x) if keep or i != ax)
    return [TensorType(shape, "int64")]


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
    return fn


arg = dict(groups=REDUCTION, infer=infer_arg_reduce, flops=r.input_flops(1), min_inputs=1, max_inputs=1,
           attrs={"axis": 0, "keepdims": 1})
op("argmax", "ArgMax", **arg, impl=arg_reduce("max"), cost_class="reduce", fusion="reduce")
op("argmin", "ArgMin", **arg, impl=arg_reduce("min"), cost_class="reduce", fusion="reduce")


# ---- cumsum --------------------------------------------------------------------------------------
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


op("cumsum", "CumSum", "Cumsum", infer=r.same, flops=r.input_flops(1), min_inputs=2, max_inputs=2,
   attrs={"exclusive": 0, "reverse": 0}, static_inputs=(1,), impl=cumsum, cost_class="reduce", fusion="reduce")


# ---- topk ----------------------------------------------------------------------------------------
def infer_topk(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    k = ctx.attrs.get("k")
    if k is None and ctx.const(1) is not None:
        k = int(ctx.const(1).reshape(-1)[0])
    if x is None or k is None:
        return [TensorType(None, ctx.dtype(0)), TensorType(None, "int64")]
    ax = norm_axis(int(ctx.attrs.get("axis", -1)), len(x))
    shape = tuple(k if i == ax else d for i, d in enumerate(x))
    return [TensorType(shape, ctx.dtype(0)), TensorType(shape, "int64")]


def topk(xp, a, x, k=None):
    kk = a.get("k")
    if kk is None:
        if not present(k):
            raise Unsupported("TopK needs k (attribute or constant input)")
        kk = ints(k, "TopK k")[0]
    axis = int(a.get("axis", -1)) % x.ndim
    key = x.astype(np.int64) if np.dtype(x.dtype).kind == "u" else x
    if int(a.get("largest", 1)):
        key = -key
    idx = np.argsort(key, axis=axis, kind="stable") if is_np(xp) else xp.argsort(key, axis=axis, stable=True)
    idx = xp.take(idx, np.arange(kk), axis=axis)
    return xp.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


op("topk", "TopK", "TopKV2", infer=infer_topk, flops=r.input_flops(4), min_inputs=1, max_inputs=2, num_outputs=2,
   attrs={"axis": -1, "largest": 1, "sorted": 1}, static_inputs=(1,), impl=topk,
   doc="k must be a constant (attribute or constant input); XLA sorts with a static k",
   cost_class="reduce", fusion="reduce")


# ---- reduce_* built from an elementwise step, a sum and a final step -------------------------------
def _float_only(x, name):
    if np.dtype(x.dtype).kind != "f" and not str(x.dtype).startswith("bfloat"):
        raise Unsupported(f"{name} of a {x.dtype} tensor (defined for floats: it takes a log)",
                          hint="cast the input to a float type")


def _sum(xp, a, x, axes_in):
    """Sum of x over the node's axes; axes () (noop_with_empty_axes and no axes) sums nothing, as onnx does."""
    axes = _reduce_axes(a, x, axes_in)
    return xp.sum(x, axis=axes, keepdims=bool(a.get("keepdims", 1))).astype(x.dtype)


def reduce_sum_square(xp, a, x, axes=None):
    return _sum(xp, a, x * x, axes)


def reduce_l1(xp, a, x, axes=None):
    return _sum(xp, a, xp.abs(x), axes)


def reduce_l2(xp, a, x, axes=None):
    return xp.sqrt(_sum(xp, a, x * x, axes).astype(np.float64 if np.dtype(x.dtype).kind in "iub" else x.dtype)
                   ).astype(x.dtype)


def reduce_log_sum(xp, a, x, axes=None):
    _float_only(x, "ReduceLogSum")
    with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, the empty set's value too
        return xp.log(_sum(xp, a, x, axes))


def reduce_log_sum_exp(xp, a, x, axes=None):
    """log(sum(exp(x - m))) + m with m the finite maximum (stable; onnx's reference does the same)."""
    _float_only(x, "ReduceLogSumExp")
    keep = bool(a.get("keepdims", 1))
    axes_t = _reduce_axes(a, x, axes)
    if x.size == 0:
        shape = np.sum(np.zeros(x.shape, np.float32), axis=axes_t, keepdims=keep).shape
        return xp.full(shape, -np.inf, dtype=x.dtype)
    m = xp.max(xp.where(xp.isinf(x), lit(x, -np.inf), x), axis=axes_t, keepdims=True)
    m = xp.where(xp.isfinite(m), m, lit(x, 0))
    with np.errstate(divide="ignore"):
        s = xp.log(xp.sum(xp.exp(x - m), axis=axes_t, keepdims=True)) + m
    if not keep:
        s = s.reshape(np.sum(np.zeros(x.shape, np.float32), axis=axes_t, keepdims=False).shape)
    return s.astype(x.dtype)


stepped = dict(groups=REDUCTION, infer=infer_reduce, min_inputs=1, max_inputs=2, static_inputs=(1,),
               attrs={"axes": None, "keepdims": 1, "noop_with_empty_axes": 0})
op("reduce_sum_square", "ReduceSumSquare", flops=r.input_flops(2), **stepped, impl=reduce_sum_square)
op("reduce_l1", "ReduceL1", flops=r.input_flops(2), **stepped, impl=reduce_l1)
op("reduce_l2", "ReduceL2", flops=r.input_flops(2), **stepped, impl=reduce_l2)
op("reduce_log_sum", "ReduceLogSum", flops=r.input_flops(1), **stepped, impl=reduce_log_sum,
   doc="float inputs only (onnx removed the integer types: it takes a log)")
op("reduce_log_sum_exp", "ReduceLogSumExp", flops=r.input_flops(4), **stepped, impl=reduce_log_sum_exp,
   doc="float inputs only; computed as log(sum(exp(x - max))) + max")


# ---- cumprod -------------------------------------------------------------------------------------
def cumprod(xp, a, x, axis):
    ax = int(static(axis, "CumProd axis").reshape(-1)[0]) % x.ndim
    if a.get("reverse"):
        x = xp.flip(x, ax)
    out = xp.cumprod(x, axis=ax).astype(x.dtype)
    if a.get("exclusive"):  # shift by one along the axis, 1 first (no division: x may hold zeros)
        head = [slice(None)] * x.ndim
        head[ax] = slice(0, max(x.shape[ax] - 1, 0))
        ones = xp.ones(x.shape[:ax] + (min(x.shape[ax], 1),) + x.shape[ax + 1:], dtype=x.dtype)
        out = xp.concatenate([ones, out[tuple(head)]], axis=ax)
    if a.get("reverse"):
        out = xp.flip(out, ax)
    return out


op("cumprod", "CumProd", infer=r.same, flops=r.input_flops(1), min_inputs=2, max_inputs=2,
   attrs={"exclusive": 0, "reverse": 0}, static_inputs=(1,), impl=cumprod)
