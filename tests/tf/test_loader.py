"""TensorFlow files in: frozen .pb, SavedModel (signature), TF's .pbtxt dumps; export --graphdef round-trips;
bad TF input is one line and exit 2."""
import json
import os

import pytest

from xcviz.clustering import run_clustering
from xcviz.pipeline import load_file as load
from xcviz.loaders.tensorflow.protos import message_classes, parse_text
from xcviz.pipeline import AnalysisOptions, analyse
from tests.support.paths import TESTS

ROOT = os.path.join(TESTS, "data", "tf_suite")
MODELS = os.path.join(ROOT, "models")
WHILE = os.path.join(ROOT, "while_v1", "grappler_off-min1", "before_mark_for_compilation.pbtxt")


@pytest.mark.parametrize("name", ["keras_cnn", "keras_transformer"])
def test_frozen_graph_and_savedmodel_load_with_the_recorded_io(name):
    meta = json.load(open(os.path.join(MODELS, f"{name}.json"), encoding="utf-8"))
    frozen = load(os.path.join(MODELS, f"{name}_frozen.pb"))
    saved = load(os.path.join(MODELS, f"{name}_savedmodel"))
    for g in (frozen, saved):
        assert len(g.inputs) == 1 and g.outputs
        assert run_clustering(g).clusters  # TF's registry makes the convolutions / matmuls candidates
    assert saved.inputs[0].type.shape == tuple(meta.get("input_shape", saved.inputs[0].type.shape))
    assert not any(n.op_type in ("tf.StatefulPartitionedCall", "tf.PartitionedCall") for n in saved.nodes)


def test_back_edges_are_kept_beside_the_dag():
    g = load(WHILE)
    merges = [n for n in g.nodes if n.op_type == "tf.Merge"]
    assert merges and all(n.attrs["_back_edges"] for n in merges)
    assert all(g.node(r.split(":")[0]).op_type == "tf.NextIteration" for n in merges for r in n.attrs["_back_edges"])


def test_export_graphdef_round_trips(tmp_path):
    a = analyse(WHILE, AnalysisOptions(min_cluster_size=1))
    for out in (tmp_path / "g.pbtxt", tmp_path / "g.pb"):
        from xcviz.render.graphdef import write_graphdef

        write_graphdef(a, str(out))
        g = load(str(out))
        groups: dict[str, list[str]] = {}
        for n in g.nodes:
            if "_XlaCluster" in n.attrs:
                groups.setdefault(n.attrs["_XlaCluster"], []).append(n.name)
        ours = sorted(sorted(a.graph.nodes[j].name for j in m) for m in a.clustering.clusters)
        assert sorted(sorted(m) for m in groups.values()) == ours and ours
        assert [n.name for n in g.nodes] == [n.name for n in a.graph.nodes]


def test_tf_xla_flags_set_the_sizes():
    assert AnalysisOptions(tf_xla_flags="--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=7").min_cluster_size == 7
    assert AnalysisOptions(min_cluster_size=2, tf_xla_flags="--tf_xla_min_cluster_size=7").min_cluster_size == 2


def _bad_inputs(tmp_path):
    data = open(os.path.join(MODELS, "keras_cnn_frozen.pb"), "rb").read()
    (tmp_path / "cut.pb").write_bytes(data[: len(data) // 2])
    (tmp_path / "missing.pbtxt").write_text('node { name: "a" op: "Relu" input: "nowhere" }\n')
    gd = message_classes()["GraphDef"]()
    f = gd.library.function.add()
    f.signature.name = "f"
    f.node_def.add(name="call", op="g")
    g = gd.library.function.add()
    g.signature.name = "g"
    g.node_def.add(name="call", op="f")
    gd.node.add(name="x", op="f")
    from google.protobuf import text_format

    (tmp_path / "recursive.pbtxt").write_text(text_format.MessageToString(gd))
    (tmp_path / "cycle.pbtxt").write_text('node { name: "a" op: "Relu" input: "b" }\nnode { name: "b" op: "Relu" input: "a" }\n')
    (tmp_path / "padding.pbtxt").write_text(
        'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value '
        '{ shape { dim { size: 1 } dim { size: 4 } dim { size: 4 } dim { size: 1 } } } } }\n'
        'node { name: "c" op: "Conv2D" input: "x" input: "x" attr { key: "padding" value { s: "FOO" } } }\n')
    return {"cut.pb": "truncated", "missing.pbtxt": "names no node", "recursive.pbtxt": "recursive call: f -> g -> f",
            "cycle.pbtxt": "cycle: a -> b -> a", "padding.pbtxt": "padding 'FOO'"}


def test_bad_tf_input_is_one_line(tmp_path, run_cli):
    for name, words in _bad_inputs(tmp_path).items():
        code, out, err = run_cli("cluster", str(tmp_path / name))
        assert code == 2 and words in err and len(err.strip().splitlines()) == 1, (name, err)
    code, out, err = run_cli("cluster", os.path.join(MODELS, "keras_cnn_savedmodel"), "--signature", "nope")
    assert code == 2 and "no signature 'nope'" in err and "serving_default" in err
    import shutil

    broken = tmp_path / "sm"
    shutil.copytree(os.path.join(MODELS, "keras_cnn_savedmodel"), broken)
    index = broken / "variables" / "variables.index"
    index.write_bytes(index.read_bytes()[:-20])
    code, out, err = run_cli("cluster", str(broken))
    assert code == 2 and "variables index" in err and len(err.strip().splitlines()) == 1, err


def test_text_and_binary_read_the_same_graph():
    gd = parse_text("GraphDef", open(WHILE, encoding="utf-8").read())
    assert len(gd.node) == len(load(WHILE).nodes)


def test_reference_partition_from_xla_cluster_attributes(run_cli):
    d = os.path.join(ROOT, "lstm", "grappler_on-min1")
    code, out, err = run_cli("cluster", os.path.join(d, "mark_for_compilation.pbtxt"), "--min-cluster-size", "1", "--json")
    ref = json.loads(out)["reference"]
    assert code == 0 and ref["identical"] and ref["differing_nodes"] == []
    code, out, err = run_cli("cluster", os.path.join(d, "mark_for_compilation.pbtxt"), "--min-cluster-size", "4", "--json")
    ref = json.loads(out)["reference"]
    expected4 = json.load(open(os.path.join(ROOT, "lstm", "grappler_on-min4", "expected.json")))["graphs"][0]["clusters"]
    expected1 = json.load(open(os.path.join(d, "expected.json")))["graphs"][0]["clusters"]
    moved = {n for m in expected1 if m not in expected4 for n in m} | {n for m in expected4 if m not in expected1 for n in m}
    assert not ref["identical"] and set(ref["differing_nodes"]) == moved
    code, out, err = run_cli("cluster", os.path.join(d, "before_mark_for_compilation.pbtxt"), "--json")
    assert "reference" not in json.loads(out)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["native", "hybrid"])
@pytest.mark.parametrize("form", ["_frozen.pb", "_savedmodel"])
@pytest.mark.parametrize("name", ["keras_cnn", "keras_transformer"])
def test_models_run_to_tensorflows_outputs(name, form, mode):
    """TF computed `output` from `input` when the files were made; xcviz's TF-signature entries reproduce it
    natively and with the clusters compiled by JAX (hybrid), from the frozen graph and from the SavedModel
    (its variables read from the tensor bundle)."""
    import numpy as np

    from xcviz.runtime.execute import execute

    io = np.load(os.path.join(MODELS, f"{name}_io.npz"))
    g = load(os.path.join(MODELS, name + form))
    assert all(n.known for n in g.nodes)  # every op of the two models has a TF-signature entry
    result = execute(g, {g.inputs[0].name: io["input"]}, mode=mode)
    out = result.outputs[g.output_names.get(g.outputs[0], g.outputs[0])]
    assert out.shape == io["output"].shape
    assert np.abs(out - io["output"]).max() <= 1e-4 * np.abs(io["output"]).max()


def test_cli_flags_and_export(tmp_path, run_cli):
    case = os.path.join(ROOT, "xla_scope", "grappler_off-min4")
    src = os.path.join(case, "before_mark_for_compilation.pbtxt")
    expected = json.load(open(os.path.join(case, "expected.json")))["graphs"][0]["clusters"]
    code, out, err = run_cli("cluster", src, "--tf-xla-flags", "--tf_xla_auto_jit=2 --tf_xla_min_cluster_size=4", "--json")
    report = json.loads(out)
    ours = sorted(sorted(n for n, v in report["nodes"].items() if v["cluster"] == c["id"]) for c in report["clusters"])
    assert code == 0 and ours == expected
    code, out, err = run_cli("cluster", src, "--tf-xla-flags", "--tf_xla_auto_jit=0")
    assert code == 2 and "turns auto-clustering off" in err
    out_file = tmp_path / "clusters.pbtxt"
    code, out, err = run_cli("export", src, "--min-cluster-size", "4", "--graphdef", str(out_file))
    assert code == 0 and out_file.read_text().count("_XlaCluster") == sum(map(len, expected))


def test_suite_graph_runs_with_handles_as_values(run_cli):
    """A TF dump runs: _Arg is fed like a placeholder, a resource _Arg as its variable (`_handle_shapes`)."""
    src = os.path.join(ROOT, "attention", "grappler_off-min1", "before_mark_for_compilation.pbtxt")
    g = load(src)
    handles = [n for n in g.nodes if n.op_type == "tf._Arg" and n.attrs.get("T") == "resource"]
    assert handles and all(n.outputs[0].shape and n.outputs[0].dtype == "float32" for n in handles)
    code, out, err = run_cli("run", src, "--min-cluster-size", "1", "--json")
    assert code == 0, err


def test_kernel_list_in_code_is_the_registry():
    from xcviz.ops.tf.kernels import _CPU_AND_GPU, registry

    ops = registry()["ops"]
    assert _CPU_AND_GPU == {o for o, d in ops.items() if set(d) == {"XLA_CPU_JIT", "XLA_GPU_JIT"}} and len(ops) == 489
