"""The node-test cases' cache (conformance_cache) is data, not a pickle: every case comes back exactly (dtypes,
ml_dtypes' bfloat16, NumPy scalars, string tensors, TensorProtos, sequences, empty optionals), read with
allow_pickle=False, and a cache of another version is made again rather than misread."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from xcviz import conformance_cache
from xcviz.conformance import Case, collect

onnx = pytest.importorskip("onnx")


def _same(a, b) -> bool:
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if a is None or isinstance(a, onnx.TensorProto):
        return (b is None) if a is None else type(b) is onnx.TensorProto and a == b
    x, y = np.asarray(a), np.asarray(b)
    return type(a) is type(b) and x.dtype == y.dtype and x.shape == y.shape and \
        (x.tolist() == y.tolist() if x.dtype.kind == "O" else x.tobytes() == y.tobytes())


def _cases() -> list[Case]:
    cache = os.environ.get("XCVIZ_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "xcviz")
    return collect(cache)


@pytest.mark.slow
def test_every_node_test_case_comes_back_exactly(tmp_path):
    cases = _cases()
    path = str(tmp_path / "cases.npz")
    conformance_cache.save(path, cases)
    with np.load(path, allow_pickle=False) as z:  # (no object array: nothing to unpickle)
        assert sorted(z.files) == ["data", "index"] and all(z[k].dtype == np.uint8 for k in z.files)
    back = [Case(**fields) for fields in conformance_cache.load(path)]
    assert len(back) == len(cases) > 1000
    for c, d in zip(cases, back):
        assert (c.op, c.name, c.model, c.rtol, c.atol, c.onnx_op) == (d.op, d.name, d.model, d.rtol, d.atol, d.onnx_op)
        assert _same(c.inputs, d.inputs) and _same(c.outputs, d.outputs), c.name


def test_each_kind_of_value_round_trips_and_another_version_reads_as_none(tmp_path):
    import ml_dtypes
    from onnx import numpy_helper

    values = [np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1.5, -2], dtype=ml_dtypes.bfloat16),
              np.float16(2.5), np.bool_(True), np.array(["a", "é", ""], dtype=object).reshape(3, 1),
              np.array([], dtype=object), numpy_helper.from_array(np.array([[1, 2]], np.int64), "t"),
              [np.array([1], np.uint8), [None, np.int8(3)]], None, np.zeros((0, 2), np.complex64)]
    case = Case("add", "test_x", b"\x00model", values, values[:2], 1e-3, 1e-7, "Add")
    path = str(tmp_path / "c.npz")
    conformance_cache.save(path, [case])
    (back,) = [Case(**f) for f in conformance_cache.load(path)]
    assert back == Case(**{**back.__dict__}) and _same(case.inputs, back.inputs) and _same(case.outputs, back.outputs)
    assert (back.op, back.name, back.model, back.rtol, back.atol, back.onnx_op) == \
        ("add", "test_x", b"\x00model", 1e-3, 1e-7, "Add")
    with np.load(path) as z:
        doc = json.loads(z["index"].tobytes())
        data = z["data"]
    doc["version"] += 1
    np.savez(path, index=np.frombuffer(json.dumps(doc).encode(), np.uint8), data=data)
    assert conformance_cache.load(path) is None
    with pytest.raises(TypeError):
        conformance_cache.save(path, [Case("add", "x", b"", [object()], [], 0, 0)])
