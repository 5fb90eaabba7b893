"""The ONNX node-test cases cached as data: an .npz of one byte array and a JSON index, read with allow_pickle=False.

conformance.collect makes the cases from onnx's generators once and keeps them here. A case's values are
arrays (any dtype, ml_dtypes' bfloat16 included), NumPy scalars, string arrays (object dtype), TensorProtos,
sequences (lists) and None (an empty optional): each is written as bytes plus what rebuilds it exactly
(dtype, shape), never as a pickle, so reading the cache runs no code from it.
"""
from __future__ import annotations

import json
import os

import numpy as np

_INDEX, _DATA = "index", "data"
VERSION = 1


def save(path: str, cases: list) -> None:
    """Write `cases` (conformance.Case) to `path` atomically."""
    blobs: list[bytes] = []
    size = 0

    def blob(raw: bytes) -> list[int]:  # (where in the one byte array: offset, length)
        nonlocal size
        blobs.append(raw)
        size += len(raw)
        return [size - len(raw), len(raw)]

    def value(v):
        if v is None:
            return None
        if isinstance(v, list):
            return {"seq": [value(x) for x in v]}
        if isinstance(v, (np.ndarray, np.generic)):
            a = np.asarray(v)
            if a.dtype.kind == "O":  # (string tensors)
                return {"strings": [str(x) for x in a.reshape(-1)], "shape": list(a.shape),
                        "scalar": isinstance(v, np.generic)}
            return {"dtype": a.dtype.name if a.dtype.kind == "V" else a.dtype.str, "shape": list(a.shape),
                    "bytes": blob(np.ascontiguousarray(a).tobytes()), "scalar": isinstance(v, np.generic)}
        if type(v).__name__ == "TensorProto":
            return {"tensor": blob(v.SerializeToString())}
        raise TypeError(f"a node-test value of type {type(v).__name__} has no cached form")

    index = [{"op": c.op, "name": c.name, "model": blob(c.model), "inputs": [value(v) for v in c.inputs],
              "outputs": [value(v) for v in c.outputs], "rtol": c.rtol, "atol": c.atol, "onnx_op": c.onnx_op}
             for c in cases]
    tmp = f"{path}.{os.getpid()}.tmp.npz"
    np.savez(tmp, **{_INDEX: np.frombuffer(json.dumps({"version": VERSION, "cases": index}).encode("utf-8"), np.uint8),
                     _DATA: np.frombuffer(b"".join(blobs), np.uint8)})
    os.replace(tmp, path)


def load(path: str) -> list[dict] | None:
    """Each case's fields (for conformance.Case), or None when the file is not this version's cache."""
    with np.load(path, allow_pickle=False) as z:
        doc = json.loads(z[_INDEX].tobytes().decode("utf-8"))
        if doc.get("version") != VERSION:
            return None
        data = z[_DATA].tobytes()

    def blob(where: list[int]) -> bytes:
        return data[where[0]:where[0] + where[1]]

    def value(d):
        if d is None:
            return None
        if "seq" in d:
            return [value(x) for x in d["seq"]]
        if "tensor" in d:
            import onnx

            t = onnx.TensorProto()
            t.ParseFromString(blob(d["tensor"]))
            return t
        if "strings" in d:
            a = np.empty(len(d["strings"]), object)
            a[:] = d["strings"]
            a = a.reshape(d["shape"])
        else:
            a = np.frombuffer(blob(d["bytes"]), _dtype(d["dtype"])).reshape(d["shape"]).copy()
        return a[()] if d["scalar"] else a

    return [{**c, "model": blob(c["model"]), "inputs": [value(v) for v in c["inputs"]],
             "outputs": [value(v) for v in c["outputs"]]} for c in doc["cases"]]


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:  # ml_dtypes' (bfloat16, float8_*): registered by name there
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
