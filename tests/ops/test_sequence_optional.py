"""ONNX sequence and optional types: the loader reads them, the text form round-trips them, every op runs
natively like onnxruntime (and the onnx wheel's own sequence models), never inside an XLA cluster, and a case
xcviz cannot run is one clear 'unsupported' line."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.ir import TensorType
from xcviz.ir.containers import OptionalType, SequenceType
from xcviz.ops import REGISTRY, Unsupported

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

SEQ_OPS = ("SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase", "SequenceLength",
           "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalHasElement", "OptionalGetElement",
           "SequenceMap")
F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, path, opset=18):
    g = helper.make_graph(nodes, "seq", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    onnx.save(m, str(path))
    return str(path)


def _vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def _const(name, value):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value), name))


CASES = {
    # name: (nodes, graph inputs (name, shape), outputs)
    "insert_at_erase_length": (
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1),
         _const("p", np.int64(-1)), _const("z", np.int64(0)),
         helper.make_node("SequenceInsert", ["s", "y", "z"], ["s2"]),
         helper.make_node("SequenceErase", ["s2", "p"], ["s3"]),
         helper.make_node("SequenceAt", ["s3", "z"], ["first"]),
         helper.make_node("SequenceLength", ["s3"], ["n"]),
         helper.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=1)],
        [("x", [2, 4]), ("y", [2, 1])], [("first", [2, 1], F), ("n", [], TensorProto.INT64), ("cat", [2, 4], F)]),
    "construct_stack_split_sizes": (
        [helper.make_node("SequenceConstruct", ["x", "y"], ["s"]),
         helper.make_node("ConcatFromSequence", ["s"], ["st"], axis=0, new_axis=1),
         _const("sz", np.array([1, 3], np.int64)),
         helper.make_node("SplitToSequence", ["x", "sz"], ["parts"], axis=1),
         _const("one", np.int64(1)),
         helper.make_node("SequenceAt", ["parts", "one"], ["second"])],
        [("x", [2, 4]), ("y", [2, 4])], [("st", [2, 2, 4], F), ("second", [2, 3], F)]),
    "split_scalar_nokeepdims": (
        [_const("k", np.int64(3)),
         helper.make_node("SplitToSequence", ["x", "k"], ["parts"], axis=0),
         helper.make_node("SplitToSequence", ["x"], ["rows"], axis=1, keepdims=0),
         _const("neg", np.int64(-1)),
         helper.make_node("SequenceAt", ["parts", "neg"], ["last"]),
         helper.make_node("SequenceAt", ["rows", "neg"], ["col"]),
         helper.make_node("SequenceLength", ["parts"], ["n"])],
        [("x", [7, 2])], [("last", [1, 2], F), ("col", [7], F), ("n", [], TensorProto.INT64)]),
    "empty_then_insert": (
        [helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
         helper.make_node("SequenceLength", ["e"], ["n0"]),
         helper.make_node("SequenceInsert", ["e", "x"], ["s"]),
         helper.make_node("SequenceInsert", ["s", "x"], ["s2"]),
         helper.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=-1)],
        [("x", [2, 3])], [("n0", [], TensorProto.INT64), ("cat", [2, 6], F)]),
    "optional_roundtrip": (
        [helper.make_node("Optional", ["x"], ["o"]),
         helper.make_node("OptionalHasElement", ["o"], ["has"]),
         helper.make_node("OptionalGetElement", ["o"], ["back"]),
         helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(F, [2])),
         helper.make_node("OptionalHasElement", ["none"], ["has_none"])],
        [("x", [2, 3])], [("has", [], TensorProto.BOOL), ("back", [2, 3], F), ("has_none", [], TensorProto.BOOL)]),
}


def _ort(path, feeds):
    ort = pytest.importorskip("onnxruntime", reason="pip install onnxruntime to compare with it")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_sequence_ops_run_like_onnxruntime(name, tmp_path):
    nodes, ins, outs = CASES[name]
    path = _model(nodes, [_vi(n, s) for n, s in ins], [_vi(n, s, d) for n, s, d in outs], tmp_path / f"{name}.onnx")
    rng = np.random.default_rng(0)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in ins}
    want = _ort(path, feeds)
    g = xcviz.load(path)
    for mode in ("native", "hybrid"):
        got = xcviz.run(g, feeds, mode=mode)
        for k, ref in want.items():
            assert got[k].dtype == ref.dtype and got[k].shape == ref.shape, (mode, k)
            assert np.array_equal(got[k], ref), (mode, k)


def test_the_loader_reads_sequence_and_optional_types(tmp_path):
    nodes, ins, outs = CASES["insert_at_erase_length"]
    g = xcviz.load(_model(nodes, [_vi(n, s) for n, s in ins], [_vi(n, s, d) for n, s, d in outs], tmp_path / "m.onnx"))
    kinds = {n.op: n.outputs[0] for n in g.nodes}
    assert isinstance(kinds["split_to_sequence"], SequenceType) and kinds["split_to_sequence"].dtype == "float32"
    assert type(kinds["sequence_at"]) is TensorType and kinds["sequence_length"] == TensorType((), "int64")
    assert kinds["split_to_sequence"].nbytes() is None  # a sequence's length is only known at run time
    seq_in = helper.make_tensor_sequence_value_info("s", F, [2, "n"])
    opt_in = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.INT64, [3]))))
    path = _model([helper.make_node("SequenceLength", ["s"], ["n"]), helper.make_node("OptionalHasElement", ["o"], ["h"])],
                  [seq_in, opt_in], [_vi("n", [], TensorProto.INT64), _vi("h", [], TensorProto.BOOL)],
                  tmp_path / "typed.onnx")
    g = xcviz.load(path)
    types = {v.name: v.type for v in g.inputs}
    assert types["s"] == SequenceType((2, "n"), "float32") and str(types["s"]) == "seq<float32[2,n]>"
    assert types["o"] == OptionalType((3,), "int64", sequence=True) and str(types["o"]) == "opt<seq<int64[3]>>"


def test_the_text_form_round_trips_container_types(tmp_path):
    from xcviz.ir.text_parse import read_graph as parse
    from xcviz.ir.text_print import print_graph

    seq_in = helper.make_tensor_sequence_value_info("s", F, [2, "n"])
    opt_in = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3])))
    path = _model([helper.make_node("SequenceLength", ["s"], ["n"]), helper.make_node("OptionalGetElement", ["o"], ["v"])],
                  [seq_in, opt_in], [_vi("n", [], TensorProto.INT64), _vi("v", [3])], tmp_path / "t.onnx")
    g = xcviz.load(path)
    text = print_graph(g)
    assert "seq<f32[2,n]>" in text and "opt<f32[3]>" in text
    back = parse(text)
    assert [v.type for v in back.inputs] == [v.type for v in g.inputs]
    assert print_graph(back) == text


def test_sequence_ops_fall_back_with_xlas_reason():
    for name in SEQ_OPS:
        o = REGISTRY.get(name)
        assert o is not None and not o.devices and o.jax is None, name
        assert "static shapes" in o.reason or "empty" in o.reason, (name, o.reason)


def test_the_onnx_wheels_sequence_models_run_natively():
    """onnx/backend/test/data/simple/test_sequence_model1..8: every sequence op in small graphs."""
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "simple")
    for k in range(1, 9):
        folder = os.path.join(root, f"test_sequence_model{k}")
        model = onnx.load(os.path.join(folder, "model.onnx"))
        g = xcviz.load(os.path.join(folder, "model.onnx"))
        data = os.path.join(folder, "test_data_set_0")
        names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
        feeds = {}
        for j, n in enumerate(names):
            t = TensorProto()
            with open(os.path.join(data, f"input_{j}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            feeds[n] = numpy_helper.to_array(t)
        want = TensorProto()
        with open(os.path.join(data, "output_0.pb"), "rb") as f:
            want.ParseFromString(f.read())
        ref = numpy_helper.to_array(want)
        got = list(xcviz.run(g, feeds, mode="native").values())[0]
        assert got.shape == ref.shape and got.dtype == ref.dtype and np.allclose(got, ref), k


def test_bad_positions_and_empty_optionals_are_one_clear_error():
    seq = REGISTRY.get("SequenceAt").native
    from xcviz.ops.values import Seq

    s = Seq([np.zeros(2, np.float32)])
    with pytest.raises(Unsupported, match="position 3 is out of range"):
        seq({}, s, np.int64(3))
    with pytest.raises(Unsupported, match="empty optional"):
        REGISTRY.get("OptionalGetElement").native({}, None)
    with pytest.raises(Unsupported, match="not a sequence"):
        REGISTRY.get("SequenceLength").native({}, np.zeros(3))


def test_run_writes_a_sequence_output_as_numbered_tensors(tmp_path, run_cli):
    seq_out = helper.make_tensor_sequence_value_info("s", F, None)
    path = _model([helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("Relu", ["x"], ["r"])],
                  [_vi("x", [3, 2])], [seq_out, _vi("r", [3, 2])], tmp_path / "out.onnx")
    x = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    np.savez(tmp_path / "in.npz", x=x)
    code, out, err = run_cli("run", path, "--inputs", str(tmp_path / "in.npz"), "--check", "-o", str(tmp_path / "o.npz"))
    assert code == 0, err
    got = np.load(tmp_path / "o.npz")
    assert list(got) == ["s[0]", "s[1]", "s[2]", "r"]
    want = _ort(path, {"x": x})
    for k in range(3):
        assert np.array_equal(got[f"s[{k}]"], want["s"][k])


def test_sequence_and_optional_graph_inputs_take_lists_or_random_values(tmp_path):
    seq_in = helper.make_tensor_sequence_value_info("s", F, [2, 3])
    opt_in = helper.make_value_info("o", helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [3])))
    path = _model([helper.make_node("SequenceLength", ["s"], ["n"]),
                   helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
                   helper.make_node("OptionalHasElement", ["o"], ["h"])],
                  [seq_in, opt_in], [_vi("n", [], TensorProto.INT64), _vi("cat", [None, 3]), _vi("h", [], TensorProto.BOOL)],
                  tmp_path / "inputs.onnx")
    g = xcviz.load(path)
    parts = [np.full((2, 3), k, np.float32) for k in range(3)]
    got = xcviz.run(g, {"s": parts, "o": None}, mode="native")
    assert int(got["n"]) == 3 and not bool(got["h"])
    assert np.array_equal(got["cat"], np.concatenate(parts))
    got = xcviz.run(g, seed=1, mode="native")  # random: a sequence of two elements, a full optional
    assert int(got["n"]) == 2 and got["cat"].shape == (4, 3) and bool(got["h"])
