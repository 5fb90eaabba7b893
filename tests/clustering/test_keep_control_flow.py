"""A cluster holding functional control flow is kept whatever its size, as TF's MarkForCompilationPass keeps one
with has_functional_control_flow (While / If; here also ONNX's Loop / If / Scan), in the reference pass and in
the compiled one alike; the kept cluster runs hybrid equal to onnxruntime."""
from __future__ import annotations

import numpy as np
import pytest

import xcviz

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

F = TensorProto.FLOAT


def _vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def small_if_model():
    """ReduceSum > 0 -> If (Neg / Add): three nodes, one cluster below the minimum size of 4."""
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"], name="t_neg")], "then", [], [_vi("t", [3])])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["e"], name="e_add")], "else", [], [_vi("e", [3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
             helper.make_node("Greater", ["s", "zero"], ["c"], name="positive"),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g, name="if0")]
    g = helper.make_graph(nodes, "small_if", [_vi("x", [3])], [_vi("y", [3])],
                          [numpy_helper.from_array(np.float32(0), "zero")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def small_plain_model():
    """The same three-node shape without control flow: dropped below the minimum size, as before."""
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0, name="sum"),
             helper.make_node("Greater", ["s", "zero"], ["c"], name="positive"),
             helper.make_node("Where", ["c", "x", "x2"], ["y"], name="pick")]
    g = helper.make_graph(nodes, "small_plain", [_vi("x", [3]), _vi("x2", [3])], [_vi("y", [3])],
                          [numpy_helper.from_array(np.float32(0), "zero")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("impl", ["reference", "compiled"])
def test_functional_control_flow_keeps_a_small_cluster(tmp_path, monkeypatch, impl):
    if impl == "reference":  # (the executable spec in the compiled pass's place)
        from xcviz.clustering import mark, mark_reference

        monkeypatch.setattr(mark, "mark_for_compilation",
                            lambda g, c, o, progress=None: mark_reference.mark_for_compilation(g, c, o))
    path = str(tmp_path / "if.onnx")
    onnx.save(small_if_model(), path)
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert [[g.nodes[i].name for i in m] for m in c.clusters] == [["sum", "positive", "if0"]]
    plain = str(tmp_path / "plain.onnx")
    onnx.save(small_plain_model(), plain)
    g2 = xcviz.load(plain)
    c2 = xcviz.cluster(g2)
    assert c2.clusters == [] and c2.reason[g2.index["pick"]] == "cluster below minimum size (3 < 4)"
    # the kept cluster (an XLA Conditional inside) runs as onnxruntime does, on both branches
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for x in (np.array([1.0, 2.0, -0.5], np.float32), np.array([-1.0, 0.25, -3.0], np.float32)):
        got = xcviz.run(g, {"x": x}, mode="hybrid", clustering=c)
        np.testing.assert_allclose(got["y"], sess.run(None, {"x": x})[0], rtol=1e-6)


def test_one_rule_for_both_passes():
    """The exceptions to the minimum size live in one function, asked by the reference and the compiled pass."""
    from xcviz.clustering.result import keeps_cluster
    from xcviz.ops import REGISTRY

    assert all(keeps_cluster(REGISTRY.get(op), None) for op in ("Loop", "If", "Scan", "tf.While", "tf.StatelessWhile",
                                                               "tf.If", "tf.StatelessIf"))
    # TF counts a call (PartitionedCall) and v1 control flow as neither While nor If
    assert not any(keeps_cluster(REGISTRY.get(op), None) for op in ("tf.PartitionedCall", "tf.Merge", "Add"))
    assert keeps_cluster(REGISTRY.get("Add"), True)
    # TF's own rules (GraphDefs, the reference pass with TF's edges) read the same group
    from xcviz.clustering.tf_rules import _KEEP

    assert _KEEP == {"While", "StatelessWhile", "If", "StatelessIf"}
