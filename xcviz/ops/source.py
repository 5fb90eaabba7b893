"""Sources and shape queries: const, placeholder, shape, size, rank, and the ordering-only noop."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, np_dtype
from .registry import NOOP, SHAPE_CONSUMER, SOURCE, ZERO_SIZE, op
from .rules import Ctx

NONE = frozenset()
zero = r.zero_flops


def infer_constant(ctx: Ctx) -> list[TensorType]:
    value = ctx.attrs.get("value")
    if value is None:
        return [ctx.outputs[0] if ctx.outputs else TensorType()]
    arr = np.asarray(value, dtype=ctx.attrs.get("dtype") or None)
    if arr.dtype == np.float64 and not ctx.attrs.get("dtype"):
        arr = arr.astype(np.float32)
    return [TensorType(tuple(arr.shape), str(arr.dtype) if arr.dtype.kind != "U" else "string")]


def const(xp, a):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        v = a.get(key)
        if v is None:
            continue
        dtype = a.get("dtype")
        arr = np.asarray(v, dtype=np_dtype(dtype) if dtype else None)
        if key.startswith("value_int"):
            arr = arr.astype(np.int64)
        elif arr.dtype == np.float64 and not dtype:
            arr = arr.astype(np.float32)
        return arr
    if a.get("value_string") is not None or a.get("value_strings") is not None:
        return np.asarray(a.get("value_string") or a.get("value_strings"), dtype=object)
    raise Unsupported("Constant without a value")


op("const", "Constant", "Const", groups=(SOURCE, ZERO_SIZE), infer=infer_constant, flops=zero, max_inputs=0,
   attrs={"value": None, "dtype": None}, folds=True, impl=const,
   doc="a constant tensor; counts 0 toward effective cluster size")
op("placeholder", "Placeholder", "_Arg", groups=SOURCE, devices=NONE, max_inputs=0,
   reason="graph argument (like TF's _Arg): fed from outside", flops=zero)


def infer_shape_of(ctx: Ctx) -> list[TensorType]:
    rank = ctx.rank(0)
    if rank is None:
        return [TensorType(None, "int64")]
    start, end = ctx.attrs.get("start"), ctx.attrs.get("end")
    return [TensorType((len(range(rank)[slice(start, end)]),), "int64")]


def shape(xp, a, x):
    s = list(x.shape)
    start, end = a.get("start"), a.get("end")
    return np.asarray(s[slice(start, end)], dtype=np.int64)


def scalar_int(ctx: Ctx) -> list[TensorType]:
    return [TensorType((), "int64")]


query = dict(groups=SHAPE_CONSUMER, flops=zero, min_inputs=1, max_inputs=1)
op("shape", "Shape", **query, infer=infer_shape_of, folds=True, impl=shape)
op("size", "Size", **query, infer=scalar_int,
   impl=lambda xp, a, x: np.asarray(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int64))
op("rank", "Rank", **query, infer=scalar_int, impl=lambda xp, a, x: np.asarray(x.ndim, dtype=np.int64))
op("noop", "NoOp", groups=NOOP, infer=lambda ctx: [], num_outputs=0, flops=zero, doc="ordering only",
   impl=lambda xp, a, *xs: ())
