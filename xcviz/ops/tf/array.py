"""TensorFlow's padding, gather, reverse and space/batch ops with TF signatures (`tf.<Op>`): Keras emits them.

`Pad(input, paddings)`, `PadV2(input, paddings, constant_values)`, `MirrorPad(input, paddings; mode=REFLECT|
SYMMETRIC)` (ZeroPadding2D, tf.pad), `GatherV2(params, indices, axis; batch_dims)` (every Keras Embedding),
`ReverseV2(tensor, axis)` (go_backwards RNNs), `SpaceToBatchND`/`BatchToSpaceND` (a dilated Conv1D/Conv2D as
Keras lowers it), `Tile`, `Fill`, `BroadcastTo`, `OneHot`, `ArgMax`/`ArgMin`, `Cumsum`, `Select`, `Where`. Paddings, axes and block shapes decide output shapes: constants under XLA."""
from __future__ import annotations

import numpy as np

from .. import rules as r, sym_shapes as sym
from ..arrays import Unsupported, ints, static
from ..registry import LAYOUT, VALUE_RULE, Entries, plus_groups
from .kernels import xla_devices
from .shape import run_type

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops


def _pairs(paddings, what: str) -> list[tuple[int, int]]:
    p = np.asarray(static(paddings, what)).reshape(-1, 2)
    return [(int(a), int(b)) for a, b in p]


def _pad(xp, a, x, paddings):
    return xp.pad(x, _pairs(paddings, "Pad paddings"))


def _pad_v2(xp, a, x, paddings, value):
    return xp.pad(x, _pairs(paddings, "PadV2 paddings"), constant_values=xp.reshape(xp.asarray(value), ()))


def _mirror_pad(xp, a, x, paddings):
    mode = str(a.get("mode") or "REFLECT").upper()
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise Unsupported(f"MirrorPad mode {mode!r} is not REFLECT or SYMMETRIC")
    return xp.pad(x, _pairs(paddings, "MirrorPad paddings"), mode="reflect" if mode == "REFLECT" else "symmetric")


pad = dict(groups=LAYOUT, flops=zero, static_inputs=(1,))
op("tf.Pad", **pad, devices=xla_devices("Pad"), min_inputs=2, max_inputs=2, impl=_pad,
   infer=lambda ctx: run_type(ctx, _pad, (1,)), doc="TF Pad(input, paddings): zeros, paddings an [n, 2] tensor")
op("tf.PadV2", **pad, devices=xla_devices("PadV2"), min_inputs=3, max_inputs=3, impl=_pad_v2,
   infer=lambda ctx: run_type(ctx, _pad_v2, (1,)), doc="TF PadV2(input, paddings, constant_values)")
op("tf.MirrorPad", **pad, devices=xla_devices("MirrorPad"), min_inputs=2, max_inputs=2, attrs={"mode": "REFLECT"},
   impl=_mirror_pad, infer=lambda ctx: run_type(ctx, _mirror_pad, (1,)),
   doc="TF MirrorPad(input, paddings; mode REFLECT (edge not repeated) | SYMMETRIC (edge repeated))")


def _gather(xp, a, params, indices, axis):
    """tf.gather with batch_dims: the first batch_dims axes of params and indices are matched, not gathered.
    Out-of-range indices are an error on CPU in TF; XLA clamps them (as `mode="clip"`)."""
    ax = int(np.asarray(static(axis, "GatherV2 axis")).reshape(()))
    ax = ax % params.ndim if params.ndim else 0
    bd = int(a.get("batch_dims", 0) or 0)
    bd = bd % max(indices.ndim, 1) if bd < 0 else bd
    if bd == 0:
        if isinstance(params, np.ndarray) and isinstance(indices, np.ndarray):
            n = params.shape[ax]
            if indices.size and (indices.min() < -n or indices.max() >= n):
                raise Unsupported(f"GatherV2 index out of range [0, {n}) (TensorFlow raises InvalidArgument on CPU)")
            return np.take(params, np.where(indices < 0, indices + n, indices), axis=ax)
        return xp.take(params, indices, axis=ax, mode="clip")
    # batch_dims > 0: gather per batch element (params[b..., :, ...] with indices[b..., ...])
    lead = params.shape[:bd]
    p = xp.reshape(params, (-1,) + tuple(params.shape[bd:]))
    idx = xp.reshape(indices, (-1,) + tuple(indices.shape[bd:]))
    outs = [xp.take(p[i], idx[i], axis=ax - bd) for i in range(p.shape[0])]
    out = xp.stack(outs) if outs else xp.zeros((0,), params.dtype)
    return xp.reshape(out, tuple(lead) + tuple(out.shape[1:]))


op("tf.GatherV2", groups=VALUE_RULE, devices=xla_devices("GatherV2"), min_inputs=3, max_inputs=3, static_inputs=(2,),
   attrs={"batch_dims": 0}, flops=zero, impl=_gather, infer=lambda ctx: _gather_type(ctx),
   doc="TF GatherV2(params, indices, axis; batch_dims): Keras Embedding is GatherV2(table, ids, 0)")


def _gather_type(ctx):
    from ...ir import TensorType

    p, i, ax = ctx.shape(0), ctx.shape(1), ctx.const(2)
    if p is None or i is None or ax is None:
        return [TensorType(None, ctx.dtype(0))]
    a = int(np.asarray(ax).reshape(())) % max(len(p), 1)
    bd = int(ctx.attrs.get("batch_dims", 0) or 0)
    bd = bd % max(len(i), 1) if bd < 0 else bd
    return [TensorType(tuple(p[:a]) + tuple(i[bd:]) + tuple(p[a + 1:]), ctx.dtype(0))]


def _reverse(xp, a, x, axis):
    axes = tuple(d % x.ndim for d in ints(axis, "ReverseV2 axis"))
    return xp.flip(x, axis=axes) if axes else x


op("tf.ReverseV2", groups=LAYOUT, devices=xla_devices("ReverseV2"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   flops=zero, impl=_reverse, infer=r.same, doc="TF ReverseV2(tensor, axis): reverses the listed axes")


def _space_to_batch(xp, a, x, block, paddings):
    b = ints(block, "SpaceToBatchND block_shape")
    m = len(b)
    p = _pairs(paddings, "SpaceToBatchND paddings")
    x = xp.pad(x, [(0, 0)] + p + [(0, 0)] * (x.ndim - 1 - m))
    n, spatial, rest = x.shape[0], x.shape[1:1 + m], tuple(x.shape[1 + m:])
    shape = [n]
    for s, k in zip(spatial, b):
        shape += [s // k, k]
    x = xp.reshape(x, tuple(shape) + rest)
    # [n, s1/k1, k1, s2/k2, k2, ...] -> [k1, k2, ..., n, s1/k1, s2/k2, ..., rest]
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, x.ndim))
    x = xp.transpose(x, perm)
    return xp.reshape(x, (n * int(np.prod(b)),) + tuple(s // k for s, k in zip(spatial, b)) + rest)


def _batch_to_space(xp, a, x, block, crops):
    b = ints(block, "BatchToSpaceND block_shape")
    m = len(b)
    c = _pairs(crops, "BatchToSpaceND crops")
    n = x.shape[0] // int(np.prod(b))
    spatial, rest = x.shape[1:1 + m], tuple(x.shape[1 + m:])
    x = xp.reshape(x, tuple(b) + (n,) + tuple(spatial) + rest)
    # [k1, k2, ..., n, s1, s2, ...] -> [n, s1, k1, s2, k2, ...]
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, x.ndim))
    x = xp.reshape(xp.transpose(x, perm), (n,) + tuple(s * k for s, k in zip(spatial, b)) + rest)
    index = (slice(None),) + tuple(slice(lo, x.shape[1 + i] - hi) for i, (lo, hi) in enumerate(c))
    return x[index]


op("tf.SpaceToBatchND", groups=LAYOUT, devices=xla_devices("SpaceToBatchND"), min_inputs=3, max_inputs=3,
   static_inputs=(1, 2), flops=zero, impl=_space_to_batch, infer=lambda ctx: run_type(ctx, _space_to_batch, (1, 2)),
   doc="TF SpaceToBatchND(input, block_shape, paddings)")
op("tf.BatchToSpaceND", groups=LAYOUT, devices=xla_devices("BatchToSpaceND"), min_inputs=3, max_inputs=3,
   static_inputs=(1, 2), flops=zero, impl=_batch_to_space, infer=lambda ctx: run_type(ctx, _batch_to_space, (1, 2)),
   doc="TF BatchToSpaceND(input, block_shape, crops)")


def _tile(xp, a, x, multiples):
    return xp.tile(x, tuple(ints(multiples, "Tile multiples")))


def _fill(xp, a, dims, value):
    return xp.full(tuple(ints(dims, "Fill dims")), xp.reshape(xp.asarray(value), ()), dtype=value.dtype)


def _broadcast_to(xp, a, x, shape):
    return xp.broadcast_to(x, tuple(ints(shape, "BroadcastTo shape")))


def _one_hot(xp, a, indices, depth, on, off):
    d = int(np.asarray(static(depth, "OneHot depth")).reshape(()))
    axis = int(a.get("axis", -1))
    hot = xp.expand_dims(indices, -1) == xp.arange(d, dtype=indices.dtype)
    out = xp.where(hot, xp.reshape(on, ()), xp.reshape(off, ()))
    return out if axis == -1 else xp.moveaxis(out, -1, axis)


def _arg(kind: str):
    def impl(xp, a, x, axis):
        ax = int(np.asarray(static(axis, f"{kind} dimension")).reshape(())) % x.ndim
        out = xp.argmax(x, axis=ax) if kind == "ArgMax" else xp.argmin(x, axis=ax)
        return out.astype(np.dtype(a.get("output_type") or "int64"))
    return impl


def _cumsum(xp, a, x, axis):
    ax = int(np.asarray(static(axis, "Cumsum axis")).reshape(())) % x.ndim
    y = xp.flip(x, ax) if a.get("reverse") else x
    out = xp.cumsum(y, axis=ax).astype(x.dtype)
    if a.get("exclusive"):
        out = out - y
    return xp.flip(out, ax) if a.get("reverse") else out


def _select(xp, a, c, x, y):
    if c.ndim == 1 and x.ndim > 1:  # v1 Select: a vector condition picks whole rows
        c = xp.reshape(c, (-1,) + (1,) * (x.ndim - 1))
    return xp.where(c, x, y)


def _where(xp, a, x):
    return np.argwhere(np.asarray(x)).astype(np.int64)


def _typed(fn, slots: tuple[int, ...], dtype_of=None):
    def infer(ctx):
        out = run_type(ctx, fn, slots)
        if dtype_of is not None:
            from ...ir import TensorType

            return [TensorType(t.shape, dtype_of(ctx)) for t in out]
        return out
    return infer


layout = dict(groups=LAYOUT, flops=zero)
valued = plus_groups(layout, VALUE_RULE)  # shape inference computes their values (passes/values.py)
op("tf.Tile", **valued, devices=xla_devices("Tile"), min_inputs=2, max_inputs=2, static_inputs=(1,), impl=_tile,
   infer=_typed(_tile, (1,)), sym_infer=sym.tile, doc="TF Tile(input, multiples)")
op("tf.Fill", **valued, devices=xla_devices("Fill"), min_inputs=2, max_inputs=2, static_inputs=(0,), impl=_fill,
   infer=_typed(_fill, (0,), lambda ctx: ctx.dtype(1)), sym_infer=sym.fill, doc="TF Fill(dims, value)")
op("tf.BroadcastTo", **valued, devices=xla_devices("BroadcastTo"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   impl=_broadcast_to, infer=_typed(_broadcast_to, (1,)), sym_infer=sym.expand, doc="TF BroadcastTo(input, shape)")
op("tf.OneHot", devices=xla_devices("OneHot"), min_inputs=4, max_inputs=4, static_inputs=(1,), flops=zero,
   attrs={"axis": -1}, impl=_one_hot, infer=_typed(_one_hot, (1,), lambda ctx: ctx.dtype(2)),
   doc="TF OneHot(indices, depth, on_value, off_value; axis)")
op("tf.ArgMax", devices=xla_devices("ArgMax"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   flops=r.input_flops(1), attrs={"output_type": "int64"}, impl=_arg("ArgMax"),
   infer=_typed(_arg("ArgMax"), (1,), lambda ctx: ctx.attrs.get("output_type") or "int64"),
   doc="TF ArgMax(input, dimension; output_type)")
op("tf.ArgMin", devices=xla_devices("ArgMin"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   flops=r.input_flops(1), attrs={"output_type": "int64"}, impl=_arg("ArgMin"),
   infer=_typed(_arg("ArgMin"), (1,), lambda ctx: ctx.attrs.get("output_type") or "int64"),
   doc="TF ArgMin(input, dimension; output_type)")
op("tf.Cumsum", devices=xla_devices("Cumsum"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   flops=r.output_flops(1), attrs={"exclusive": False, "reverse": False}, impl=_cumsum, infer=r.same,
   doc="TF Cumsum(x, axis; exclusive, reverse)")
op("tf.Select", devices=xla_devices("Select"), min_inputs=3, max_inputs=3, flops=r.output_flops(1), impl=_select,
   infer=lambda ctx: [ctx.inputs[1]], doc="TF Select(condition, t, e): a vector condition selects rows")
op("tf.Where", devices=frozenset(), min_inputs=1, max_inputs=1, flops=r.input_flops(1), impl=_where,
   infer=r.from_file, reason="data-dependent output shape: xcviz runs it natively (TF's XLA kernel bounds it)",
   doc="TF Where(input) -> int64 [n, rank] coordinates of the true elements (a data-dependent shape: native)")
