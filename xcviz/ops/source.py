"""Sources and shape queries: const, placeholder, eye_like, shape, size, rank, and the ordering-only noop."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r, sym_shapes as sym
from .arrays import Unsupported, is_np, np_dtype, static
from .registry import (
    NOOP, PARAMETER_SOURCE, SHAPE_CONSUMER, SOURCE, TYPE_VALUE, VALUE_RULE, ZERO_SIZE, Entries, plus_groups,
)
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

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


op("const", "Constant", "Const", loop_role="const", groups=(SOURCE, ZERO_SIZE, PARAMETER_SOURCE), infer=infer_constant, flops=zero,
   max_inputs=0,
   attrs={"value": None, "dtype": None}, folds=True, impl=const,
   doc="a constant tensor; counts 0 toward effective cluster size", cost_class="free", fusion="free")
op("placeholder", "Placeholder", "_Arg", "tf._Arg", groups=SOURCE, devices=NONE, max_inputs=0,
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
op("shape", "Shape", **plus_groups(query, TYPE_VALUE), infer=infer_shape_of, folds=True, impl=shape, cost_class="free",
   fusion="free")
op("size", "Size", **plus_groups(query, TYPE_VALUE), infer=scalar_int,
   impl=lambda xp, a, x: np.asarray(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int64),
   cost_class="free", fusion="free")
op("rank", "Rank", **plus_groups(query, TYPE_VALUE), infer=scalar_int,
   impl=lambda xp, a, x: np.asarray(x.ndim, dtype=np.int64),
   cost_class="free", fusion="free")
op("noop", "NoOp", groups=NOOP, infer=lambda ctx: [], num_outputs=0, flops=zero, doc="ordering only",
   impl=lambda xp, a, *xs: (), cost_class="free", fusion="free")


# ---- value-shaped sources: the output's shape is an input's VALUE, a compile-time constant under XLA --------
def infer_constant_of_shape(ctx: Ctx) -> list[TensorType]:
    value = ctx.attrs.get("value")
    dtype = str(np.asarray(value).dtype) if value is not None else "float32"
    dims = ctx.const(0)
    if dims is None:
        n = ctx.shape(0)
        known = n is not None and len(n) == 1 and isinstance(n[0], int)
        return [TensorType(tuple(f"d{i}" for i in range(n[0])) if known else None, dtype)]
    # a shape computed from symbolic sizes holds their names ('batch'): they stay symbolic dimensions
    return [TensorType(tuple(d if isinstance(d, str) else int(d) for d in np.asarray(dims).reshape(-1).tolist()),
                       dtype)]


def constant_of_shape(xp, a, dims):
    value = a.get("value")
    v = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    shape = tuple(int(d) for d in static(dims, "ConstantOfShape shape").reshape(-1))
    if any(d < 0 for d in shape):
        raise Unsupported(f"ConstantOfShape with a negative dimension {shape}")
    return np.full(shape, v[0], dtype=v.dtype)  # static shape and value: a constant under XLA


op("constant_of_shape", "ConstantOfShape", infer=infer_constant_of_shape, sym_infer=sym.constant_of_shape, flops=zero,
   min_inputs=1,    max_inputs=1, attrs={"value": None}, static_inputs=(0,), impl=constant_of_shape,
   doc="a tensor of `value` (default float32 0) shaped by its input's value (tf2xla: Fill, shape a constant)",
   fusion="broadcast", groups=VALUE_RULE)


def _range_len(start, limit, delta) -> int:
    return max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)


def infer_range(ctx: Ctx) -> list[TensorType]:
    vals = [ctx.const(i) for i in range(3)]
    dtype = ctx.dtype(0) or ctx.dtype(1)
    if any(v is None for v in vals):
        return [TensorType(("range",), dtype)]
    return [TensorType((_range_len(*(np.asarray(v).reshape(()) for v in vals)),), dtype)]


def range_(xp, a, start, limit, delta):
    s, l, d = (static(v, "Range bound").reshape(()) for v in (start, limit, delta))
    if float(d) == 0:
        raise Unsupported("Range with delta 0")
    n = _range_len(s, l, d)
    # every value is static: computed once in NumPy (a constant under XLA, like TF's Range on constant bounds)
    if s.dtype.kind in "iu":
        return np.arange(int(s), int(s) + n * int(d), int(d), dtype=s.dtype)[:n]
    return (s + np.arange(n, dtype=np.float64) * d.astype(np.float64)).astype(s.dtype)


op("range", "Range", infer=infer_range, sym_infer=sym.range_, flops=r.output_flops(1), min_inputs=3,
   max_inputs=3, static_inputs=(0, 1, 2), impl=range_,
   doc="start + i * delta for i < ceil((limit - start) / delta) (tf2xla: Range, bounds constants)", groups=VALUE_RULE)


# ---- EyeLike -------------------------------------------------------------------------------------
def _eye_dtype(a: dict, x_dtype):
    dt = a.get("dtype")
    return np_dtype(dt) if dt is not None else np.dtype(x_dtype)


def infer_eye_like(ctx: r.Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    dt = ctx.attrs.get("dtype")
    try:
        dtype = canonical_dtype(str(np_dtype(dt))) if dt is not None else ctx.dtype(0)
    except Unsupported:
        dtype = None
    return [TensorType(ctx.shape(0), dtype)]


def eye_like(xp, a, x):
    if x.ndim != 2:
        raise Unsupported(f"EyeLike takes a 2-D tensor, not rank {x.ndim}")
    dt = _eye_dtype(a, x.dtype)
    if is_np(xp):
        return np.eye(x.shape[0], x.shape[1], k=int(a.get("k", 0)), dtype=dt)
    return xp.eye(x.shape[0], x.shape[1], k=int(a.get("k", 0)), dtype=dt)


op("eye_like", "EyeLike", infer=infer_eye_like, min_inputs=1, max_inputs=1, flops=r.zero_flops, attrs={"k": 0},
   impl=eye_like, doc="ones on diagonal k of a matrix shaped like the input, zeros elsewhere")
