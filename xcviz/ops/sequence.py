"""ONNX sequence and optional ops (SequenceEmpty ... ConcatFromSequence, Optional*, SequenceMap), native only.

At run time a sequence is an ops.values.Seq, an empty optional is None (as an absent input), a full optional
is its value. XLA does not compile them. TensorFlow's tf2xla has TensorList kernels (TensorListReserve,
EmptyTensorList, TensorListGetItem/SetItem, PushBack/PopBack, Stack, Gather, Split, FromTensor), but a list
there is a preallocated buffer: its maximum length must be a compile-time constant ("XLA compilation
requires a fixed tensor list size"), and no kernel inserts or erases at a position. ONNX sequences have no
such bound, so these nodes fall back and run natively; tf2xla has no kernel for TF's Optional ops at all.
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from ..ir.containers import OptionalType, SequenceType
from .arrays import Unsupported, ints, np_dtype, present
from .registry import Entries
from .xla_support import OPTIONAL_WHY, SEQUENCE_WHY as WHY
from .values import Seq
from .rules import Ctx, from_file

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

native = dict(devices=frozenset(), jax_ok=False)


def _seq(v, what: str = "input sequence") -> Seq:
    if not isinstance(v, Seq):
        raise Unsupported(f"{what} is not a sequence (got {type(v).__name__})",
                          hint="feed a list of arrays for a sequence input")
    return v


def _position(pos, n: int, insert: bool = False) -> int:
    p = ints(pos, "position")[0]
    hi = n if insert else n - 1
    if not -n <= p <= hi:
        raise Unsupported(f"position {p} is out of range for a sequence of length {n}")
    return p + n if p < 0 else p


def sequence_empty(xp, a):
    return Seq((), np_dtype(a.get("dtype", 1)))


def sequence_construct(xp, a, *tensors):
    if len({np.asarray(t).dtype for t in tensors}) > 1:
        raise Unsupported("SequenceConstruct of tensors with different dtypes")
    return Seq(tensors)


def sequence_insert(xp, a, seq, tensor, position=None):
    s = _seq(seq)
    t = np.asarray(tensor)
    if s.items and t.dtype != s.dtype:
        raise Unsupported(f"SequenceInsert of a {t.dtype} tensor into a sequence of {s.dtype}")
    p = _position(position, len(s.items), insert=True) if present(position) else len(s.items)
    return Seq(s.items[:p] + (t,) + s.items[p:], s.dtype)


def sequence_at(xp, a, seq, position):
    s = _seq(seq)
    return s.items[_position(position, len(s.items))]


def sequence_erase(xp, a, seq, position=None):
    s = _seq(seq)
    if not s.items:
        raise Unsupported("SequenceErase on an empty sequence")
    p = _position(position, len(s.items)) if present(position) else len(s.items) - 1
    return Seq(s.items[:p] + s.items[p + 1:], s.dtype)


def sequence_length(xp, a, seq):
    return np.asarray(len(_seq(seq).items), np.int64)


def split_to_sequence(xp, a, x, split=None):
    x = np.asarray(x)
    axis = int(a.get("axis", 0))
    if not -x.ndim <= axis < x.ndim:
        raise Unsupported(f"axis {axis} is out of range for rank {x.ndim}")
    axis %= x.ndim
    n = x.shape[axis]
    if split is None or (hasattr(split, "size") and split.size == 0 and np.ndim(split) == 1):
        parts = np.split(x, n, axis=axis) if n else []
        if not int(a.get("keepdims", 1)):
            parts = [np.squeeze(p, axis=axis) for p in parts]
        return Seq(parts, x.dtype)
    sizes = ints(split, "split")
    if np.ndim(split) == 0:  # one chunk size: equal chunks, the last one smaller
        if sizes[0] <= 0:
            raise Unsupported(f"split size {sizes[0]} must be positive")
        sizes = [sizes[0]] * (n // sizes[0]) + ([n % sizes[0]] if n % sizes[0] else [])
    if sum(sizes) != n or min(sizes, default=0) < 0:
        raise Unsupported(f"split sizes {sizes} do not add up to dimension {n} of axis {axis}")
    return Seq(np.split(x, np.cumsum(sizes)[:-1], axis=axis), x.dtype)


def concat_from_sequence(xp, a, seq):
    s = _seq(seq)
    if not s.items:
        raise Unsupported("ConcatFromSequence of an empty sequence (ONNX leaves its shape undefined)")
    axis = int(a["axis"]) if "axis" in a else None
    if axis is None:
        raise Unsupported("ConcatFromSequence needs its 'axis' attribute")
    if int(a.get("new_axis", 0)):
        return np.stack(s.items, axis=axis)
    return np.concatenate(s.items, axis=axis)


def optional(xp, a, x=None):
    return x  # an empty optional is None, as an absent input


def optional_has_element(xp, a, x=None):
    return np.asarray(x is not None)


def optional_get_element(xp, a, x):
    if x is None:
        raise Unsupported("OptionalGetElement of an empty optional", hint="test it with OptionalHasElement first")
    return x


def sequence_map(xp, a, seq, *extra):
    """ONNX SequenceMap: the body runs once per position; sequence inputs give their element, tensors pass whole."""
    from .control_body import body_inputs, outer_feeds, run_body

    n = int(a.get("_n_inputs", 1 + len(extra)))
    own, outer = [seq, *extra][:n], [seq, *extra][n:]
    length = len(_seq(seq).items)
    for v in own[1:]:
        if isinstance(v, Seq) and len(v.items) != length:
            raise Unsupported(f"SequenceMap over sequences of lengths {length} and {len(v.items)}")
    body = a.get("body")
    results: list[list] = []
    for i in range(length):
        args = [v.items[i] if isinstance(v, Seq) else v for v in own]
        outs = run_body(a, body, {**outer_feeds(a, outer), **body_inputs(body, args)})
        for k, v in enumerate(outs):
            if len(results) <= k:
                results.append([])
            results[k].append(np.asarray(v))
    n_out = int(a.get("_num_outputs", 1))
    out = [Seq(results[k] if k < len(results) else ()) for k in range(n_out)]
    return tuple(out) if n_out != 1 else out[0]


# ---- type rules: the file's types where it gives them, else what the op makes -------------------------------
def _given(ctx: Ctx, made: TensorType) -> list[TensorType]:
    out = ctx.outputs[0] if ctx.outputs else TensorType()
    return [out if type(out) is type(made) else made]


def _elem(t: TensorType) -> TensorType:
    return TensorType(t.shape if isinstance(t, SequenceType) else None, t.dtype)


def infer_empty(ctx: Ctx) -> list[TensorType]:
    return _given(ctx, SequenceType(None, str(np_dtype(ctx.attrs.get("dtype", 1)))))


def infer_construct(ctx: Ctx) -> list[TensorType]:
    shapes = {t.shape for t in ctx.inputs}
    return _given(ctx, SequenceType(shapes.pop() if len(shapes) == 1 else None, ctx.dtype(0)))


def infer_same_seq(ctx: Ctx) -> list[TensorType]:
    t = ctx.inputs[0] if ctx.inputs else TensorType()
    return _given(ctx, SequenceType(None, t.dtype))


def infer_at(ctx: Ctx) -> list[TensorType]:
    return _given(ctx, _elem(ctx.inputs[0]) if ctx.inputs else TensorType())


def infer_split(ctx: Ctx) -> list[TensorType]:
    return _given(ctx, SequenceType(None, ctx.dtype(0)))


def infer_optional(ctx: Ctx) -> list[TensorType]:
    t = ctx.inputs[0] if ctx.inputs else TensorType()
    return _given(ctx, OptionalType(t.shape, t.dtype, isinstance(t, SequenceType)))


def infer_get(ctx: Ctx) -> list[TensorType]:
    t = ctx.inputs[0] if ctx.inputs else TensorType()
    return _given(ctx, t.element() if isinstance(t, OptionalType) else t)


op("sequence_empty", "SequenceEmpty", **native, reason=WHY, infer=infer_empty, max_inputs=0, impl=sequence_empty,
   doc="an empty sequence of the given dtype")
op("sequence_construct", "SequenceConstruct", **native, reason=WHY, infer=infer_construct, min_inputs=1,
   impl=sequence_construct, doc="a sequence of its inputs")
op("sequence_insert", "SequenceInsert", **native, reason=WHY, infer=infer_same_seq, min_inputs=2, max_inputs=3,
   impl=sequence_insert, doc="the sequence with a tensor inserted at `position` (default: the end)")
op("sequence_at", "SequenceAt", **native, reason=WHY, infer=infer_at, min_inputs=2, max_inputs=2,
   impl=sequence_at, doc="the tensor at `position` (negative counts from the end)")
op("sequence_erase", "SequenceErase", **native, reason=WHY, infer=infer_same_seq, min_inputs=1, max_inputs=2,
   impl=sequence_erase, doc="the sequence without the tensor at `position` (default: the last)")
op("sequence_length", "SequenceLength", **native, reason=WHY, min_inputs=1, max_inputs=1, impl=sequence_length,
   infer=lambda ctx: [TensorType((), "int64")], doc="the number of tensors in the sequence (int64 scalar)")
op("split_to_sequence", "SplitToSequence", **native, reason=WHY, attrs={"axis": 0, "keepdims": 1},
   infer=infer_split, min_inputs=1, max_inputs=2, impl=split_to_sequence,
   doc="split a tensor along `axis` into a sequence (by `split` sizes, one chunk size, or into slices of 1)")
op("concat_from_sequence", "ConcatFromSequence", **native, reason=WHY, attrs={"new_axis": 0}, infer=from_file,
   min_inputs=1, max_inputs=1, impl=concat_from_sequence,
   doc="concatenate (or stack, with new_axis=1) the sequence's tensors along `axis`")
op("optional", "Optional", **native, reason=OPTIONAL_WHY, infer=infer_optional, max_inputs=1, impl=optional,
   doc="an optional holding its input, or an empty one (no input)")
op("optional_has_element", "OptionalHasElement", **native, reason=OPTIONAL_WHY, max_inputs=1,
   infer=lambda ctx: [TensorType((), "bool")], impl=optional_has_element,
   doc="whether the optional holds a value (bool scalar; false without an input)")
op("optional_get_element", "OptionalGetElement", **native, reason=OPTIONAL_WHY, infer=infer_get, min_inputs=1,
   max_inputs=1, impl=optional_get_element, doc="the optional's value (an error when it is empty)")
op("sequence_map", "SequenceMap", **native, reason=WHY, num_outputs=None, infer=from_file, min_inputs=1,
   impl=sequence_map, doc="run the `body` graph on each position of the input sequences; a sequence per output")
