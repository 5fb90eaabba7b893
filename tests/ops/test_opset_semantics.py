"""Ops whose meaning changed between ONNX opsets compute the file's opset, natively and under JAX (vs onnxruntime)."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.conformance import Case, run_case

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper  # noqa: E402


def _case(op_type: str, opset: int, shape: tuple, attrs: dict) -> Case:
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"x": x})
    return Case(op_type, f"{op_type}_{opset}", model.SerializeToString(), [x], [y], 1e-5, 1e-6)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("shape,attrs", [((1, 10, 1, 1), {}), ((2, 3, 4), {}), ((2, 3, 4), {"axis": 0}),
                                         ((2, 3, 4), {"axis": -2}), ((2, 3, 4), {"axis": 2})])
@pytest.mark.parametrize("mode", ["native", "jit"])
def test_softmax_family_follows_the_opset(op_type, opset, shape, attrs, mode):
    assert run_case(_case(op_type, opset, shape, attrs), mode) == ("pass", None)


def test_squeezenet_style_softmax_sums_to_one_before_opset_13():
    case = _case("Softmax", 9 + 2, (1, 1000, 1, 1), {})
    assert abs(float(case.outputs[0].sum()) - 1.0) < 1e-4  # onnxruntime's own answer: a distribution
    assert run_case(case, "native") == ("pass", None)
