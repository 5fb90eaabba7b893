"""Write graphs/tiny_mlp_onnx.json: a small MLP classifier as ONNX protobuf JSON (json_format).

Deterministic (fixed seed); rerun with `python tools/make_onnx_json.py` after changing it.
"""
import os

import numpy as np
import onnx
from google.protobuf import json_format
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
w1 = numpy_helper.from_array(rng.standard_normal((16, 32)).astype(np.float32), "fc1.weight")
b1 = numpy_helper.from_array(np.zeros(32, np.float32), "fc1.bias")
w2 = numpy_helper.from_array(rng.standard_normal((32, 10)).astype(np.float32), "fc2.weight")
b2 = numpy_helper.from_array(np.zeros(10, np.float32), "fc2.bias")
nodes = [
    helper.make_node("MatMul", ["input", "fc1.weight"], ["h0"], name="fc1"),
    helper.make_node("Add", ["h0", "fc1.bias"], ["h1"], name="fc1_bias"),
    helper.make_node("Relu", ["h1"], ["h2"], name="act"),
    helper.make_node("MatMul", ["h2", "fc2.weight"], ["h3"], name="fc2"),
    helper.make_node("Add", ["h3", "fc2.bias"], ["logits"], name="fc2_bias"),
    helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    helper.make_node("TopK", ["probs", "k"], ["top_p", "top_i"], name="top5", axis=-1),
]
k = numpy_helper.from_array(np.array([5], np.int64), "k")
graph = helper.make_graph(
    nodes, "tiny_mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 16])],
    [helper.make_tensor_value_info("top_p", TensorProto.FLOAT, ["batch", 5]),
     helper.make_tensor_value_info("top_i", TensorProto.INT64, ["batch", 5])],
    [w1, b1, w2, b2, k])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="xcviz-examples")
onnx.checker.check_model(model)
out = os.path.join(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "graphs"), "tiny_mlp_onnx.json")
with open(out, "w", encoding="utf-8") as f:
    f.write(json_format.MessageToJson(model, indent=1) + "\n")
print("wrote", out)
