"""Keras models and tf.functions as TensorFlow writes them (tests/data/tf_keras, tools/tf_keras_corpus.py) run in
xcviz natively, hybrid and jit equal to TensorFlow's own outputs; no TensorFlow needed."""
from __future__ import annotations

import gzip
import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.errors import XcvizError
from tests.support.paths import TESTS

DATA = os.path.join(TESTS, "data", "tf_keras")
INDEX = json.load(open(os.path.join(DATA, "index.json"), encoding="utf-8"))
SMALL = ["attention_encoder", "conv1d", "dynamic_conv", "jit_call", "layers_zoo", "math_zoo", "ops_zoo", "random_strings",
         "text_bigru", "text_lstm", "var_in_function", "while_cond"]
LOWERED = ["switch_case", "text_bigru", "text_lstm", "while_cond"]  # frozen with TF's default lowering (v1 control flow)
APPLICATIONS = ["mobilenet_v1", "mobilenet_v2"]  # frozen .pb only (gzipped: random weights on a 1/64 grid)


def io(name: str):
    with np.load(os.path.join(DATA, f"{name}_io.npz")) as z:
        feeds = {k[3:]: z[k] for k in z.files if k.startswith("in_")}
        ref = {k[4:]: z[k] for k in z.files if k.startswith("out_")}
    return feeds, ref


def path_of(name: str, form: str, tmp_path) -> str:
    if form == "savedmodel":
        return os.path.join(DATA, f"{name}_savedmodel")
    plain = os.path.join(DATA, f"{name}_frozen.pb")
    if os.path.isfile(plain):
        return plain
    with open(plain + ".gz", "rb") as f:
        data = gzip.decompress(f.read())
    out = tmp_path / f"{name}_frozen.pb"
    out.write_bytes(data)
    return str(out)


def outputs_by_key(graph, out: dict, ref: dict, form: str) -> dict:
    """The run's outputs under TF's signature keys (a frozen graph's outputs are the sorted keys, in order)."""
    if form == "savedmodel":
        return out
    return dict(zip(sorted(ref), out.values()))


def assert_equal_to_tf(got: dict, ref: dict, atol: float = 2e-5) -> float:
    worst = 0.0
    assert sorted(got) == sorted(ref)
    for k, want in ref.items():
        have = got[k]
        if want.dtype.kind == "U":
            assert [str(s) for s in np.asarray(have).reshape(-1)] == list(want.reshape(-1)), k
            continue
        have = np.asarray(have)
        assert have.shape == want.shape, (k, have.shape, want.shape)
        assert have.dtype == want.dtype, (k, have.dtype, want.dtype)
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(have, want, err_msg=k)
        else:
            err = float(np.max(np.abs(have.astype(np.float64) - want), initial=0.0))
            scale = float(np.max(np.abs(want), initial=1.0))
            assert err <= atol * max(scale, 1.0), (k, err)
            worst = max(worst, err)
    return worst


@pytest.mark.parametrize("form", ["savedmodel", "frozen"])
@pytest.mark.parametrize("name", SMALL)
@pytest.mark.parametrize("mode", ["native", "hybrid"])
def test_runs_equal_to_tensorflow(name, form, mode, tmp_path):
    feeds, ref = io(name)
    graph = xcviz.load(path_of(name, form, tmp_path))
    if form == "savedmodel":  # inputs are keyed by the signature's names, as outputs are
        assert sorted(v.name for v in graph.inputs) == sorted(feeds)
    out = xcviz.run(graph, feeds, mode=mode)
    assert_equal_to_tf(outputs_by_key(graph, out, ref, form), ref)


@pytest.mark.slow
@pytest.mark.parametrize("name", APPLICATIONS)
def test_keras_applications_equal_to_tensorflow(name, tmp_path):
    feeds, ref = io(name)
    graph = xcviz.load(path_of(name, "frozen", tmp_path))
    ops = {n.op_type for n in graph.nodes}
    assert {"tf.DepthwiseConv2dNative", "tf.Relu6", "tf.Pad"} <= ops
    for mode in ("native", "hybrid"):
        out = xcviz.run(graph, {graph.inputs[0].name: feeds["image"]}, mode=mode)
        assert_equal_to_tf(outputs_by_key(graph, out, ref, "frozen"), ref)


@pytest.mark.parametrize("name", ["while_cond", "text_lstm", "text_bigru", "conv1d"])
def test_jit_lowerings_equal_to_tensorflow(name):
    """mode="jit" traces every op it can with its JAX lowering: While/If (lax.while_loop, lax.cond, unrolled),
    Pad/MirrorPad, GatherV2, ReverseV2, SpaceToBatchND, TensorLists inside unrolled bodies."""
    feeds, ref = io(name)
    graph = xcviz.load(path_of(name, "savedmodel", None))
    assert_equal_to_tf(xcviz.run(graph, feeds, mode="jit"), ref)


def test_every_clusterable_op_compiles_equal_to_tensorflow():
    """With clusters of any size, every op TF would compile in ops_zoo runs under XLA (depthwise with stride
    and dilation, MirrorPad SYMMETRIC, GatherV2 batch_dims, ReverseV2, SpaceToBatchND, stateless RNG, a call)."""
    feeds, ref = io("ops_zoo")
    graph = xcviz.load(path_of("ops_zoo", "savedmodel", None))
    clustering = xcviz.cluster(graph, min_cluster_size=1)
    clustered = {graph.nodes[i].op_type for c in clustering.clusters for i in c}
    assert {"tf.DepthwiseConv2dNative", "tf.MirrorPad", "tf.GatherV2", "tf.ReverseV2", "tf.SpaceToBatchND",
            "tf.StatelessRandomUniform"} <= clustered
    assert_equal_to_tf(xcviz.run(graph, feeds, mode="hybrid", clustering=clustering), ref)


def test_validate_compiles_the_functional_control_flow():
    """TF clusters the StatelessWhile and the StatelessIf of while_cond; both compile and match native."""
    feeds, _ = io("while_cond")
    graph = xcviz.load(os.path.join(DATA, "while_cond_savedmodel"))
    clustering = xcviz.cluster(graph, min_cluster_size=1)
    clustered = {graph.nodes[i].op_type for c in clustering.clusters for i in c}
    assert {"tf.StatelessWhile", "tf.StatelessIf"} <= clustered
    report = xcviz.validate(graph, clustering, inputs=feeds)
    assert len(report.clusters) == len(clustering.clusters)
    assert [c.status for c in report.clusters] == ["ok"] * len(clustering.clusters)


def test_signature_input_names_and_old_name_refused():
    graph = xcviz.load(os.path.join(DATA, "conv1d_savedmodel"))
    assert [v.name for v in graph.inputs] == ["signal"]
    feeds, _ = io("conv1d")
    with pytest.raises(XcvizError, match="unknown input 'serving_default_signal'"):
        xcviz.run(graph, {"serving_default_signal": feeds["signal"]})


def _graphdef_with_unused_placeholder() -> bytes:
    from xcviz.loaders.tensorflow.attrs import tf_dtype_enum
    from xcviz.loaders.tensorflow.protos import message_classes

    gd = message_classes()["GraphDef"]()
    for name in ("x", "unused_control_flow_input_1"):
        ph = gd.node.add(name=name, op="Placeholder")
        ph.attr["dtype"].type = tf_dtype_enum("float32")
        for d in (2, 3):
            ph.attr["shape"].shape.dim.add(size=d)
    relu = gd.node.add(name="y", op="Relu6", input=["x"])
    relu.attr["T"].type = tf_dtype_enum("float32")
    return gd.SerializeToString()


def test_unconsumed_placeholder_is_optional(tmp_path):
    """A frozen graph keeps placeholders nothing reads (unused_control_flow_input_1): not demanded as inputs;
    the ones something reads still are."""
    path = tmp_path / "frozen.pb"
    path.write_bytes(_graphdef_with_unused_placeholder())
    graph = xcviz.load(str(path))
    assert {v.name for v in graph.inputs} == {"x", "unused_control_flow_input_1"}
    x = np.array([[-1.0, 3.0, 7.0], [0.5, 6.5, -0.0]], np.float32)
    (y,) = xcviz.run(graph, {"x": x}, mode="native").values()
    np.testing.assert_array_equal(y, np.clip(x, 0, 6))
    from xcviz.runtime.inputs import bind_inputs

    assert sorted(bind_inputs(graph, {"x": x}, seed=None)) == ["unused_control_flow_input_1", "x"]
    with pytest.raises(XcvizError, match="missing input 'x'"):  # (--inputs without --seed: nothing made up)
        bind_inputs(graph, {"unused_control_flow_input_1": x}, seed=None)


def test_jit_compile_call_kept_and_judged_by_its_body():
    """A jit_compile function is not inlined (TF keeps the call); in the SavedModel its body reads a variable,
    so auto-clustering refuses it and the ops around it form two clusters, as TF's rule_resource_in_call dump
    shows; frozen, the variable is a constant and the call joins one cluster."""
    graph = xcviz.load(os.path.join(DATA, "jit_call_savedmodel"))
    calls = [j for j, n in enumerate(graph.nodes) if n.op_type == "tf.StatefulPartitionedCall"]
    assert len(calls) == 1 and graph.nodes[calls[0]].attrs.get("_XlaMustCompile") is True
    clustering = xcviz.cluster(graph, min_cluster_size=1)
    assert clustering.cluster_of[calls[0]] == -1
    assert "resource variable op in called function" in clustering.reason[calls[0]]
    assert len(clustering.clusters) == 2
    frozen = xcviz.load(os.path.join(DATA, "jit_call_frozen.pb"))
    c = xcviz.cluster(frozen, min_cluster_size=1)
    assert len(c.clusters) == 1
    assert all(c.cluster_of[j] == 0 for j, n in enumerate(frozen.nodes) if n.op_type == "tf.StatefulPartitionedCall")


@pytest.mark.parametrize("mode", ["native", "hybrid", "jit"])
def test_case_runs_its_branch(mode):
    """StatelessCase (tf.switch_case) in the SavedModel: the indexed branch, an index out of range the last one
    (lax.switch under JAX when the index is traced). Freezing lowers Case to v1 _SwitchN/Merge, which xcviz
    runs in its frame executor."""
    feeds, ref = io("switch_case")
    graph = xcviz.load(os.path.join(DATA, "switch_case_savedmodel"))
    assert sum(n.op_type == "tf.StatelessCase" for n in graph.nodes) == 2
    assert_equal_to_tf(xcviz.run(graph, feeds, mode=mode), ref)
    frozen = xcviz.load(os.path.join(DATA, "switch_case_frozen.pb"))
    assert any(n.op_type == "tf._SwitchN" for n in frozen.nodes)
    assert_equal_to_tf(outputs_by_key(frozen, xcviz.run(frozen, feeds, mode=mode), ref, "frozen"), ref)
    saved = xcviz.load(os.path.join(DATA, "switch_case_savedmodel"))
    for k in (0, 2, 7, -1):  # every branch, and an index out of range (the last branch), frozen as in the SavedModel
        ks = dict(feeds, k=np.int32(k))
        (a,), (b,) = xcviz.run(frozen, ks, mode=mode).values(), xcviz.run(saved, ks, mode=mode).values()
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", LOWERED)
@pytest.mark.parametrize("mode", ["native", "hybrid", "jit"])
@pytest.mark.filterwarnings("ignore:cluster_.*ran natively")  # jit: a TensorList passing an Identity stays native
def test_lowered_frozen_graphs_run_equal_to_tensorflow(name, mode):
    """convert_variables_to_constants_v2 as TF does by default: While/If/Case lowered to v1 control flow (frames,
    TensorLists in loops) and the unused_control_flow_input_N placeholders the lowering leaves, which nothing reads
    and have no shape: they get no value and need none."""
    with np.load(os.path.join(DATA, f"{name}_lowered_io.npz")) as z:
        feeds = {k[3:]: z[k] for k in z.files if k.startswith("in_")}
        ref = {k[4:]: z[k] for k in z.files if k.startswith("out_")}
    graph = xcviz.load(os.path.join(DATA, f"{name}_lowered.pb"))
    assert {n.op_type for n in graph.nodes} & {"tf.Enter", "tf._SwitchN"}
    unused = [v.name for v in graph.inputs if v.name.startswith("unused_control_flow_input")]
    assert unused or name == "switch_case"
    out = xcviz.run(graph, feeds, mode=mode)
    assert_equal_to_tf(outputs_by_key(graph, out, ref, "frozen"), ref)


@pytest.mark.parametrize("mode", ["native", "hybrid"])
def test_keras_export_variables_come_from_the_savedmodel(mode):
    """Model.export(): the serving function captures handles named `dense/kernel_1`, ... that no object is named;
    the object graph binds them (SavedConcreteFunction.bound_inputs) to the variables the checkpoint holds."""
    feeds, ref = io("keras_export")
    graph = xcviz.load(os.path.join(DATA, "keras_export_savedmodel"))
    handles = [n for n in graph.nodes if n.op_type == "tf.VarHandleOp"]
    assert handles and all(n.attrs.get("value") is not None for n in handles)
    assert any(n.attrs["shared_name"].endswith("_1") for n in handles)
    assert_equal_to_tf(xcviz.run(graph, feeds, mode=mode), ref)


def test_each_unknown_dimension_is_its_own(run_cli, tmp_path):
    """A fully dynamic image input (None, None, None, 3), as keras.applications save it, fed 1x16x16x3: every
    command takes it (the '?' dims are not one shared symbol)."""
    feeds, ref = io("dynamic_conv")
    graph = xcviz.load(os.path.join(DATA, "dynamic_conv_savedmodel"))
    assert graph.inputs[0].type.shape == ("?", "?", "?", 3)
    np.savez(tmp_path / "in.npz", **feeds)
    for form in ("dynamic_conv_savedmodel", "dynamic_conv_frozen.pb"):
        path = os.path.join(DATA, form)
        code, out, err = run_cli("run", path, "--inputs", str(tmp_path / "in.npz"), "--repeats", "1",
                                 "-o", str(tmp_path / "out.npz"))
        assert code == 0, err
        with np.load(tmp_path / "out.npz") as z:
            assert_equal_to_tf(outputs_by_key(xcviz.load(path), {k: z[k] for k in z.files}, ref,
                                              "savedmodel" if "savedmodel" in form else "frozen"), ref)
        code, out, err = run_cli("validate", path, "--inputs", str(tmp_path / "in.npz"), "--repeats", "1")
        assert code == 0, err
        for cmd in (("cluster",), ("stats",), ("hlo", "--cluster", "0")):
            code, out, err = run_cli(cmd[0], path, *cmd[1:], "--inputs", str(tmp_path / "in.npz"))
            assert code == 0, (cmd, err)
