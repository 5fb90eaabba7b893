"""The Cast matrix against onnxruntime: every pair of bool, the integers, float16, float32, float64 and bfloat16,
native and jit, on values every pair converts without undefined behaviour (in range, non-negative)."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.passes.prepare import prepare
from xcviz.loaders.onnx_model import graph_from_model
from xcviz.runtime.execute import execute
from xcviz.runtime.jit import CompileCache

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
ml_dtypes = pytest.importorskip("ml_dtypes")
from onnx import TensorProto, helper  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

TYPES = {"bool": TensorProto.BOOL, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
         "int16": TensorProto.INT16, "uint16": TensorProto.UINT16, "int32": TensorProto.INT32,
         "uint32": TensorProto.UINT32, "int64": TensorProto.INT64, "uint64": TensorProto.UINT64,
         "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
         "bfloat16": TensorProto.BFLOAT16}


def _values(src: str) -> np.ndarray:
    if src == "bool":
        return np.array([True, False, True, True])
    if src in ("float16", "float32", "float64", "bfloat16"):
        v = np.array([0, 0.5, 1, 1.5, 2.5, 3.75, 7.2, 100.25, 126.5, 0.1])
    else:
        v = np.array([0, 1, 2, 3, 7, 100, 127, 5])
    return v.astype(ml_dtypes.bfloat16 if src == "bfloat16" else src)


def _model(src: str, for_ort: bool):
    """One Cast per target type. onnxruntime's Python API has no bfloat16 arrays: for it, a bfloat16 input
    arrives as float32 through a Cast, and the bfloat16 output leaves through a Cast to float32 (both exact)."""
    bf_in = for_ort and src == "bfloat16"
    nodes = [helper.make_node("Cast", ["x_f32"], ["x"], to=TensorProto.BFLOAT16)] if bf_in else []
    outs = []
    for d, t in sorted(TYPES.items()):
        nodes.append(helper.make_node("Cast", ["x"], [f"to_{d}"], to=t))
        if for_ort and d == "bfloat16":
            nodes.append(helper.make_node("Cast", ["to_bfloat16"], ["to_bfloat16_f32"], to=TensorProto.FLOAT))
            outs.append(helper.make_tensor_value_info("to_bfloat16_f32", TensorProto.FLOAT, None))
        else:
            outs.append(helper.make_tensor_value_info(f"to_{d}", t, None))
    x_in = helper.make_tensor_value_info("x_f32" if bf_in else "x", TensorProto.FLOAT if bf_in else TYPES[src], None)
    return helper.make_model(helper.make_graph(nodes, "cast", [x_in], outs),
                             opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("src", sorted(TYPES))
def test_cast_row_matches_onnxruntime(src):
    x = _values(src)
    feed = {"x_f32": x.astype(np.float32)} if src == "bfloat16" else {"x": x}
    want = ort.InferenceSession(_model(src, True).SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, feed)
    g = prepare(graph_from_model(_model(src, False), "cast"), onnx=True)
    for mode in ("native", "jit"):
        got = execute(g, {"x": x}, mode, cache=CompileCache()).outputs
        for (d, _), ref in zip(sorted(TYPES.items()), want):
            a = got[f"to_{d}"]
            assert str(a.dtype) == (d if d != "bool" else "bool"), (mode, src, d)
            np.testing.assert_array_equal(a.astype(np.float64), ref.astype(np.float64), err_msg=f"{mode} {src}->{d}")


def test_float8_saturates_and_int4_wraps_like_onnx():
    x = np.array([1e6, -1e6, np.inf, -np.inf, np.nan, 300.0, 0.3], np.float32)
    from xcviz.ops import REGISTRY

    cast = REGISTRY.ops["cast"].native
    y = cast({"to": TensorProto.FLOAT8E4M3FN}, x).astype(np.float32)
    assert y[:4].tolist() == [448.0, -448.0, 448.0, -448.0] and np.isnan(y[4]) and y[5] == 288.0
    z = cast({"to": TensorProto.FLOAT8E4M3FN, "saturate": 0}, x).astype(np.float32)
    assert np.isnan(z[:5]).all()
    w = cast({"to": TensorProto.INT4}, np.array([7.0, 8.0, 9.0, -9.0], np.float32)).astype(np.int32)
    assert w.tolist() == [7, -8, -7, 7]


SUB_BYTE = {"int4": TensorProto.INT4, "uint4": TensorProto.UINT4, "int2": TensorProto.INT2, "uint2": TensorProto.UINT2}


def _sub_byte_model(to: int, src: int = TensorProto.FLOAT):
    """x -> Cast(to) -> Cast(float): onnxruntime's Python API has no 2- and 4-bit arrays, so the value leaves as
    float32 (exact for every 2- and 4-bit integer)."""
    nodes = [helper.make_node("Cast", ["x"], ["t"], to=to), helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT)]
    g = helper.make_graph(nodes, "sub_byte", [helper.make_tensor_value_info("x", src, [None])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 25)])
    m.ir_version = 11
    return m


@pytest.mark.parametrize("dst", sorted(SUB_BYTE))
@pytest.mark.parametrize("src", ["float32", "float16", "int32", "int8"])
def test_sub_byte_casts_match_onnxruntime_and_the_reference(src, dst):
    """Integer-valued inputs (the node tests' -9..15): in range every runtime agrees; out of range the spec leaves
    float sources undefined, and integer sources wrap (discard the high bits), which onnxruntime does for both.
    xcviz wraps both, whatever ml_dtypes version is installed (0.7 turned its own out-of-range casts into 0)."""
    from onnx.reference import ReferenceEvaluator

    x = np.arange(-9, 17).astype(src)
    m = _sub_byte_model(SUB_BYTE[dst], helper.np_dtype_to_tensor_dtype(np.dtype(src)))
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    info = ml_dtypes.iinfo(getattr(ml_dtypes, dst))
    inside = (x >= info.min) & (x <= info.max)
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0]
    np.testing.assert_array_equal(want[inside], ref[inside])  # the two references agree where the spec defines it
    g = prepare(graph_from_model(m, "sub_byte"), onnx=True)
    for mode in ("native", "jit"):
        got = execute(g, {"x": x}, mode, cache=CompileCache()).outputs["y"]
        np.testing.assert_array_equal(got, want, err_msg=f"{mode} {src}->{dst}")
