"""TensorFlow's TensorList ops (`tf.TensorList*`), as Keras RNNs and tf.TensorArray emit them, natively and traced.

A list is a run-time value (ops.values.TensorList: its items, element dtype and shape); an op returns a new
list, never changes its input (TF's lists are values too: SetItem on a list two ops read copies it). Items
may be JAX values: inside an unrolled While the list's Python structure is static, only its items are traced.
An item never set reads as zeros of the element shape, as TF's GetItem/Stack do."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import Unsupported, np_dtype
from ..registry import LISTS, Entries
from .kernels import xla_devices
from ..values import TensorList

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops


def _index(i) -> int:
    try:
        return int(np.asarray(i).reshape(()))
    except Exception:  # noqa: BLE001 - a tracer (a While lowered to lax.while_loop)
        raise Unsupported("TensorList index must be known while tracing (the While is unrolled for lists)") from None


def _shape(element_shape) -> tuple | None:
    """element_shape input -> tuple with None for unknown dims; None for unknown rank (-1 scalar)."""
    s = np.asarray(element_shape).reshape(-1)
    if np.asarray(element_shape).ndim == 0:
        return None
    return tuple(None if int(d) < 0 else int(d) for d in s)


def _list_of(x, what: str) -> TensorList:
    if not isinstance(x, TensorList):
        raise Unsupported(f"{what}: input is not a TensorList (got {type(x).__name__})")
    return x


def _reserve(xp, a, element_shape, num_elements):
    n = _index(num_elements)
    return TensorList([None] * max(n, 0), a.get("element_dtype"), _shape(element_shape))


def _empty(xp, a, element_shape, max_num_elements=None):
    return TensorList([], a.get("element_dtype"), _shape(element_shape))


def _from_tensor(xp, a, tensor, element_shape):
    return TensorList([tensor[i] for i in range(tensor.shape[0])], a.get("element_dtype"),
                      tuple(int(d) for d in tensor.shape[1:]))


def _zeros(lst: TensorList, xp, like=None):
    shape = tuple(like.shape) if like is not None else lst.element_shape
    if shape is None or any(d is None for d in shape):
        raise Unsupported("a TensorList item that was never set has an unknown element shape")
    dt = like.dtype if like is not None else np_dtype(lst.dtype or "float32")
    return xp.zeros(shape, dt)


def _get(xp, a, handle, index, element_shape=None):
    lst = _list_of(handle, "TensorListGetItem")
    i = _index(index)
    if not -len(lst.items) <= i < len(lst.items):
        raise Unsupported(f"TensorListGetItem index {i} out of range for a list of {len(lst.items)}")
    item = lst.items[i]
    if item is None:
        like = next((x for x in lst.items if x is not None), None)
        return _zeros(lst, xp, like)
    return item


def _set(xp, a, handle, index, item):
    lst = _list_of(handle, "TensorListSetItem")
    i = _index(index)
    items = list(lst.items)
    if i >= len(items):
        if not a.get("resize_if_index_out_of_bounds"):
            raise Unsupported(f"TensorListSetItem index {i} out of range for a list of {len(items)}")
        items += [None] * (i + 1 - len(items))
    items[i] = item
    return TensorList(items, lst.dtype, lst.element_shape)


def _stack(xp, a, handle, element_shape=None):
    lst = _list_of(handle, "TensorListStack")
    like = next((x for x in lst.items if x is not None), None)
    if not lst.items:
        shape = _shape(element_shape) if element_shape is not None else lst.element_shape
        if shape is None or any(d is None for d in shape):
            raise Unsupported("TensorListStack of an empty list with an unknown element shape")
        return xp.zeros((0,) + shape, np_dtype(a.get("element_dtype") or lst.dtype or "float32"))
    return xp.stack([x if x is not None else _zeros(lst, xp, like) for x in lst.items])


def _element_shape(xp, a, handle):
    lst = _list_of(handle, "TensorListElementShape")
    like = next((x for x in lst.items if x is not None), None)
    dt = np_dtype(a.get("shape_type") or "int32")
    if like is not None:
        return np.asarray(like.shape, dt)
    if lst.element_shape is None:
        return np.asarray(-1, dt)
    return np.asarray([-1 if d is None else d for d in lst.element_shape], dt)


def _length(xp, a, handle):
    return np.asarray(len(_list_of(handle, "TensorListLength").items), np.int32)


def _push(xp, a, handle, tensor):
    lst = _list_of(handle, "TensorListPushBack")
    return TensorList([*lst.items, tensor], lst.dtype, lst.element_shape)


def _pop(xp, a, handle, element_shape):
    lst = _list_of(handle, "TensorListPopBack")
    if not lst.items:
        raise Unsupported("TensorListPopBack of an empty list")
    last = lst.items[-1]
    return TensorList(lst.items[:-1], lst.dtype, lst.element_shape), (last if last is not None else _zeros(lst, xp))


def _resize(xp, a, handle, size):
    lst = _list_of(handle, "TensorListResize")
    n = _index(size)
    return TensorList((list(lst.items) + [None] * n)[:n], lst.dtype, lst.element_shape)


def _gather(xp, a, handle, indices, element_shape):
    lst = _list_of(handle, "TensorListGather")
    return xp.stack([_get(xp, a, lst, i) for i in np.asarray(indices).reshape(-1)])


def _known_shape(ctx, slot: int) -> tuple | None:
    """A constant element_shape input with every dim known, else None (a -1 stays unknown: no `?` made up)."""
    c = ctx.const(slot)
    if c is None or np.asarray(c).dtype == object:
        return None
    s = _shape(c)
    return None if s is None or None in s else s


def _typed(kind: str):
    """The tensors a list op returns, from its element_shape input and element_dtype (the list handles stay
    the file's: a variant): GetItem's item, PopBack's item (output 1), Gather's [len(indices), ...], Stack's
    [num_elements, ...] (num_elements given), Length's int32 scalar, ElementShape's shape of dtype
    shape_type; the element_dtype where the file gives a shape alone (a SavedModel's _output_shapes)."""
    def infer(ctx) -> list[TensorType]:
        out = list(r.from_file(ctx))
        out += [TensorType()] * (max(ctx.num_outputs, 1) - len(out))
        dt = ctx.attrs.get("element_dtype")
        k, shape = 0, None
        if kind == "length":
            shape, dt = (), "int32"
        elif kind == "element_shape":   # (its rank is the list's: the file's shape)
            dt = ctx.attrs.get("shape_type") or "int32"
        elif kind == "get":
            shape = _known_shape(ctx, 2)
        elif kind == "pop":
            k, shape = 1, _known_shape(ctx, 1)
        elif kind == "gather":
            s, idx = _known_shape(ctx, 2), ctx.shape(1)
            shape = None if s is None or idx is None else (*idx, *s)
        elif kind == "stack":
            n, s = int(ctx.attrs.get("num_elements", -1)), _known_shape(ctx, 1)
            shape = None if s is None or n < 0 else (n, *s)
        if k < len(out) and (shape is not None or kind != "length"):
            have = out[k]  # (the file's shape where the rule has none; the dtype is the element's)
            out[k] = TensorType(tuple(shape) if shape is not None else have.shape, have.dtype or dt)
        return out
    return infer


# XLA compiles TensorList ops only inside a compiled While (tf2xla); auto-clustering refuses variant tensors
# (clustering/tf_filter.py), so these run natively and inside traced bodies
listed = dict(infer=r.from_file, flops=zero, attrs={"element_dtype": None})
op("tf.TensorListReserve", groups=LISTS, **listed, devices=xla_devices("TensorListReserve"), min_inputs=2, max_inputs=2,
   impl=_reserve, doc="TF TensorListReserve(element_shape, num_elements; element_dtype)")
op("tf.EmptyTensorList", groups=LISTS, **listed, devices=xla_devices("EmptyTensorList"), min_inputs=2, max_inputs=2,
   impl=_empty, doc="TF EmptyTensorList(element_shape, max_num_elements; element_dtype)")
op("tf.TensorListFromTensor", groups=LISTS, **listed, devices=xla_devices("TensorListFromTensor"), min_inputs=2, max_inputs=2,
   impl=_from_tensor, doc="TF TensorListFromTensor(tensor, element_shape): one item per row")
op("tf.TensorListGetItem", groups=LISTS, **{**listed, "infer": _typed("get")}, devices=xla_devices("TensorListGetItem"), min_inputs=3, max_inputs=3,
   impl=_get, doc="TF TensorListGetItem(input_handle, index, element_shape; element_dtype)")
op("tf.TensorListSetItem", groups=LISTS, infer=r.from_file, flops=zero, devices=xla_devices("TensorListSetItem"), min_inputs=3,
   max_inputs=3, attrs={"element_dtype": None, "resize_if_index_out_of_bounds": False}, impl=_set,
   doc="TF TensorListSetItem(input_handle, index, item; resize_if_index_out_of_bounds)")
op("tf.TensorListStack", groups=LISTS, infer=_typed("stack"), flops=zero, devices=xla_devices("TensorListStack"), min_inputs=2,
   max_inputs=2, attrs={"element_dtype": None, "num_elements": -1}, impl=_stack,
   doc="TF TensorListStack(input_handle, element_shape; element_dtype, num_elements)")
op("tf.TensorListElementShape", groups=LISTS, infer=_typed("element_shape"), flops=zero, devices=xla_devices("TensorListElementShape"),
   min_inputs=1, max_inputs=1, attrs={"shape_type": "int32"}, impl=_element_shape,
   doc="TF TensorListElementShape(input_handle; shape_type)")
op("tf.TensorListLength", groups=LISTS, infer=_typed("length"), flops=zero, devices=xla_devices("TensorListLength"), min_inputs=1,
   max_inputs=1, impl=_length, doc="TF TensorListLength(input_handle) -> int32")
op("tf.TensorListPushBack", groups=LISTS, **listed, devices=xla_devices("TensorListPushBack"), min_inputs=2, max_inputs=2,
   impl=_push, doc="TF TensorListPushBack(input_handle, tensor; element_dtype)")
op("tf.TensorListPopBack", groups=LISTS, **{**listed, "infer": _typed("pop")}, devices=xla_devices("TensorListPopBack"), min_inputs=2, max_inputs=2,
   num_outputs=2, impl=_pop, doc="TF TensorListPopBack(input_handle, element_shape) -> output_handle, tensor")
op("tf.TensorListResize", groups=LISTS, infer=r.from_file, flops=zero, devices=xla_devices("TensorListResize"), min_inputs=2,
   max_inputs=2, impl=_resize, reason="no XLA kernel for TensorListResize (tf2xla)",
   doc="TF TensorListResize(input_handle, size)")
op("tf.TensorListGather", groups=LISTS, **{**listed, "infer": _typed("gather")}, devices=xla_devices("TensorListGather"), min_inputs=3, max_inputs=3,
   impl=_gather, doc="TF TensorListGather(input_handle, indices, element_shape; element_dtype)")
