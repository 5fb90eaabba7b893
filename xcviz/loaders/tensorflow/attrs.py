"""TensorFlow AttrValue / TensorProto / shape messages -> plain Python and NumPy values."""
from __future__ import annotations

import numpy as np

from ...errors import XcvizError
from ..budget import current
from .protos import DTYPES

# DataType enum -> xcviz dtype name; resource and variant have no xcviz dtype (None), the op keeps T.
_NAMES = {"DT_FLOAT": "float32", "DT_DOUBLE": "float64", "DT_INT32": "int32", "DT_UINT8": "uint8",
          "DT_INT16": "int16", "DT_INT8": "int8", "DT_STRING": "string", "DT_COMPLEX64": "complex64",
          "DT_INT64": "int64", "DT_BOOL": "bool", "DT_BFLOAT16": "bfloat16", "DT_UINT16": "uint16",
          "DT_COMPLEX128": "complex128", "DT_HALF": "float16", "DT_UINT32": "uint32", "DT_UINT64": "uint64",
          "DT_RESOURCE": "resource", "DT_VARIANT": "variant", "DT_QINT8": "qint8", "DT_QUINT8": "quint8",
          "DT_QINT32": "qint32", "DT_FLOAT8_E5M2": "float8_e5m2", "DT_FLOAT8_E4M3FN": "float8_e4m3fn"}


def dtype_name(enum: int) -> str:
    """TF's DataType number -> 'float32', 'resource', ... ('_ref' types read as their base type)."""
    base = enum - 100 if enum > 100 else enum
    name = DTYPES[base] if 0 <= base < len(DTYPES) else "DT_INVALID"
    return _NAMES.get(name, name[3:].lower())


def tf_dtype_enum(name: str) -> int:
    """The inverse of dtype_name (for writing GraphDefs)."""
    for enum_name, ours in _NAMES.items():
        if ours == name:
            return DTYPES.index(enum_name)
    return 0


def shape_of(proto) -> tuple | None:
    """TensorShapeProto -> tuple of dims (-1 -> '?'); None for unknown rank."""
    if proto.unknown_rank:
        return None
    return tuple(int(d.size) if d.size >= 0 else "?" for d in proto.dim)


NP_TYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32, "uint8": np.uint8, "int16": np.int16,
            "int8": np.int8, "int64": np.int64, "bool": np.bool_, "uint16": np.uint16, "uint32": np.uint32,
            "uint64": np.uint64, "float16": np.float16, "complex64": np.complex64, "complex128": np.complex128}
_FIELD = {"float32": "float_val", "float64": "double_val", "int32": "int_val", "uint8": "int_val",
          "int16": "int_val", "int8": "int_val", "int64": "int64_val", "bool": "bool_val", "uint16": "int_val",
          "uint32": "uint32_val", "uint64": "uint64_val", "float16": "half_val", "complex64": "scomplex_val",
          "complex128": "dcomplex_val"}


def tensor_value(t, where: str):
    """TensorProto -> numpy array (strings: object array); None for resource/variant tensors."""
    dt = dtype_name(t.dtype)
    shape = shape_of(t.tensor_shape) or ()
    if any(not isinstance(d, int) for d in shape):
        raise XcvizError("a constant tensor has an unknown dimension", where=where, hint="the file may be corrupted")
    # (counted before anything is allocated: one value may declare a splat of any shape, [4e9, 4e9]; what the
    # file stores is bounded by its size, what a splat adds to it counts against --max-file-bytes)
    np_dt = NP_TYPES.get(dt)
    itemsize = np.dtype(np_dt).itemsize if np_dt is not None else 8
    stored = len(t.tensor_content) or itemsize * len(t.string_val if dt == "string" else
                                                    getattr(t, _FIELD[dt]) if dt in _FIELD else ())
    n = current().tensor(shape, itemsize, "a constant tensor", where, stored) \
        if dt == "string" or np_dt is not None else 0
    if dt == "string":
        vals = [v.decode("utf-8", "replace") for v in t.string_val]
        arr = np.array(vals if len(vals) == n else (vals[:1] or [""]) * n, dtype=object)
        return arr.reshape(shape)
    if np_dt is None:
        return None
    if t.tensor_content:
        if len(t.tensor_content) != n * np.dtype(np_dt).itemsize:
            raise XcvizError(f"a constant's tensor_content holds {len(t.tensor_content)} bytes, its shape "
                             f"{list(shape)} needs {n * np.dtype(np_dt).itemsize}", where=where,
                             hint="the file may be truncated or corrupted")
        return np.frombuffer(t.tensor_content, dtype=np_dt).reshape(shape).copy()
    vals = list(getattr(t, _FIELD[dt]))
    if dt == "float16":
        arr = np.array(vals, np.uint16).view(np.float16)
    elif dt.startswith("complex"):
        arr = np.array(vals, np.float64).reshape(-1, 2)
        arr = (arr[:, 0] + 1j * arr[:, 1]).astype(np_dt)
    else:
        arr = np.array(vals, dtype=np_dt)
    if arr.size == n:
        return arr.reshape(shape)
    if arr.size == 0:
        return np.zeros(shape, np_dt)
    # TF's compact form: the last value repeats to fill the shape
    return np.concatenate([arr, np.full(n - arr.size, arr[-1], np_dt)]).reshape(shape) if arr.size < n else arr[:n].reshape(shape)


def attr_value(v, where: str):
    """AttrValue -> str / int / float / bool / dtype name / shape tuple / numpy array / list / function name."""
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "s":
        return v.s.decode("utf-8", "replace")
    if kind in ("i", "f", "b"):
        return getattr(v, kind)
    if kind == "type":
        return dtype_name(v.type)
    if kind == "shape":
        return shape_of(v.shape)
    if kind == "tensor":
        return tensor_value(v.tensor, where)
    if kind == "func":
        return v.func.name
    if kind == "placeholder":
        return "$" + v.placeholder
    lst = v.list
    for name in ("s", "i", "f", "b", "type", "shape", "tensor", "func"):
        items = getattr(lst, name)
        if len(items):
            if name == "s":
                return [x.decode("utf-8", "replace") for x in items]
            if name == "type":
                return [dtype_name(x) for x in items]
            if name == "shape":
                return [shape_of(x) for x in items]
            if name == "tensor":
                return [tensor_value(x, where) for x in items]
            if name == "func":
                return [x.name for x in items]
            return list(items)
    return []
