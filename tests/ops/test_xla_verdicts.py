"""XLA verdicts per device (ops/xla_support.py): every ONNX/xcviz op maps onto the TF kernels it lowers to, or
onto the rule that refuses it; per device the verdict follows TF 2.21's own kernel registrations
(tests/data/tf_suite/tf2xla_kernels.json); `xcviz ops` shows each verdict's source; a run that fills weights
without data says which."""
from __future__ import annotations

import json
import re
import os
import sys

import numpy as np

import pytest

import xcviz
from xcviz.ops import DEVICES, REGISTRY
from xcviz.ops.tf.kernels import NO_INT32_ON_GPU, has_kernel
from xcviz.ops.xla_support import REFUSED, TF_EQUIV, kernels
from xcviz.runtime.inputs import dataless_warning
from tests.support.paths import ROOT

EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
NON_TF = [o for o in REGISTRY if not o.name.startswith("tf.")]


def _tf_registry() -> dict:
    with open(os.path.join(ROOT, "tests", "data", "tf_suite", "tf2xla_kernels.json"), encoding="utf-8") as f:
        return json.load(f)


def test_every_onnx_and_xcviz_op_has_a_tf_equivalent_or_a_refusal():
    rows = set(TF_EQUIV) | set(REFUSED)
    assert {o.name for o in NON_TF} <= rows, sorted({o.name for o in NON_TF} - rows)
    assert rows <= set(REGISTRY.ops), sorted(rows - set(REGISTRY.ops))  # no stale rows
    for o in NON_TF:
        assert o.source and not o.source.startswith("xcviz: no TensorFlow"), o.name


def test_every_mapped_tf_op_is_a_real_xla_kernel_on_cpu_and_gpu():
    ops = _tf_registry()["ops"]
    for name in TF_EQUIV:
        for k, _ in kernels(name):
            assert {"XLA_CPU_JIT", "XLA_GPU_JIT"} <= set(ops.get(k, ())), (name, k)
            assert has_kernel(k), (name, k)


def test_tensorflow_itself_clusters_every_mapped_tf_op_and_refuses_what_xcviz_says_tf_refuses():
    """TF 2.21's MarkForCompilationPass on CPU (tools/tf_autoclustering.py): the ground truth of the table."""
    with open(os.path.join(ROOT, "tests", "data", "tf_suite", "autoclustering_ops.json"), encoding="utf-8") as f:
        tf = json.load(f)
    assert tf["tf_version"] == "2.21.0"
    clustered = tf["clustered"]
    for name in TF_EQUIV:
        o = REGISTRY.ops[name]
        for k, dt in kernels(name):
            if k in ("While", "If", "Const", "NoOp"):  # decided by their bodies; zero size toward a cluster
                continue
            assert clustered.get(k) is True, (name, k)
        if "cpu" not in o.devices and name not in REFUSED and not o.source.startswith("xcviz rule"):
            raise AssertionError(f"{name}: TF clusters {TF_EQUIV[name]} on CPU but xcviz refuses it")
    assert tf["int32_conv2d_clustered"] and REGISTRY.ops["conv_integer"].compilable_on("cpu")
    # what TF refuses, xcviz calls a TF rule; what TF compiles but xcviz keeps out, xcviz calls its own rule
    for tf_op, name in (("Unique", "unique"), ("RandomUniform", "random_uniform"), ("NonMaxSuppressionV4", "nms")):
        assert clustered[tf_op] is False and REGISTRY.ops[name].source.startswith("TF rule"), tf_op
    assert clustered["Where"] is True and REGISTRY.ops["nonzero"].source.startswith("xcviz rule")


def test_the_issue_s_onnx_ops_map_onto_their_tensorflow_equivalents_and_compile_everywhere():
    want = {"Range": "Range", "Trilu": "MatrixBandPart", "ConstantOfShape": "Fill",
            "ConvTranspose": "Conv2DBackpropInput", "GatherND": "GatherNd", "ScatterND": "TensorScatterUpdate"}
    for onnx_op, tf_op in want.items():
        o = REGISTRY.get(onnx_op)
        assert tf_op in [k for k, _ in kernels(o.name)], onnx_op
        assert o.devices == frozenset(DEVICES), onnx_op
        assert o.source.startswith("tf2xla: ") and tf_op in o.source and "(CPU, GPU, TPU)" in o.source, o.source


def test_the_gpu_int32_gap_is_the_one_in_tensorflow_s_registry():
    """REGISTER_XLA_CONV_OP registers its GPU copy without int32: the table the op table reads without the JSON."""
    cons = _tf_registry()["type_constraints"]
    gap = {op for op, c in cons.items()
           if "int32" in c.get("XLA_CPU_JIT", {}).get("T", []) and "int32" not in c.get("XLA_GPU_JIT", {}).get("T", [])}
    assert gap == NO_INT32_ON_GPU
    # every other device difference in the registry is none at all
    assert {op for op, c in cons.items() if c.get("XLA_CPU_JIT") != c.get("XLA_GPU_JIT")} == NO_INT32_ON_GPU
    matmul = cons["MatMul"]
    assert "int32" in matmul["XLA_CPU_JIT"]["T"] and "int32" in matmul["XLA_GPU_JIT"]["T"]


@pytest.mark.parametrize("name", ["conv_integer", "qlinear_conv"])
def test_integer_convolutions_compile_on_cpu_and_tpu_but_not_gpu(name):
    o = REGISTRY.ops[name]
    assert {d: o.compilable_on(d) for d in DEVICES} == {"cpu": True, "gpu": False, "tpu": True}
    assert "int32" in o.why_not("gpu") and "XLA_GPU_JIT" in o.why_not("gpu")
    assert o.source.startswith("tf2xla: Conv2D (int32)") and o.source.endswith("(CPU, TPU)")


def test_integer_matmuls_compile_everywhere():
    for name in ("matmul_integer", "qlinear_matmul"):
        assert REGISTRY.ops[name].devices == frozenset(DEVICES), name


def test_refusals_say_who_refuses_and_why():
    for name, (src, why) in REFUSED.items():
        o = REGISTRY.ops[name]
        assert not o.devices and o.source == src and o.reason == why, name
        assert src.split(":")[0] in ("XLA", "TF rule", "xcviz rule"), src
    assert REGISTRY.ops["nonzero"].reason.startswith("data-dependent output shape")
    assert REGISTRY.ops["unique"].reason.startswith("data-dependent output shape")
    assert REGISTRY.ops["string_split"].reason.startswith("string tensors")
    assert REGISTRY.ops["random_uniform"].source == "TF rule: stateful RNG"
    # an op XLA compiles but xcviz keeps out says it is xcviz's rule, never XLA's
    assert REGISTRY.ops["nonzero"].source.startswith("xcviz rule") and "Where" in REGISTRY.ops["nonzero"].reason


def test_the_node_s_device_decides_its_verdict(write_graph):
    text = """
name: qconv
inputs: [{name: x, shape: [1, 1, 5, 5], dtype: uint8}, {name: w, shape: [1, 1, 2, 2], dtype: uint8}]
nodes:
  - {name: c_cpu, op: ConvInteger, inputs: [x, w]}
  - {name: c_gpu, op: ConvInteger, inputs: [x, w], device: gpu:0}
  - {name: c_tpu, op: ConvInteger, inputs: [x, w], device: /device:TPU:0}
outputs: [c_cpu, c_gpu, c_tpu]
"""
    g = xcviz.load(write_graph(text, "qconv.yaml"))
    c = xcviz.cluster(g, min_cluster_size=1)
    by = {n.name: i for i, n in enumerate(g.nodes)}
    assert c.candidate[by["c_cpu"]] and c.candidate[by["c_tpu"]]
    assert not c.candidate[by["c_gpu"]]
    assert c.reason[by["c_gpu"]].startswith("unsupported on gpu: XLA's Conv2D kernel on XLA_GPU_JIT has no int32")
    # --device sets the default device of nodes that name none
    c_gpu = xcviz.cluster(g, min_cluster_size=1, device="gpu")
    assert not c_gpu.candidate[by["c_cpu"]] and c_gpu.candidate[by["c_tpu"]]


def test_ops_json_has_per_device_verdicts_reasons_and_sources(run_cli):
    code, out, _ = run_cli("ops", "--json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)["ops"]}
    for r in rows.values():
        assert {"name", "aliases", "groups", "compilable", "why_not", "source", "reason", "attrs", "doc"} <= set(r)
        assert set(r["compilable"]) == set(DEVICES)
        assert set(r["why_not"]) == {d for d, ok in r["compilable"].items() if not ok}
    assert rows["conv_integer"]["compilable"] == {"cpu": True, "gpu": False, "tpu": True}
    assert "int32" in rows["conv_integer"]["why_not"]["gpu"]
    assert rows["trilu"]["source"] == "tf2xla: MatrixBandPart (CPU, GPU, TPU)"
    assert rows["nms"]["source"] == "TF rule: NonMaxSuppression"


def test_ops_table_has_a_source_column(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # the table a terminal shows (piped: one line per op)
    code, out, _ = run_cli("ops")
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # (bold headers on a terminal)
    assert code == 0
    n = {d: sum(o.compilable_on(d) for o in REGISTRY) for d in DEVICES}
    assert out.startswith(f"Op registry ({len(REGISTRY)} ops; XLA compiles cpu {n['cpu']} · gpu {n['gpu']} · "
                          f"tpu {n['tpu']})")
    assert n["gpu"] < n["cpu"]  # ConvInteger and QLinearConv
    head = next(line for line in out.splitlines() if " op " in line and " cpu " in line)
    assert [c.strip() for c in head.strip("┃│ ").split("┃")][-5:] == ["cpu", "gpu", "tpu", "source", "note"]
    row = next(line for line in out.splitlines() if line.startswith("│ conv_integer "))
    cells = [c.strip() for c in row.split("│")][3:7]
    assert cells == ["✓", "✗", "✓", "tf2xla: Conv2D (int32), Cast, Sub (CPU, TPU)"]
    monkeypatch.setenv("COLUMNS", "80")  # narrow terminals: one record per op
    code, out, _ = run_cli("ops")
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    record = "trilu\n  aliases Trilu\n  cpu     ✓\n  gpu     ✓\n  tpu     ✓\n  source  tf2xla: MatrixBandPart"
    assert record in out


# On the torch exports the default clustering refuses only ops XLA itself (or TF's auto-clustering) refuses,
# on every device: op types that are not candidates, per model. (The greedy-decode Loop exports are left to
# the control-flow clustering, which decides their Loop nodes.)
NOT_CANDIDATE = {
    "bert_dynamo": set(), "bert_torchscript": set(), "gpt_dynamo": set(), "gpt_torchscript": set(),
    "tagger_dynamo": set(), "tagger_torchscript": set(), "unet_dynamo": set(), "unet_torchscript": set(),
    "detect_dynamo": {"NonMaxSuppression"}, "detect_torchscript": {"NonMaxSuppression"},
}


@pytest.mark.parametrize("name", sorted(NOT_CANDIDATE))
def test_exports_refuse_only_what_xla_refuses_on_every_device(name):
    pytest.importorskip("onnx")
    g = xcviz.load(os.path.join(EXPORTS, f"{name}.onnx"))
    for device in DEVICES:
        c = xcviz.cluster(g, device=device)
        refused = {g.nodes[i].op_type for i, ok in enumerate(c.candidate) if not ok}
        assert refused == NOT_CANDIDATE[name], (device, refused)
        for i, ok in enumerate(c.candidate):
            if not ok:
                assert REGISTRY.ops[g.nodes[i].op].source.startswith(("XLA", "TF rule")), g.nodes[i].op


def test_the_warning_names_the_weights_filled_with_random_values(tmp_path, run_cli):
    onnx = pytest.importorskip("onnx")
    from google.protobuf import json_format
    from onnx import TensorProto, helper

    ws = [TensorProto(name=n, data_type=TensorProto.FLOAT, dims=d)
          for n, d in (("w1", [4, 4]), ("w2", [4, 3]), ("b1", [4]))]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["y"]), helper.make_node("Add", ["y", "b1"], ["y2"]),
         helper.make_node("MatMul", ["y2", "w2"], ["z"])], "stripped",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])], ws)
    path = tmp_path / "stripped.json"
    path.write_text(json_format.MessageToJson(helper.make_model(graph)))
    line = "warning: 3 initializers have no data and were filled with seeded random values: w1, w2, b1"
    for cmd in (("run", "--seed", "3", "--mode", "native"), ("validate", "--min-cluster-size", "1")):
        code, _, err = run_cli(cmd[0], str(path), *cmd[1:])
        assert code == 0 and line in err, (cmd, err)
    np.savez(tmp_path / "w.npz", x=np.ones((2, 4), np.float32), w1=np.eye(4, dtype=np.float32))
    code, _, err = run_cli("run", str(path), "--inputs", str(tmp_path / "w.npz"), "--seed", "1", "--mode", "native")
    assert code == 0 and "2 initializers have no data and were filled with seeded random values: w2, b1" in err
    g = xcviz.load(str(path))
    with pytest.raises(xcviz.XcvizError) as e:
        xcviz.run(g, {"x": np.ones((2, 4), np.float32)}, mode="native", seed=None)  # seed=None: all given
    assert "3 of them are initializers with no data (w1, w2, b1)" in e.value.hint
    assert onnx is not None


def test_the_warning_counts_and_shortens_long_lists():
    assert dataless_warning([]) is None
    assert dataless_warning(["w"]) == "warning: 1 initializer has no data and was filled with seeded random values: w"
    many = dataless_warning([f"w{i}" for i in range(8)])
    assert many == ("warning: 8 initializers have no data and were filled with seeded random values: "
                    "w0, w1, w2, w3, w4, ... (+3 more)")
