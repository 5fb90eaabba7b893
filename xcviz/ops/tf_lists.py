"""TensorFlow's TensorList ops (`tf.TensorList*`), as Keras RNNs and tf.TensorArray emit them, natively and traced.

A list is a run-time value (ops.values.TensorList: its items, element dtype and shape); an op returns a new
list, never changes its input (TF's lists are values too: SetItem on a list two ops read copies it). Items
may be JAX values: inside an unrolled While the list's Python structure is static, only its items are traced.
An item never set reads as zeros of the element shape, as TF's GetItem/Stack do."""
from __future__ import annotations

import numpy as np

from . import rules as r
from .arrays import Unsupported, np_dtype
from .registry import op
from .tf_kernels import xla_devices
from .values import TensorList

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


def _list_type(ctx):
    from ..ir import TensorType

    return [TensorType((), None)] * max(ctx.num_outputs, 1)


def entry(name: str, impl, n_in: int, doc: str, n_out: int | None = 1, **kw) -> None:
    # XLA compiles TensorList ops only inside a compiled While (tf2xla); auto-clustering refuses variant
    # tensors (clustering/tf_rules.py), so these run natively and inside traced bodies
    op(f"tf.{name}", devices=xla_devices(name), min_inputs=n_in, max_inputs=n_in, flops=zero, impl=impl,
       num_outputs=n_out, doc=doc, **kw)


listed = dict(infer=r.from_file, attrs={"element_dtype": None})
entry("TensorListReserve", _reserve, 2, "TF TensorListReserve(element_shape, num_elements; element_dtype)", **listed)
entry("EmptyTensorList", _empty, 2, "TF EmptyTensorList(element_shape, max_num_elements; element_dtype)", **listed)
entry("TensorListFromTensor", _from_tensor, 2, "TF TensorListFromTensor(tensor, element_shape): one item per row",
      **listed)
entry("TensorListGetItem", _get, 3, "TF TensorListGetItem(input_handle, index, element_shape; element_dtype)",
      **listed)
entry("TensorListSetItem", _set, 3, "TF TensorListSetItem(input_handle, index, item; resize_if_index_out_of_bounds)",
      infer=r.from_file, attrs={"element_dtype": None, "resize_if_index_out_of_bounds": False})
entry("TensorListStack", _stack, 2, "TF TensorListStack(input_handle, element_shape; element_dtype, num_elements)",
      infer=r.from_file, attrs={"element_dtype": None, "num_elements": -1})
entry("TensorListElementShape", _element_shape, 1, "TF TensorListElementShape(input_handle; shape_type)",
      infer=r.from_file, attrs={"shape_type": "int32"})
entry("TensorListLength", _length, 1, "TF TensorListLength(input_handle) -> int32", infer=r.from_file)
entry("TensorListPushBack", _push, 2, "TF TensorListPushBack(input_handle, tensor; element_dtype)", **listed)
entry("TensorListPopBack", _pop, 2, "TF TensorListPopBack(input_handle, element_shape) -> output_handle, tensor",
      n_out=2, **listed)
entry("TensorListResize", _resize, 2, "TF TensorListResize(input_handle, size)", infer=r.from_file)
entry("TensorListGather", _gather, 3, "TF TensorListGather(input_handle, indices, element_shape; element_dtype)",
      **listed)
