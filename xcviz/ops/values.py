"""Run-time values that are not arrays: an ONNX sequence (`Seq`) and an empty optional (None)."""
from __future__ import annotations

import numpy as np


class Seq:
    """A run-time ONNX sequence: `items` (a tuple of arrays) and `dtype` (the element dtype, for empty ones)."""

    __slots__ = ("items", "dtype")

    def __init__(self, items, dtype=None):
        self.items = tuple(np.asarray(x) for x in items)
        if dtype is None:
            dtype = self.items[0].dtype if self.items else np.dtype(np.float32)
        self.dtype = np.dtype(dtype)

    def __repr__(self) -> str:
        return f"Seq({[f'{x.dtype}{list(x.shape)}' for x in self.items]})"


class TensorList:
    """A run-time TensorFlow TensorList (a variant tensor): `items` (arrays, or None where never set), the
    element `dtype` name and `element_shape` (None for unknown rank, None dims unknown)."""

    __slots__ = ("items", "dtype", "element_shape")

    def __init__(self, items, dtype=None, element_shape=None):
        self.items, self.dtype, self.element_shape = list(items), dtype, element_shape

    def __repr__(self) -> str:
        return f"TensorList({len(self.items)} items of {self.dtype}{list(self.element_shape or [])})"


class TensorArrayRef:
    """A run-time TensorFlow 1 TensorArray (the resource a TensorArrayV3 handle names): `items` (arrays, or None
    where never written), the element `dtype` name, `element_shape`, and whether it grows and clears items
    once read. Unlike a TensorList it is mutable: Write changes the array every holder of the handle sees."""

    __slots__ = ("items", "dtype", "element_shape", "dynamic_size", "clear_after_read", "cleared", "grads")

    def __init__(self, size, dtype, element_shape=None, dynamic_size=False, clear_after_read=True):
        self.items: list = [None] * size
        self.dtype, self.element_shape = dtype, element_shape
        self.dynamic_size, self.clear_after_read = dynamic_size, clear_after_read
        self.cleared: set = set()
        self.grads: dict = {}

    def __repr__(self) -> str:
        return f"TensorArray({len(self.items)} items of {self.dtype})"


def as_value(v):
    """A node's output as the runtime keeps it: sequences, TensorLists, TensorArray handles and empty optionals as
    they are, arrays as arrays."""
    return v if v is None or isinstance(v, (Seq, TensorList, TensorArrayRef)) else np.asarray(v)


def flat_outputs(outputs: dict) -> dict:
    """Outputs as named arrays (tables, .npz files): a sequence `s` as `s[0]`, `s[1]`, ...; an empty optional
    as nothing."""
    if all(isinstance(v, np.ndarray) for v in outputs.values()):
        return outputs
    flat: dict = {}
    for name, v in outputs.items():
        if isinstance(v, Seq):
            flat.update({f"{name}[{k}]": x for k, x in enumerate(v.items)})
        elif v is not None:
            flat[name] = v
    return flat
