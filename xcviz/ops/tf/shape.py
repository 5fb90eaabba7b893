"""TensorFlow's layout ops with TF signatures (`tf.<Op>`): shapes, axes and slices arrive as inputs.

`Reshape(tensor, shape)`, `Transpose(x, perm)`, `ConcatV2(values..., axis)`, `Pack`/`Unpack(value; num, axis)`,
`Split(axis, value; num_split)`, `SplitV(value, size_splits, axis)`, `StridedSlice(input, begin, end,
strides; begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)`, `Squeeze`, `ExpandDims`, `Range`.
Inputs that decide an output shape must be constants under XLA."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import Unsupported, ints, static
from ..registry import LAYOUT, Entries
from ..rules import Ctx
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops


def run_type(ctx: Ctx, fn, static_slots: tuple[int, ...]) -> list[TensorType]:
    """Output types by running the NumPy reference on zero arrays of the input shapes (constants where known)."""
    args = []
    for i, t in enumerate(ctx.inputs):
        c = ctx.const(i) if i in static_slots else None
        if c is not None:
            args.append(np.asarray(c))
        elif i in static_slots or t.shape is None or any(isinstance(d, str) for d in t.shape):
            return [TensorType(None, ctx.dtype(0))] * max(ctx.num_outputs, 1)
        else:
            args.append(np.zeros(t.shape, dtype=np.float32))
    try:
        out = fn(np, ctx.attrs, *args)
    except Unsupported:
        return [TensorType(None, ctx.dtype(0))] * max(ctx.num_outputs, 1)
    outs = out if isinstance(out, (tuple, list)) else [out]
    data_dtype = ctx.dtype(1) if fn is _split else ctx.dtype(0)
    return [TensorType(tuple(int(d) for d in np.shape(o)), data_dtype) for o in outs]


def _reshape(xp, a, x, shape):
    return xp.reshape(x, tuple(ints(shape, "Reshape shape")))


def _transpose(xp, a, x, perm):
    return xp.transpose(x, tuple(ints(perm, "Transpose perm")))


def _concat(xp, a, *xs):
    axis = int(static(xs[-1], "ConcatV2 axis").reshape(()))
    return xp.concatenate(xs[:-1], axis=axis)


def _pack(xp, a, *xs):
    return xp.stack(xs, axis=int(a.get("axis", 0)))


def _unpack(xp, a, x):
    axis = int(a.get("axis", 0)) % x.ndim
    return tuple(xp.take(x, i, axis=axis) for i in range(x.shape[axis]))


def _split(xp, a, axis, x):
    return tuple(xp.split(x, int(a.get("num_split", 1)), axis=int(static(axis, "Split axis").reshape(()))))


def _split_v(xp, a, x, sizes, axis):
    ax = int(static(axis, "SplitV axis").reshape(())) % x.ndim
    s = ints(sizes, "SplitV size_splits")
    if -1 in s:
        s[s.index(-1)] = x.shape[ax] - (sum(s) + 1)
    return tuple(xp.split(x, list(np.cumsum(s)[:-1]), axis=ax))


def _squeeze(xp, a, x):
    dims = a.get("squeeze_dims") or []
    axes = tuple(int(d) % x.ndim for d in dims) if dims else tuple(i for i, d in enumerate(x.shape) if d == 1)
    return xp.squeeze(x, axis=axes)


def _expand_dims(xp, a, x, axis):
    return xp.expand_dims(x, int(static(axis, "ExpandDims axis").reshape(())))


def _strided_slice(xp, a, x, begin, end, strides):
    b, e, s = ints(begin, "StridedSlice begin"), ints(end, "StridedSlice end"), ints(strides, "StridedSlice strides")
    bm, em, elm, nm, sm = (int(a.get(k, 0)) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                       "shrink_axis_mask"))
    index: list = []
    for i in range(len(b)):
        if elm >> i & 1:
            index.append(Ellipsis)
        elif nm >> i & 1:
            index.append(None)
        elif sm >> i & 1:
            index.append(b[i])
        else:
            index.append(slice(None if bm >> i & 1 else b[i], None if em >> i & 1 else e[i], s[i]))
    return x[tuple(index)]


layout = dict(groups=LAYOUT, flops=zero)
op("tf.Reshape", **layout, devices=xla_devices("Reshape"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   infer=lambda ctx: run_type(ctx, _reshape, (1,)), impl=_reshape, doc="TF Reshape(tensor, shape)", cost_class="free")
op("tf.Transpose", **layout, devices=xla_devices("Transpose"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   infer=lambda ctx: run_type(ctx, _transpose, (1,)), impl=_transpose, doc="TF Transpose(x, perm)",
   cost_class="movement")
op("tf.ConcatV2", **layout, devices=xla_devices("ConcatV2"), min_inputs=2, attrs={"N": None},
   infer=lambda ctx: run_type(ctx, _concat, (len(ctx.inputs) - 1,)), impl=_concat,
   doc="TF ConcatV2(values..., axis): the axis is the last input", cost_class="movement")
op("tf.Pack", **layout, devices=xla_devices("Pack"), min_inputs=1, attrs={"axis": 0, "N": None},
   infer=lambda ctx: run_type(ctx, _pack, ()), impl=_pack, doc="TF Pack(values...; axis)", cost_class="movement")
op("tf.Unpack", **layout, devices=xla_devices("Unpack"), min_inputs=1, max_inputs=1, num_outputs=None,
   attrs={"axis": 0, "num": None}, infer=lambda ctx: run_type(ctx, _unpack, ()), impl=_unpack,
   doc="TF Unpack(value; num, axis): `num` outputs", cost_class="movement")
op("tf.Split", **layout, devices=xla_devices("Split"), min_inputs=2, max_inputs=2, num_outputs=None,
   static_inputs=(0,), attrs={"num_split": 1}, infer=lambda ctx: run_type(ctx, _split, (0,)), impl=_split,
   doc="TF Split(axis, value; num_split): the axis comes first", cost_class="movement")
op("tf.SplitV", **layout, devices=xla_devices("SplitV"), min_inputs=3, max_inputs=3, num_outputs=None,
   static_inputs=(1, 2), attrs={"num_split": 1}, infer=lambda ctx: run_type(ctx, _split_v, (1, 2)),
   impl=_split_v, doc="TF SplitV(value, size_splits, axis)", cost_class="movement")
op("tf.Squeeze", **layout, devices=xla_devices("Squeeze"), min_inputs=1, max_inputs=1, attrs={"squeeze_dims": None},
   infer=lambda ctx: run_type(ctx, _squeeze, ()), impl=_squeeze, doc="TF Squeeze(input; squeeze_dims)",
   cost_class="free")
op("tf.ExpandDims", **layout, devices=xla_devices("ExpandDims"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   infer=lambda ctx: run_type(ctx, _expand_dims, (1,)), impl=_expand_dims, doc="TF ExpandDims(input, axis)",
   cost_class="free")
op("tf.StridedSlice", **layout, devices=xla_devices("StridedSlice"), min_inputs=4, max_inputs=4,
   static_inputs=(1, 2, 3), attrs={"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
                                   "shrink_axis_mask": 0},
   infer=lambda ctx: run_type(ctx, _strided_slice, (1, 2, 3)), impl=_strided_slice,
   doc="TF StridedSlice(input, begin, end, strides; begin/end/ellipsis/new_axis/shrink_axis masks)",
   cost_class="movement")
op("tf.StopGradient", **layout, devices=xla_devices("StopGradient"), min_inputs=1, max_inputs=1, infer=r.same,
   impl=lambda xp, a, x: x, doc="TF StopGradient(input): identity in inference", cost_class="free")


def _range(xp, a, start, limit, delta):
    s, l, d = (static(v, "Range bound").reshape(()) for v in (start, limit, delta))
    if float(d) == 0:
        raise Unsupported("Range with delta 0")
    # every value is static: computed once in NumPy (a constant under XLA, as tf2xla's Range requires)
    return np.arange(s, l, d, dtype=np.dtype(str(s.dtype)))


op("tf.Range", devices=xla_devices("Range"), min_inputs=3, max_inputs=3, static_inputs=(0, 1, 2), flops=zero,
   attrs={"Tidx": "int32"}, infer=lambda ctx: run_type(ctx, _range, (0, 1, 2)), impl=_range,
   doc="TF Range(start, limit, delta; Tidx)")


def _identity_n_type(ctx: Ctx) -> list[TensorType]:
    return list(ctx.inputs)


op("tf.IdentityN", devices=xla_devices("IdentityN"), min_inputs=1, num_outputs=None, flops=zero,
   infer=_identity_n_type, impl=lambda xp, a, *xs: tuple(xs),
   doc="TF IdentityN(input...): its inputs, one output each (custom gradients, Keras swish)")
