"""TensorFlow's string ops natively (`tf.<Op>`): `AsString`, `StringLength`, `StringToNumber`, `StringJoin`.

Strings are object arrays of Python `str` (the loader decodes TF's bytes as UTF-8). XLA has no string type,
so these never compile (`devices` empty); they run in the native parts of a hybrid run."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from ..arrays import Unsupported, np_dtype
from ..registry import Entries

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

NONE = frozenset()
REASON = "string op: XLA has no string type"


def _format(a, dtype: np.dtype) -> str:
    """TF's AsString format: '%' + fill + width + '.' precision + the type's conversion (f, e or g for floats)."""
    width, precision = int(a.get("width", -1)), int(a.get("precision", -1))
    fill = str(a.get("fill") or "")
    spec = "%" + fill + (str(width) if width > -1 else "")
    if dtype.kind == "f":
        conv = "g" if a.get("shortest") else "e" if a.get("scientific") else "f"
        return spec + (f".{precision}" if precision > -1 else "") + conv
    return spec + "d"


def _as_string(xp, a, x):
    x = np.asarray(x)
    if x.dtype.kind == "b":
        return np.vectorize(lambda v: "true" if v else "false", otypes=[object])(x)
    if x.dtype.kind == "c":
        raise Unsupported("AsString of complex values")
    if x.dtype == object:
        return x
    fmt = _format(a, x.dtype)
    if x.dtype.kind == "f":  # C's printf of a float promotes it to double
        return np.vectorize(lambda v: _nonfinite(float(v)) or fmt % float(v), otypes=[object])(x)
    return np.vectorize(lambda v: fmt % int(v), otypes=[object])(x)


def _nonfinite(v: float) -> str | None:
    if v != v:
        return "nan" if np.copysign(1.0, v) > 0 else "-nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    return None


def _length(xp, a, x):
    unit = str(a.get("unit") or "BYTE")
    count = (lambda s: len(s)) if unit == "UTF8_CHAR" else (lambda s: len(s.encode("utf-8")))
    return np.vectorize(lambda s: count(str(s)), otypes=[np.int32])(np.asarray(x, dtype=object)).astype(np.int32)


def _to_number(xp, a, x):
    dt = np_dtype(a.get("out_type") or "float32")

    def parse(s) -> float | int:
        t = str(s).strip()
        try:
            return int(t, 10) if dt.kind in "iu" else float(t)
        except ValueError:
            raise Unsupported(f"StringToNumber: {t!r} is not a valid {dt.name} "
                              "(TensorFlow fails with InvalidArgument)") from None

    arr = np.asarray(x, dtype=object)
    return np.asarray([parse(s) for s in arr.reshape(-1)], dtype=dt).reshape(arr.shape)


def _join(xp, a, *xs):
    arrays = np.broadcast_arrays(*[np.asarray(v, dtype=object) for v in xs])
    sep = str(a.get("separator") or "")
    out = np.empty(arrays[0].shape, dtype=object)
    for idx in np.ndindex(out.shape):
        out[idx] = sep.join(str(v[idx]) for v in arrays)
    return out


def _typed(dtype: str | None):
    return lambda ctx: [TensorType(ctx.shape(0), dtype or ctx.attrs.get("out_type") or "float32")]


native = dict(devices=NONE, reason=REASON, min_inputs=1)
op("tf.AsString", **native, max_inputs=1, infer=_typed("string"), impl=_as_string,
   attrs={"precision": -1, "scientific": False, "shortest": False, "width": -1, "fill": ""},
   doc="TF AsString(input; precision, scientific, shortest, width, fill): printf-formatted (floats %f by default)")
op("tf.StringLength", **native, max_inputs=1, infer=_typed("int32"), impl=_length, attrs={"unit": "BYTE"},
   doc="TF StringLength(input; unit BYTE | UTF8_CHAR) -> int32")
op("tf.StringToNumber", **native, max_inputs=1, infer=_typed(None), impl=_to_number, attrs={"out_type": "float32"},
   doc="TF StringToNumber(string_tensor; out_type)")
op("tf.StringJoin", **native, infer=lambda ctx: [TensorType(None, "string")], impl=_join, attrs={"separator": ""},
   doc="TF StringJoin(inputs...; separator), broadcasting scalars")
