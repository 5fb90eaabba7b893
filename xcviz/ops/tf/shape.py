"""TensorFlow's layout ops with TF signatures (`tf.<Op>`): shapes, axes and slices arrive as inputs.

`Reshape(tensor, shape)`, `Transpose(x, perm)`, `ConcatV2(values..., axis)`, `Pack`/`Unpack(value; num, axis)`,
`Split(axis, value; num_split)`, `SplitV(value, size_splits, axis)`, `StridedSlice(input, begin, end,
strides; begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)`, `Squeeze`, `ExpandDims`, `Range`.
Inputs that decide an output shape must be constants under XLA."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from ...ir.symbolic import Sym
from .. import rules as r, sym_shapes as sym
from ..arrays import Unsupported, ints, static
from ..registry import LAYOUT, VALUE_RULE, Entries, plus_groups
from ..layout import infer_reshape
from ..rules import Ctx
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops


def run_type(ctx: Ctx, fn, static_slots: tuple[int, ...], views: bool = False) -> list[TensorType]:
    """Output types by running the NumPy reference on zero arrays of the input shapes (constants where known).
    A symbolic constant (a shape value holding names, passes/values.py) is for the symbolic rules
    (passes/sym_rules.py): unknown here. `views`: fn only takes views of its data inputs (slicing, transposing,
    splitting): symbolic dims then run as sizes no shape has (_symbolic_run)."""
    unknown = [TensorType(None, ctx.dtype(0))] * max(ctx.num_outputs, 1)
    args = []
    symbolic = False
    for i, t in enumerate(ctx.inputs):
        c = ctx.const(i) if i in static_slots else None
        if c is not None:
            if np.asarray(c).dtype == object:
                return unknown
            args.append(np.asarray(c))
        elif i in static_slots or t.shape is None:
            return unknown
        elif any(isinstance(d, str) for d in t.shape):
            if not views:
                return unknown
            symbolic = True
            args.append(None)
        else:
            args.append(np.zeros(t.shape, dtype=np.float32))
    data_dtype = ctx.dtype(1) if fn is _split else ctx.dtype(0)
    try:
        if symbolic:
            shapes = _symbolic_run(ctx, fn, args)
            if shapes is None:
                return unknown
        else:
            out = fn(np, ctx.attrs, *args)
            shapes = [np.shape(o) for o in (out if isinstance(out, (tuple, list)) else [out])]
    except Unsupported:
        return unknown
    return [TensorType(tuple(d if isinstance(d, str) else int(d) for d in s), data_dtype) for s in shapes]


_SENTINELS = (1_000_003, 1_000_033)  # two runs: a size equal to a sentinel in both is the symbol; equal ones are sizes


def _symbolic_run(ctx: Ctx, fn, args: list):
    """The output shapes of a view-taking fn on inputs with symbolic dims: run twice, each name a different
    size no real tensor has, on zero-stride arrays (no memory). An output size equal in both runs is that
    size; one that is a name's size in both runs is the name; any other (x[1:] of a symbolic axis) is not
    known: None."""
    names = sorted({d for t in ctx.inputs if t.shape for d in t.shape if isinstance(d, str)})
    runs = []
    for base in _SENTINELS:
        size = {n: base + 2 * k for k, n in enumerate(names)}
        call = [np.broadcast_to(np.zeros((), np.float32), tuple(size.get(d, d) for d in t.shape)) if a is None else a
                for a, t in zip(args, ctx.inputs)]
        try:
            out = fn(np, ctx.attrs, *call)
        except Exception:  # noqa: BLE001 - sizes no tensor has (a split of an odd one): not decided this way
            return None
        runs.append(([np.shape(o) for o in (out if isinstance(out, (tuple, list)) else [out])], size))
    (first, s1), (second, s2) = runs
    back = {(s1[n], s2[n]): n for n in names}
    shapes = []
    for a, b in zip(first, second):
        if len(a) != len(b):
            return None
        dims = []
        for x, y in zip(a, b):
            if x == y and x < _SENTINELS[0]:
                dims.append(int(x))
            elif (x, y) in back:
                dims.append(back[(x, y)])
            else:
                return None
        shapes.append(tuple(dims))
    return shapes


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
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))  # (views: _symbolic_run)


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


def _reshape_type(ctx: Ctx) -> list[TensorType]:
    """ONNX's reshape rule (ops/layout.py; a symbolic target: passes/sym_rules.py) with TF's meaning of 0 (a
    zero-size dim: allowzero). A -1 that the input's size cannot solve stays unknown: no unnamed `?` is made up
    (ir.symbolic.bind_anonymous would bind it to the batch size)."""
    target = ctx.const(1)
    if target is None or np.asarray(target).dtype == object:
        return [TensorType(None, ctx.dtype(0))]
    t = [int(v) for v in np.asarray(target).reshape(-1)]
    out = infer_reshape(ctx)[0]
    if -1 in t and out.shape is not None and isinstance(out.shape[t.index(-1)], str):
        return [TensorType(None, ctx.dtype(0))]
    return [out]


def _concat_type(ctx: Ctx) -> list[TensorType]:
    """ConcatV2 on symbolic shapes too: the axis's sizes add up as expressions; the other axes agree."""
    k = len(ctx.inputs) - 1
    axis, shapes = ctx.const(k), [t.shape for t in ctx.inputs[:k]]
    if axis is None or np.asarray(axis).dtype == object or not shapes or any(s is None for s in shapes) \
            or all(isinstance(d, int) for s in shapes for d in s):
        return run_type(ctx, _concat, (k,))
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise r.ShapeError(f"ConcatV2 inputs have different ranks: {', '.join(r.fmt(s) for s in shapes)}")
    ax = r.norm_axis(int(np.asarray(axis).reshape(())), rank)
    out = [_agreed([s[i] for s in shapes]) for i in range(rank)]
    total = Sym.of(0)
    for s in shapes:
        total = total + Sym.of(s[ax])
    out[ax] = total.to_dim()
    return [TensorType(tuple(out), ctx.dtype(0))]


def _agreed(dims: list):
    """One axis of inputs that must agree: its size where one gives it, else the first name."""
    sizes = {d for d in dims if isinstance(d, int)}
    if len(sizes) > 1:
        raise r.ShapeError(f"inputs disagree on an axis: {sorted(sizes)}")
    return sizes.pop() if sizes else dims[0]


def _pack_type(ctx: Ctx) -> list[TensorType]:
    """Pack on symbolic shapes too: the inputs' one shape with an axis of N inserted."""
    shapes = [t.shape for t in ctx.inputs]
    if any(s is None for s in shapes) or all(isinstance(d, int) for s in shapes for d in s):
        return run_type(ctx, _pack, ())
    rank = len(shapes[0])
    if any(len(s) != rank for s in shapes):
        raise r.ShapeError(f"Pack inputs have different shapes: {', '.join(r.fmt(s) for s in shapes)}")
    out = [_agreed([s[i] for s in shapes]) for i in range(rank)]
    ax = r.norm_axis(int(ctx.attrs.get("axis", 0)), rank + 1)
    return [TensorType(tuple(out[:ax]) + (len(shapes),) + tuple(out[ax:]), ctx.dtype(0))]


def _unpack_type(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is not None and x and isinstance(x[int(ctx.attrs.get("axis", 0)) % len(x)], str):
        return [TensorType(None, ctx.dtype(0))] * max(ctx.num_outputs, 1)  # (as many outputs as the axis is long)
    return run_type(ctx, _unpack, (), views=True)


layout = dict(groups=LAYOUT, flops=zero)
valued = plus_groups(layout, VALUE_RULE)  # shape inference computes their values (passes/values.py)
op("tf.Reshape", **valued, devices=xla_devices("Reshape"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   attrs={"allowzero": 1}, infer=_reshape_type, sym_infer=sym.reshape, impl=_reshape,
   doc="TF Reshape(tensor, shape): a 0 in the shape is a zero-size dim", cost_class="free")
op("tf.Transpose", **valued, devices=xla_devices("Transpose"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   infer=lambda ctx: run_type(ctx, _transpose, (1,), views=True), impl=_transpose, doc="TF Transpose(x, perm)",
   cost_class="movement")
op("tf.ConcatV2", **valued, devices=xla_devices("ConcatV2"), min_inputs=2, attrs={"N": None},
   infer=_concat_type, impl=_concat,
   doc="TF ConcatV2(values..., axis): the axis is the last input", cost_class="movement")
op("tf.Pack", **valued, devices=xla_devices("Pack"), min_inputs=1, attrs={"axis": 0, "N": None},
   infer=_pack_type, impl=_pack, doc="TF Pack(values...; axis)", cost_class="movement")
op("tf.Unpack", **layout, devices=xla_devices("Unpack"), min_inputs=1, max_inputs=1, num_outputs=None,
   attrs={"axis": 0, "num": None}, infer=_unpack_type, impl=_unpack,
   doc="TF Unpack(value; num, axis): `num` outputs", cost_class="movement")
op("tf.Split", **layout, devices=xla_devices("Split"), min_inputs=2, max_inputs=2, num_outputs=None,
   static_inputs=(0,), attrs={"num_split": 1}, infer=lambda ctx: run_type(ctx, _split, (0,), views=True), impl=_split,
   doc="TF Split(axis, value; num_split): the axis comes first", cost_class="movement")
op("tf.SplitV", **layout, devices=xla_devices("SplitV"), min_inputs=3, max_inputs=3, num_outputs=None,
   static_inputs=(1, 2), attrs={"num_split": 1}, infer=lambda ctx: run_type(ctx, _split_v, (1, 2), views=True),
   impl=_split_v, doc="TF SplitV(value, size_splits, axis)", cost_class="movement")
op("tf.Squeeze", **valued, devices=xla_devices("Squeeze"), min_inputs=1, max_inputs=1, attrs={"squeeze_dims": None},
   infer=lambda ctx: run_type(ctx, _squeeze, (), views=bool(ctx.attrs.get("squeeze_dims"))), impl=_squeeze,
   doc="TF Squeeze(input; squeeze_dims)", cost_class="free")
op("tf.ExpandDims", **valued, devices=xla_devices("ExpandDims"), min_inputs=2, max_inputs=2, static_inputs=(1,),
   infer=lambda ctx: run_type(ctx, _expand_dims, (1,), views=True), impl=_expand_dims, doc="TF ExpandDims(input, axis)",
   cost_class="free")
op("tf.StridedSlice", **valued, devices=xla_devices("StridedSlice"), min_inputs=4, max_inputs=4,
   static_inputs=(1, 2, 3), attrs={"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0,
                                   "shrink_axis_mask": 0},
   infer=lambda ctx: run_type(ctx, _strided_slice, (1, 2, 3), views=True), impl=_strided_slice,
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


op("tf.Range", groups=VALUE_RULE, devices=xla_devices("Range"), min_inputs=3, max_inputs=3, static_inputs=(0, 1, 2), flops=zero,
   attrs={"Tidx": "int32"}, infer=lambda ctx: run_type(ctx, _range, (0, 1, 2)), sym_infer=sym.range_, impl=_range,
   doc="TF Range(start, limit, delta; Tidx)")


def _identity_n_type(ctx: Ctx) -> list[TensorType]:
    return list(ctx.inputs)


op("tf.IdentityN", devices=xla_devices("IdentityN"), min_inputs=1, num_outputs=None, flops=zero,
   infer=_identity_n_type, impl=lambda xp, a, *xs: tuple(xs),
   doc="TF IdentityN(input...): its inputs, one output each (custom gradients, Keras swish)")
