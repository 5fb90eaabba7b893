"""Control flow with its bodies: ONNX Loop and If keep their subgraphs (outer-scope reads become node inputs)
and run natively; the two greedy-decode exports run like onnxruntime; bad input is one line."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from xcviz.runtime.measure import compare

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402

EXPORTS = os.path.join(ROOT, "tests", "data", "exports")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["greedy_decode_torchscript", "greedy_whileloop_dynamo"])
def test_greedy_decode_loop_exports_run_like_onnxruntime(name):
    path = os.path.join(EXPORTS, f"{name}.onnx")
    g = xcviz.load(path)
    loop = next(n for n in g.nodes if n.op == "loop")
    assert str(loop.attrs["body"]).startswith("<subgraph ") and loop.attrs["_outer"]  # kept, with outer reads
    feeds = dict(np.load(path.replace(".onnx", ".inputs.npz")))
    want = dict(np.load(path.replace(".onnx", ".ort.npz")))
    for mode in ("native", "hybrid"):
        got = xcviz.run(g, feeds, mode=mode)
        assert set(got) == set(want)
        for k, ref in want.items():
            assert got[k].dtype == ref.dtype and got[k].shape == ref.shape
            if ref.dtype.kind in "iub":
                assert np.array_equal(got[k], ref), (mode, k)
            else:
                assert compare(got[k], ref)["max_rel"] <= 1e-4, (mode, k)


def _loop_model():
    """Sum of x * scale over a trip count, with an If in the body that reads an outer tensor (offset)."""
    then_g = helper.make_graph([helper.make_node("Add", ["acc_new", "offset"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, [3])])
    else_g = helper.make_graph([helper.make_node("Identity", ["acc_new"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, [3])])
    body = helper.make_graph(
        [helper.make_node("Mul", ["x", "scale"], ["xs"]),
         helper.make_node("Add", ["acc_in", "xs"], ["acc_new"]),
         helper.make_node("Greater", ["i", "two"], ["late"]),
         helper.make_node("If", ["late"], ["acc_out"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Identity", ["acc_out"], ["scan_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [3])])
    inits = [numpy_helper.from_array(np.array(5, np.int64), "M"), numpy_helper.from_array(np.array(True), "c"),
             numpy_helper.from_array(np.float32(1.5), "scale"), numpy_helper.from_array(np.array(2, np.int64), "two"),
             numpy_helper.from_array(np.zeros(3, np.float32), "acc0")]
    graph = helper.make_graph(
        [helper.make_node("Neg", ["x_in"], ["offset"]), helper.make_node("Relu", ["x_in"], ["x"]),
         helper.make_node("Loop", ["M", "c", "acc0"], ["acc", "scans"], body=body)],
        "loop_if", [helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, [5, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_loop_with_nested_if_and_outer_scope_reads(tmp_path):
    model = _loop_model()
    path = tmp_path / "loop_if.onnx"
    onnx.save(model, str(path))
    x = np.array([1.0, -2.0, 3.5], np.float32)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x_in": x})
    g = xcviz.load(str(path))
    loop = g.node("Loop_2")
    # the body's outer reads (x, scale, two and, through the nested If, offset) are the Loop's inputs
    assert loop.attrs["_n_inputs"] == 3 and set(loop.attrs["_outer"]) == {"x", "scale", "two", "offset"}
    assert "Neg_0" in loop.inputs and "Relu_1" in loop.inputs
    got = xcviz.run(g, {"x_in": x}, mode="native")
    np.testing.assert_allclose(got["acc"], want[0], rtol=1e-6)
    np.testing.assert_allclose(got["scans"], want[1], rtol=1e-6)
    assert "<subgraph body #" in xcviz.print_graph(g)


def test_two_producers_of_one_tensor_is_refused_naming_both(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="first"),
                               helper.make_node("Neg", ["x"], ["y"], name="second")], "dup",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "dup.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(XcvizError) as e:
        xcviz.load(str(path))
    assert "'y' is produced twice: by node 'first' and by node #1 'second'" in str(e.value)


def test_initializers_with_dims_but_no_data_load_as_shape_only_inputs(tmp_path):
    from google.protobuf import json_format

    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4, 3])  # dims, no values: weights stripped
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
                              "stripped", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])], [w])
    path = tmp_path / "stripped.json"
    path.write_text(json_format.MessageToJson(helper.make_model(graph)))
    g = xcviz.load(str(path))
    [wv] = [v for v in g.inputs if v.name == "w"]
    assert wv.data is None and wv.type.shape == (4, 3) and wv.type.dtype == "float32"
    assert [len(m) for m in xcviz.cluster(g, min_cluster_size=1).clusters] == [2]
    out = xcviz.run(g, {"x": np.ones((2, 4), np.float32), "w": np.eye(4, 3, dtype=np.float32)}, mode="native")
    assert out["z"].tolist() == [[1.0, 1.0, 1.0]] * 2


def test_scan_directions_axes_and_outer_reads_match_onnxruntime(tmp_path):
    """Running sum over axis 1 of x (reversed), scaled by an outer tensor; outputs stacked on axis 1 reversed."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "xt"], ["s_sum"]), helper.make_node("Mul", ["s_sum", "k"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["y_t"])], "scan_body",
        [helper.make_tensor_value_info("s_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("xt", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [2])])
    graph = helper.make_graph(
        [helper.make_node("Sqrt", ["kk"], ["k"]),
         helper.make_node("Scan", ["s0", "x"], ["s_final", "ys"], body=body, num_scan_inputs=1,
                          scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                          scan_output_directions=[1])],
        "scan", [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [2]),
                 helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5]),
                 helper.make_tensor_value_info("kk", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("s_final", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("ys", TensorProto.FLOAT, [2, 5])])
    path = tmp_path / "scan.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), str(path))
    rng = np.random.default_rng(0)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "x": rng.standard_normal((2, 5)).astype(np.float32),
             "kk": np.array([0.81, 1.21], np.float32)}
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    g = xcviz.load(str(path))
    assert g.node("Scan_1").attrs["_outer"] == ["k"]
    got = xcviz.run(g, feeds, mode="hybrid")
    np.testing.assert_allclose(got["s_final"], want[0], rtol=1e-6)
    np.testing.assert_allclose(got["ys"], want[1], rtol=1e-6)
