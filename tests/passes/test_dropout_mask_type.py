"""Dropout's mask output has a known type (bool, the input's shape), so models with Dropout get native-time estimates."""
import onnx
from onnx import TensorProto, helper

import xcviz


def test_dropout_mask_is_bool_of_input_shape(tmp_path):
    node = helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    path = tmp_path / "d.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    graph = xcviz.load(str(path))
    outs = graph.node("drop").outputs
    assert [(t.shape, t.dtype) for t in outs] == [((2, 3), "float32"), ((2, 3), "bool")]
