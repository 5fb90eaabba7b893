"""Keras's dynamic-batch idioms keep their shapes: TF's shape ops (tf.Shape, StridedSlice, Pack, Range, ...) take
part in value propagation (passes/values.py), and the ops that read those values (tf.Reshape, tf.Tile, tf.Range)
give the shapes TensorFlow's outputs have; so `stats --inputs` estimates these frozen graphs (issue 36). On the
committed corpus (tests/data/tf_keras); no TensorFlow needed."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.ir import TensorType
from xcviz.ir.symbolic import Sym, eval_dim, parse
from xcviz.ops import REGISTRY
from xcviz.ops.rules import Ctx, ShapeError
from tests.support.paths import TESTS

DATA = os.path.join(TESTS, "data", "tf_keras")


def _types(path: str) -> dict:
    graph = xcviz.load(os.path.join(DATA, path))
    return {n.name: [t.shape for t in n.outputs] for n in graph.nodes}


def _feeds(name: str, tmp_path) -> str:
    with np.load(os.path.join(DATA, f"{name}_io.npz")) as z:
        np.savez(tmp_path / "in.npz", **{k[3:]: z[k] for k in z.files if k.startswith("in_")})
        ref = {k[4:]: z[k] for k in z.files if k.startswith("out_")}
    return str(tmp_path / "in.npz"), ref


def test_flatten_of_a_dynamic_batch_is_batch_by_features():
    """Keras Flatten: Reshape(x, Pack(StridedSlice(Shape(x), 0, 1; shrink), -1)) of a [?,6,6,4] activation is
    [?,144] (the `?` of the Shape is the one of x: 144*? / ?), and the Dense after it is [?,5]."""
    t = _types("flatten_dynamic_frozen.pb")
    assert t["sequential_1/flatten_1/Reshape"] == [("?", 144)]
    assert t["sequential_1/dense_1/MatMul"] == [("?", 5)]
    assert t["Identity"] == [("?", 5)]


def test_range_over_a_shape_entry_is_that_long():
    """tf.Range(0, Shape(x)[1], 1) of an x [?,6] is 6 long: its bounds are values of the shape chain."""
    t = _types("shape_chain_frozen.pb")
    assert t["range"] == [(6,)]
    assert t["mul_3"] == [("?", 6)]


def test_upsampling_tile_reads_its_computed_multiples():
    """Keras UpSampling2D (Repeat): Tile(x, multiples) whose multiples are computed (Pack of constants)."""
    t = _types("layers_zoo_frozen.pb")
    assert t["functional_1/up_sampling2d_1/Repeat/Tile"] == [(2, 8, 2, 8, 4)]


@pytest.mark.parametrize("name", ["flatten_dynamic", "shape_chain"])
def test_stats_with_inputs_estimates_the_frozen_graph(name, run_cli, tmp_path):
    """`stats --inputs` on the frozen graph: a numeric estimate and boundary bytes, no node of unknown cost."""
    feeds, _ = _feeds(name, tmp_path)
    code, out, err = run_cli("stats", os.path.join(DATA, f"{name}_frozen.pb"), "--inputs", feeds, "--json")
    assert code == 0, err
    s = json.loads(out)["stats"]
    assert isinstance(s["speedup_estimate"], float) and s["speedup_estimate"] > 0
    assert isinstance(s["boundary_bytes"], int) and s["boundary_bytes"] > 0
    if name == "flatten_dynamic":
        assert s["unknown_cost_nodes"] is None


def test_flatten_still_runs_equal_to_tensorflow(tmp_path):
    feeds, ref = _feeds("flatten_dynamic", tmp_path)
    graph = xcviz.load(os.path.join(DATA, "flatten_dynamic_frozen.pb"))
    with np.load(feeds) as z:
        out = xcviz.run(graph, {k: z[k] for k in z.files})
    (want,) = ref.values()
    (have,) = out.values()
    np.testing.assert_allclose(np.asarray(have), want, atol=2e-5)


def _ctx(types, consts, attrs=None, op=None):
    opdef = REGISTRY.ops[op]
    return Ctx(types, {**opdef.attrs, **(attrs or {})}, consts, [], 1)


def test_unknown_dims_go_through_view_ops_by_name():
    """StridedSlice / ExpandDims / Transpose of a tensor with symbolic dims keep them (x[:, -1, :] of [?,12,8]
    is [?,8]); a size that depends on a symbolic one (x[1:] of `?`) is not made up."""
    ss = REGISTRY.ops["tf.StridedSlice"]
    x = TensorType(("?", 12, 8), "float32")
    idx = [np.array(v, np.int32) for v in ([0, -1, 0], [0, 0, 0], [1, 1, 1])]
    attrs = {"begin_mask": 5, "end_mask": 5, "shrink_axis_mask": 2}
    ctx = _ctx([x] + [TensorType((3,), "int32")] * 3, [None, *idx], attrs, "tf.StridedSlice")
    assert ss.infer(ctx)[0].shape == ("?", 8)
    tail = [np.array([1], np.int32), np.array([0], np.int32), np.array([1], np.int32)]
    ctx = _ctx([x] + [TensorType((1,), "int32")] * 3, [None, *tail], {"end_mask": 1}, "tf.StridedSlice")
    assert ss.infer(ctx)[0].shape is None
    ctx = _ctx([TensorType(("batch", "?", 3), "float32"), TensorType((3,), "int32")],
               [None, np.array([2, 0, 1], np.int32)], None, "tf.Transpose")
    assert REGISTRY.ops["tf.Transpose"].infer(ctx)[0].shape == (3, "batch", "?")


def test_a_reshape_hole_never_becomes_an_unnamed_dim():
    """tf.Reshape(x[?,3], [2,-1]): the -1 is 3*?/2, not known; it stays unknown rather than a `?` that
    binding all `?`s to the batch size would then make wrong. [-1, 3] of [?,6,...] solves to an expression."""
    rs = REGISTRY.ops["tf.Reshape"]
    ctx = _ctx([TensorType(("?", 3), "float32"), TensorType((2,), "int32")], [None, np.array([2, -1], np.int32)],
               None, "tf.Reshape")
    assert rs.infer(ctx)[0].shape is None
    ctx = _ctx([TensorType((4, 3), "float32"), TensorType((2,), "int32")], [None, np.array([2, -1], np.int32)],
               None, "tf.Reshape")
    assert rs.infer(ctx)[0].shape == (2, 6)
    ctx = _ctx([TensorType((4, 3), "float32"), TensorType((2,), "int32")], [None, np.array([0, -1], np.int32)],
               None, "tf.Reshape")
    with pytest.raises(ShapeError):  # TF's 0 is a zero-size dim (12 elements do not fit 0 x n)
        rs.infer(ctx)


def test_unnamed_dim_in_expressions():
    """`?` is a name in symbolic expressions (144*?, ?^2), so their text parses back and binds."""
    assert str(Sym.of("?") * 144) == "144*?"
    assert parse("144*?") == Sym.of("?") * 144
    assert (Sym.of("?") * Sym.of("?") * 3).exact_div("?") == Sym.of("?") * 3
    assert eval_dim("144*?", {"?": 2}) == 288
    assert parse("N?") == Sym.name("N?")  # a file's odd name stays one name


def test_keras_lstm_output_through_its_tensor_list():
    """Keras LSTM (return_sequences=False): TensorListStack(while:3, [2,16]; num_elements=1) is [1,2,16] and the
    Dense on its last step [2,3]; the While's own outputs come from its output_shapes (a list handle stays
    unknown); the SavedModel's stack, declared [1,2,16] without a dtype, takes the element dtype."""
    t = _types("text_lstm_frozen.pb")
    assert t["functional_1/lstm_1/TensorArrayV2Stack/TensorListStack"] == [(1, 2, 16)]
    assert t["functional_1/dense_1/Softmax"] == [(2, 3)]
    assert t["functional_1/lstm_1/while"][:3] == [(), (), ()] and t["functional_1/lstm_1/while"][3] is None
    graph = xcviz.load(os.path.join(DATA, "text_lstm_savedmodel"))
    (stack,) = [n for n in graph.nodes if n.op_type == "tf.TensorListStack"]
    assert stack.outputs[0] == TensorType((1, 2, 16), "float32")


def test_call_without_declared_types_takes_its_body_types():
    """A frozen graph's jit_compile function stays a StatefulPartitionedCall with no _output_shapes: its outputs
    are its body's, inferred from the caller's input types."""
    assert _types("jit_call_frozen.pb")["StatefulPartitionedCall"] == [(3, 4)]
    assert _types("layers_zoo_frozen.pb")["functional_1/conv2d_1_2/StatefulPartitionedCall"] == [(2, 16, 16, 6)]


def test_conv_on_unnamed_spatial_dims():
    """A (?, ?, ?, 3) image: a stride-2 SAME conv's spatial sizes are names of their own (`?'`, never the
    unnamed `?`), the global pooling after it [?,4] and the Dense [?,5]."""
    t = _types("dynamic_conv_frozen.pb")
    assert t["functional_1/conv2d_1/convolution"] == [("?", "?'", "?'", 4)]
    assert t["functional_1/global_average_pooling2d_1/Mean"] == [("?", 4)]
    assert t["functional_1/dense_1/Softmax"] == [("?", 5)]


@pytest.mark.parametrize("name", ["dynamic_conv", "jit_call", "layers_zoo", "text_lstm", "text_bigru"])
def test_stats_estimates_more_frozen_graphs(name, run_cli, tmp_path):
    """`stats --inputs` gives a numeric estimate and bytes on the frozen Keras graphs that had none (issue 36):
    dynamic_conv's (?,?,?,3) input fed 1x16x16x3 is specialised axis by axis (the `?`s differ, so none binds)."""
    feeds, _ = _feeds(name, tmp_path)
    code, out, err = run_cli("stats", os.path.join(DATA, f"{name}_frozen.pb"), "--inputs", feeds, "--json")
    assert code == 0, err
    s = json.loads(out)["stats"]
    assert isinstance(s["speedup_estimate"], float) and s["speedup_estimate"] > 0
    assert isinstance(s["boundary_bytes"], int) and s["boundary_bytes"] > 0


def test_a_split_of_a_symbolic_axis_is_unknown_not_an_error():
    """tf.Split of a `?` axis: the size the rule tries (no real tensor's) does not divide; the rule says unknown
    (a load never fails on it)."""
    ctx = _ctx([TensorType((), "int32"), TensorType(("?", 4), "float32")], [np.array(0, np.int32), None],
               {"num_split": 2}, "tf.Split")
    ctx.num_outputs = 2
    assert [t.shape for t in REGISTRY.ops["tf.Split"].infer(ctx)] == [None, None]
    ctx = _ctx([TensorType((), "int32"), TensorType(("?", 4), "float32")], [np.array(1, np.int32), None],
               {"num_split": 2}, "tf.Split")
    ctx.num_outputs = 2
    assert [t.shape for t in REGISTRY.ops["tf.Split"].infer(ctx)] == [("?", 2), ("?", 2)]
