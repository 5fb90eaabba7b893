"""Quantization ops and Resize modes against onnxruntime, native and jit: a small quantized network (dynamic
quantization, integer matmul and convolution, QLinear ops with per-channel weight scales, dequantization) and
Resize in cubic / antialias / crop-and-resize modes."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.passes.prepare import prepare
from xcviz.loaders.onnx_model import graph_from_model
from xcviz.runtime.execute import execute
from xcviz.runtime.inputs import bind_inputs
from xcviz.runtime.jit import CompileCache

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _run_both(model, feeds, rtol=0.0, atol=0.0):
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    g = prepare(graph_from_model(model, "m"), onnx=True)
    for mode in ("native", "jit"):
        got = list(execute(g, bind_inputs(g, feeds), mode, cache=CompileCache()).outputs.values())
        assert len(got) == len(want)
        for k, (a, b) in enumerate(zip(got, want)):
            assert a.shape == b.shape and a.dtype == b.dtype, (mode, k, a.shape, b.shape, a.dtype, b.dtype)
            if a.dtype.kind in "iub":
                # requantization rounds scaled sums: a tie may round the other way in float32 vs float64
                assert np.abs(a.astype(np.int64) - b.astype(np.int64)).max(initial=0) <= 1, (mode, k)
                assert np.mean(a == b) > 0.97, (mode, k)
            else:
                np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{mode} output {k}")


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


@pytest.mark.slow
def test_quantized_network_matches_onnxruntime():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.integers(-60, 60, (4, 3, 3, 3)).astype(np.int8)
    wm = rng.integers(0, 255, (16, 5)).astype(np.uint8)
    inits = [_init("w", w), _init("x_s", np.float32(0.02)), _init("x_zp", np.uint8(128)),
             _init("w_s", np.array([0.01, 0.02, 0.015, 0.03], np.float32)), _init("w_zp", np.zeros(4, np.int8)),
             _init("y_s", np.float32(0.05)), _init("y_zp", np.uint8(100)),
             _init("bias", rng.integers(-500, 500, 4).astype(np.int32)),
             _init("wm", wm), _init("wm_zp", np.uint8(120)), _init("shape", np.array([2, 64], np.int64)),
             _init("qa_s", np.float32(0.1)), _init("qa_zp", np.uint8(10)), _init("qb_s", np.float32(0.02)),
             _init("qb_zp", np.uint8(130)), _init("qy_s", np.float32(0.3)), _init("qy_zp", np.uint8(5)),
             _init("wci", w), _init("wci_zp", np.int8(3))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "x_s", "x_zp", "w", "w_s", "w_zp", "y_s", "y_zp", "bias"], ["yq"],
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["yq", "y_s", "y_zp"], ["y"]),
        helper.make_node("DynamicQuantizeLinear", ["x"], ["dq", "dq_s", "dq_zp"]),
        helper.make_node("Reshape", ["yq", "shape"], ["flat"]),
        helper.make_node("Slice", ["flat", "starts", "ends", "axes"], ["flat16"]),
        helper.make_node("MatMulInteger", ["flat16", "wm", "y_zp", "wm_zp"], ["mi"]),
        helper.make_node("QLinearMatMul", ["flat16", "qa_s", "qa_zp", "wm", "qb_s", "qb_zp", "qy_s", "qy_zp"], ["qm"]),
        helper.make_node("ConvInteger", ["xq", "wci", "x_zp", "wci_zp"], ["ci"], pads=[0, 0, 1, 1]),
    ]
    inits += [_init("starts", np.array([0], np.int64)), _init("ends", np.array([16], np.int64)),
              _init("axes", np.array([1], np.int64))]
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in (
        ("y", TensorProto.FLOAT), ("dq", TensorProto.UINT8), ("dq_s", TensorProto.FLOAT),
        ("dq_zp", TensorProto.UINT8), ("mi", TensorProto.INT32), ("qm", TensorProto.UINT8),
        ("ci", TensorProto.INT32))]
    graph = helper.make_graph(nodes, "quant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              outs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    _run_both(model, {"x": x}, rtol=1e-6, atol=1e-6)


RESIZE = [
    dict(mode="cubic", coordinate_transformation_mode="half_pixel", scales=[1, 1, 1.7, 0.6]),
    dict(mode="cubic", coordinate_transformation_mode="align_corners", cubic_coeff_a=-0.5, exclude_outside=1,
         scales=[1, 1, 2.0, 2.0]),
    dict(mode="linear", coordinate_transformation_mode="half_pixel", antialias=1, scales=[1, 1, 0.4, 0.75]),
    dict(mode="cubic", coordinate_transformation_mode="half_pixel", antialias=1, scales=[1, 1, 0.5, 0.6]),
    dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0,
         roi=[0, 0, 0.2, -0.1, 1, 1, 0.9, 0.8], sizes=[1, 2, 5, 6]),
    dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil",
         keep_aspect_ratio_policy="not_smaller", sizes=[1, 2, 5, 5]),
    dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric", scales=[1, 1, 1.6, 0.7]),
    dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel", scales=[1, 1, 0.5, 3.0]),
]


@pytest.mark.parametrize("case", RESIZE, ids=lambda c: "-".join(f"{v}" for k, v in c.items() if k in (
    "mode", "coordinate_transformation_mode", "antialias", "keep_aspect_ratio_policy")))
@pytest.mark.slow
def test_resize_modes_match_onnxruntime(case):
    case = dict(case)
    x = np.random.default_rng(5).standard_normal((1, 2, 7, 9)).astype(np.float32)
    inits = [_init("roi", np.array(case.pop("roi", []), np.float32))]
    ins = ["x", "roi"]
    if "scales" in case:
        inits.append(_init("scales", np.array(case.pop("scales"), np.float32)))
        ins.append("scales")
    else:
        inits.append(_init("sizes", np.array(case.pop("sizes"), np.int64)))
        ins += ["", "sizes"]
    node = helper.make_node("Resize", ins, ["y"], **case)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    _run_both(model, {"x": x}, rtol=1e-5, atol=1e-5)
