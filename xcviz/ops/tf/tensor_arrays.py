"""TensorFlow 1's TensorArray ops (`tf.TensorArray*V3`), as tf.TensorArray and dynamic_rnn emit them with control
flow v1, natively.

A TensorArrayV3 is a resource: its handle names one mutable array (ops.values.TensorArrayRef) that Write,
Scatter and Split change in place, and its `flow` output (a float scalar) only orders the ops that touch it,
as in TensorFlow. A run creates the array when it runs the TensorArrayV3 node, so every run starts empty.
XLA compiles these ops only inside a compiled loop; auto-clustering refuses them (clustering/tf_filter.py)."""
from __future__ import annotations

import numpy as np

from .. import rules as r
from ..arrays import Unsupported, np_dtype
from ..registry import Entries
from ..values import TensorArrayRef

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops
FLOW = np.float32(0.0)


def _ta(h, what: str) -> TensorArrayRef:
    if not isinstance(h, TensorArrayRef):
        raise Unsupported(f"{what}: input is not a TensorArray handle (got {type(h).__name__})")
    return h


def _int(i, what: str) -> int:
    try:
        return int(np.asarray(i).reshape(()))
    except Exception:  # noqa: BLE001 - a tracer: a TensorArray never enters a cluster
        raise Unsupported(f"{what}: the index must be a concrete value") from None


def _known(shape) -> tuple | None:
    """An element_shape attr (tuple, None dims unknown, or None for unknown rank) when fully known."""
    if shape is None or any(not isinstance(d, (int, np.integer)) or d < 0 for d in shape):
        return None
    return tuple(int(d) for d in shape)


def _new(xp, a, size):
    n = _int(size, "TensorArrayV3 size")
    ta = TensorArrayRef(n, a.get("dtype") or "float32", a.get("element_shape"), bool(a.get("dynamic_size")),
                        bool(a.get("clear_after_read", True)))
    return ta, FLOW


def _check_index(ta: TensorArrayRef, i: int, what: str, writing: bool) -> None:
    if i < 0 or (i >= len(ta.items) and not (writing and ta.dynamic_size)):
        raise Unsupported(f"{what}: index {i} out of range for a TensorArray of size {len(ta.items)}")


def _put(ta: TensorArrayRef, i: int, value, what: str) -> None:
    _check_index(ta, i, what, writing=True)
    if i >= len(ta.items):
        ta.items += [None] * (i + 1 - len(ta.items))
    ta.items[i] = np.asarray(value, np_dtype(ta.dtype))


def _zeros(ta: TensorArrayRef, what: str, shape=None) -> np.ndarray:
    like = next((x for x in ta.items if x is not None), None)
    known = tuple(like.shape) if like is not None else (_known(shape) or _known(ta.element_shape))
    if known is None:
        raise Unsupported(f"{what}: an element never written, and the element shape is not known")
    return np.zeros(known, np_dtype(ta.dtype))


def _take(ta: TensorArrayRef, i: int, what: str, shape=None) -> np.ndarray:
    _check_index(ta, i, what, writing=False)
    item = ta.items[i]
    if item is None:
        if i in ta.cleared:
            raise Unsupported(f"{what}: index {i} was read before and cleared (clear_after_read = true)")
        return _zeros(ta, what, shape)
    if ta.clear_after_read:
        ta.items[i] = None
        ta.cleared.add(i)
    return item


def _write(xp, a, handle, index, value, flow_in):
    ta = _ta(handle, "TensorArrayWriteV3")
    _put(ta, _int(index, "TensorArrayWriteV3"), value, "TensorArrayWriteV3")
    return FLOW


def _read(xp, a, handle, index, flow_in):
    return _take(_ta(handle, "TensorArrayReadV3"), _int(index, "TensorArrayReadV3"), "TensorArrayReadV3")


def _gather(xp, a, handle, indices, flow_in):
    ta = _ta(handle, "TensorArrayGatherV3")
    idx = [int(i) for i in np.asarray(indices).reshape(-1)]
    items = [_take(ta, i, "TensorArrayGatherV3", a.get("element_shape")) for i in idx]
    if not items:
        shape = _known(a.get("element_shape")) or _known(ta.element_shape)
        if shape is None:
            raise Unsupported("TensorArrayGatherV3 of no elements with an unknown element shape")
        return np.zeros((0,) + shape, np_dtype(ta.dtype))
    return np.stack(items)


def _scatter(xp, a, handle, indices, value, flow_in):
    ta = _ta(handle, "TensorArrayScatterV3")
    value = np.asarray(value)
    idx = np.asarray(indices).reshape(-1)
    if value.shape[:1] != (len(idx),):
        raise Unsupported(f"TensorArrayScatterV3: {len(idx)} indices for a value of shape {list(value.shape)}")
    for k, i in enumerate(idx):
        _put(ta, int(i), value[k], "TensorArrayScatterV3")
    return FLOW


def _size(xp, a, handle, flow_in):
    return np.asarray(len(_ta(handle, "TensorArraySizeV3").items), np.int32)


def _close(xp, a, handle):
    return ()


def _concat(xp, a, handle, flow_in):
    ta = _ta(handle, "TensorArrayConcatV3")
    items = [_take(ta, i, "TensorArrayConcatV3") for i in range(len(ta.items))]
    lengths = np.asarray([x.shape[0] for x in items], np.int64)
    if not items:
        rest = _known(a.get("element_shape_except0"))
        if rest is None:
            raise Unsupported("TensorArrayConcatV3 of no elements with an unknown element shape")
        return np.zeros((0,) + rest, np_dtype(ta.dtype)), lengths
    return np.concatenate(items), lengths


def _split(xp, a, handle, value, lengths, flow_in):
    ta = _ta(handle, "TensorArraySplitV3")
    value = np.asarray(value)
    ends = np.cumsum(np.asarray(lengths, np.int64).reshape(-1))
    if ends.size and ends[-1] != value.shape[0]:
        raise Unsupported(f"TensorArraySplitV3: lengths sum to {int(ends[-1])}, the value has {value.shape[0]} rows")
    for k, (s, e) in enumerate(zip(np.concatenate([[0], ends[:-1]]), ends)):
        _put(ta, k, value[int(s):int(e)], "TensorArraySplitV3")
    return FLOW


def _grad(xp, a, handle, flow_in):
    """The gradient array of `handle` for `source`: created once (same size, empty), then the same one."""
    ta = _ta(handle, "TensorArrayGradV3")
    key = a.get("source") or ""
    if key not in ta.grads:
        ta.grads[key] = TensorArrayRef(len(ta.items), ta.dtype, ta.element_shape, ta.dynamic_size, False)
    return ta.grads[key], FLOW


# A mutable resource xcviz never traces: TF's XLA kernels for these (tf2xla) serve only a While compiled as a
# whole, and auto-clustering refuses them, so xcviz claims no device for them (a claim would need a lowering).
NATIVE = frozenset()
arr = dict(infer=r.from_file, flops=zero, jax_ok=False,
           reason="TensorArray op: TF's auto-clustering refuses it (allow_tensor_array_ops = false); XLA compiles "
                  "TensorArrays only inside a While compiled as a whole, and xcviz runs them natively")
op("tf.TensorArrayV3", **arr, devices=NATIVE, min_inputs=1, max_inputs=1, num_outputs=2,
   impl=_new, attrs={"dtype": None, "element_shape": None, "dynamic_size": False, "clear_after_read": True},
   doc="TF TensorArrayV3(size; dtype, element_shape, dynamic_size, clear_after_read) -> handle, flow")
op("tf.TensorArrayWriteV3", **arr, devices=NATIVE, min_inputs=4, max_inputs=4,
   impl=_write, doc="TF TensorArrayWriteV3(handle, index, value, flow_in) -> flow_out")
op("tf.TensorArrayReadV3", **arr, devices=NATIVE, min_inputs=3, max_inputs=3,
   impl=_read, attrs={"dtype": None}, doc="TF TensorArrayReadV3(handle, index, flow_in; dtype)")
op("tf.TensorArrayGatherV3", **arr, devices=NATIVE, min_inputs=3, max_inputs=3,
   impl=_gather, attrs={"dtype": None, "element_shape": None},
   doc="TF TensorArrayGatherV3(handle, indices, flow_in; dtype, element_shape)")
op("tf.TensorArrayScatterV3", **arr, devices=NATIVE, min_inputs=4, max_inputs=4,
   impl=_scatter, doc="TF TensorArrayScatterV3(handle, indices, value, flow_in) -> flow_out")
op("tf.TensorArraySizeV3", **arr, devices=NATIVE, min_inputs=2, max_inputs=2,
   impl=_size, doc="TF TensorArraySizeV3(handle, flow_in) -> int32")
op("tf.TensorArrayCloseV3", **arr, devices=NATIVE, min_inputs=1, max_inputs=1,
   num_outputs=0, impl=_close, doc="TF TensorArrayCloseV3(handle)")
op("tf.TensorArrayConcatV3", **arr, devices=NATIVE, min_inputs=2, max_inputs=2,
   num_outputs=2, impl=_concat, attrs={"dtype": None, "element_shape_except0": None},
   doc="TF TensorArrayConcatV3(handle, flow_in) -> value, lengths")
op("tf.TensorArraySplitV3", **arr, devices=NATIVE, min_inputs=4, max_inputs=4,
   impl=_split, doc="TF TensorArraySplitV3(handle, value, lengths, flow_in) -> flow_out")
op("tf.TensorArrayGradV3", **arr, devices=NATIVE, min_inputs=2, max_inputs=2,
   num_outputs=2, impl=_grad, attrs={"source": ""},
   doc="TF TensorArrayGradV3(handle, flow_in; source) -> grad_handle, flow_out")
