"""Newer ONNX ops inside small models as real exports use them (a Mamba/DeltaNet block, a deformable
conv head, a spectrogram front end): every node is a candidate, the model is one cluster, and the hybrid run
matches onnxruntime (or onnx's reference where onnxruntime fails the op's node tests) within 1e-4 relative."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import xcviz
from xcviz.runtime.measure import compare

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def _model(nodes, inputs, outputs, weights, opset):
    graph = helper.make_graph(nodes, "m", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_empty_tensor_value_info(o) for o in outputs],
                              [numpy_helper.from_array(v, n) for n, v in weights.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(tmp_path, m, feeds, engine):
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    if engine == "ort":
        ort = pytest.importorskip("onnxruntime", reason="pip install onnxruntime to compare with it")
        want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    else:
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(m).run(None, feeds)
    g = xcviz.load(str(path))
    c = xcviz.cluster(g, min_cluster_size=1)
    assert all(c.candidate), [(n.name, r) for n, r in zip(g.nodes, c.reason) if r]
    assert len(c.clusters) == 1
    out = xcviz.run(g, feeds, mode="hybrid", clustering=c)
    for got, ref in zip(out.values(), want):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert compare(got, ref)["max_rel"] <= 1e-4, compare(got, ref)


def test_gated_deltanet_block_matches_onnxruntime(tmp_path):
    rng = np.random.default_rng(0)
    d, h = 16, 2
    w = {k: (rng.standard_normal(s) * 0.3).astype(np.float32) for k, s in
         (("conv_w", (d, 1, 4)), ("conv_b", (d,)), ("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wg", (d, h)),
          ("wb", (d, h)))}
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
             helper.make_node("CausalConvWithState", ["xt", "conv_w", "conv_b", "past"], ["c", "state"],
                              activation="silu"),
             helper.make_node("Transpose", ["c"], ["u"], perm=[0, 2, 1]),
             *[helper.make_node("MatMul", ["u", f"w{k}"], [k]) for k in "qkvgb"],
             helper.make_node("Softplus", ["g"], ["gs"]), helper.make_node("Neg", ["gs"], ["decay"]),
             helper.make_node("Sigmoid", ["b"], ["beta"]),
             helper.make_node("LinearAttention", ["q", "k", "v", "", "decay", "beta"], ["y", "S"], q_num_heads=h,
                              kv_num_heads=h),
             helper.make_node("Add", ["y", "x"], ["out"])]
    m = _model(nodes, [("x", [2, 8, d]), ("past", [2, d, 3])], ["out", "state", "S"], w, 27)
    feeds = {"x": rng.standard_normal((2, 8, d)).astype(np.float32),
             "past": rng.standard_normal((2, d, 3)).astype(np.float32)}
    _check(tmp_path, m, feeds, "ort")


def test_deformable_conv_head_matches_onnxruntime(tmp_path):
    rng = np.random.default_rng(1)
    w = {"w_off": (rng.standard_normal((18, 4, 3, 3)) * 0.2).astype(np.float32),
         "w_mask": (rng.standard_normal((9, 4, 3, 3)) * 0.2).astype(np.float32),
         "w": (rng.standard_normal((8, 4, 3, 3)) * 0.2).astype(np.float32), "b": np.zeros(8, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w_off"], ["off"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w_mask"], ["mlogit"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["mlogit"], ["mask"]),
             helper.make_node("DeformConv", ["x", "w", "off", "b", "mask"], ["y"], kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["y"], ["out"])]
    m = _model(nodes, [("x", [2, 4, 9, 7])], ["out"], w, 22)
    _check(tmp_path, m, {"x": rng.standard_normal((2, 4, 9, 7)).astype(np.float32)}, "ort")


def test_spectrogram_front_end_matches_onnx_reference(tmp_path):
    rng = np.random.default_rng(2)
    w = {"step": np.array(16, np.int64), "window": np.hanning(64).astype(np.float32),
         "axes": np.array([-1], np.int64)}
    nodes = [helper.make_node("STFT", ["x", "step", "window"], ["spec"]),
             helper.make_node("Mul", ["spec", "spec"], ["sq"]),
             helper.make_node("ReduceSum", ["sq", "axes"], ["power"], keepdims=0),
             helper.make_node("DFT", ["spec"], ["back"], inverse=1)]
    m = _model(nodes, [("x", [2, 256, 1])], ["power", "back"], w, 20)
    _check(tmp_path, m, {"x": rng.standard_normal((2, 256, 1)).astype(np.float32)}, "onnx")
