"""torch eager and TensorFlow as the native runtime (a torch program's own aten calls, a GraphDef's own NodeDefs),
and a hybrid run on onnxruntime whose Loop body keeps its clusters on XLA: runtime named, outputs equal to
torch eager / TF's dumps / the NumPy path, threads honoured."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import xcviz
from xcviz.ir import relabel
from tests.support.paths import ROOT

CORPUS = os.path.join(ROOT, "tests", "data", "torch_corpus")
EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
TF_KERAS = os.path.join(ROOT, "tests", "data", "tf_keras")


def _env(g, inputs=None):
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs

    feeds = bind_inputs(g, inputs, 0)
    return feeds, execute(g, feeds, "native", keep_all=True).env


def _whole(g):
    from xcviz.runtime.jit import cluster_spec

    return cluster_spec(g, [i for i, n in enumerate(g.nodes) if n.op != "placeholder"])


@pytest.mark.parametrize("name", ["timm_gn_weightnorm", "hf_bert"])
def test_torch_eager_replays_the_program_and_equals_torch(name):
    torch = pytest.importorskip("torch", reason="needs the torch extra")
    from xcviz.runtime.native import describe, prepare_or_numpy, resolve

    g = xcviz.load(os.path.join(CORPUS, name + ".pt2"))
    feeds, env = _env(g, dict(np.load(os.path.join(CORPUS, name + ".inputs.npz"))))
    rt = resolve(None, g, 1)   # a torch program's default native runtime, torch installed
    assert rt.name == "torch" and describe(rt)["runtime"] == "torch" and describe(rt)["threads"] == 1
    assert describe(rt)["version"] == torch.__version__.split("+")[0] and describe(rt)["mode"] == "op-by-op"
    spec = _whole(g)
    before = torch.get_num_threads()
    try:
        fn, ran, why = prepare_or_numpy(rt, g, spec.members, spec.entries, list(g.outputs), env)
        assert (ran, why) == ("torch", None)
        assert rt.threads_seen == [1]   # torch.get_num_threads() inside the run
    finally:
        torch.set_num_threads(before)
    eager = np.load(os.path.join(CORPUS, name + ".eager.npz"))
    outs = fn({r: env[r] for r in spec.entries})
    assert len(outs) == len(eager.files)
    for k, got in enumerate(outs):   # torch's own kernels: torch eager's outputs exactly, up to float rounding
        np.testing.assert_allclose(got, eager[f"out{k}"], rtol=1e-5, atol=1e-6)


def test_a_from_torch_program_runs_on_torch_eager_and_honours_threads():
    torch = pytest.importorskip("torch", reason="needs the torch extra")
    from xcviz.runtime.native import prepare_or_numpy, resolve

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(8, 8), torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.softmax(self.b(torch.relu(self.a(x))), dim=-1)

    torch.manual_seed(0)
    net, x = Net().eval(), torch.randn(3, 8)
    g = xcviz.from_torch(net, (x,))
    _, env = _env(g, {"x": x.numpy()})
    before = torch.get_num_threads()
    try:
        rt = resolve(None, g, 2)
        spec = _whole(g)
        fn, ran, why = prepare_or_numpy(rt, g, spec.members, spec.entries, list(g.outputs), env)
        torch.set_num_threads(1)   # someone else's setting: the run puts its own back
        out = fn({r: env[r] for r in spec.entries})[0]
        assert (rt.name, ran, why) == ("torch", "torch", None) and rt.threads_seen == [2] and rt.threads_last == 2
        got = xcviz.run(g, {"x": x.numpy()}, mode="native", native="torch", threads=1)
    finally:
        torch.set_num_threads(before)
    with torch.inference_mode():
        want = net(x).numpy()
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-6, atol=1e-7)


def test_a_node_no_aten_call_made_falls_back_to_onnxruntime_and_says_why():
    pytest.importorskip("torch", reason="needs the torch extra")
    pytest.importorskip("onnxruntime")
    from xcviz.runtime.native import prepare_or_numpy, resolve
    from xcviz.runtime.torch_eager import TorchRuntime

    g = xcviz.load(os.path.join(CORPUS, "timm_gn_weightnorm.pt2"))
    _, env = _env(g, dict(np.load(os.path.join(CORPUS, "timm_gn_weightnorm.inputs.npz"))))
    from xcviz.runtime.jit import cluster_spec

    spec = cluster_spec(g, [g.index["add"]])   # a node with an ONNX form (Add)
    without = relabel(g, aten_calls={k: v for k, v in g.aten_calls.items() if k != "add"})
    fn, ran, why = prepare_or_numpy(TorchRuntime(1), without, spec.members, spec.entries, spec.exits, env)
    assert ran == "onnxruntime" and "'add'" in why and "not an aten call" in why
    np.testing.assert_allclose(fn(env)[0], env[spec.exits[0]], rtol=1e-5, atol=1e-6)
    onnx_graph = xcviz.load(os.path.join(ROOT, "graphs", "resnet_mini.onnx"))   # not a torch program
    rt = resolve("torch", onnx_graph, 1)
    assert rt.name == "onnxruntime" and "not one" in rt.note


@pytest.mark.slow
def test_validate_and_run_on_torch_name_it_and_match_eager():
    torch = pytest.importorskip("torch", reason="needs the torch extra")
    pytest.importorskip("jax")
    base = os.path.join(CORPUS, "timm_gn_weightnorm")
    g = xcviz.load(base + ".pt2")
    inputs = dict(np.load(base + ".inputs.npz"))
    before = torch.get_num_threads()
    try:
        report = xcviz.validate(g, inputs=inputs, repeats=1, threads=1)
        got = xcviz.run(g, inputs, mode="hybrid", native="torch", threads=1)
    finally:
        torch.set_num_threads(before)
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["native"]["runtime"] == "torch" and data["native"]["threads"] == 1
    m = data["model"]
    assert m["native_runtime"] == "torch" and m["native_ms"] > 0 and m["hybrid_ms"] > 0
    assert m["native_optimized_ms"] is None and m["speedup_vs_optimized"] is None
    assert "torch.compile" in m["native_optimized_note"]
    assert m["speedup"] == pytest.approx(m["native_ms"] / m["hybrid_ms"])
    rows = [c for c in data["clusters"] if c["status"] == "ok"]
    assert rows and all(c["native_runtime"] == "torch" and c["native_ms"] > 0 for c in rows)
    from xcviz.render.run_tables import validate_table
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(validate_table(report, 200))
    assert f"native = torch {torch.__version__.split('+')[0]} (CPU, op by op, 1 thread" in " ".join(
        console.export_text().split())
    eager = np.load(base + ".eager.npz")
    for k, a in enumerate(got.values()):
        np.testing.assert_allclose(a, eager[f"out{k}"], rtol=1e-4, atol=1e-5)


@pytest.mark.slow
# argmax denied: the body keeps clusters on either side of a fallback segment, which runs on onnxruntime
@pytest.mark.parametrize("name, deny", [("greedy_decode_torchscript", ()), ("greedy_decode_torchscript", ("argmax",)),
                                        ("greedy_whileloop_dynamo", ())])
def test_onnxruntime_hybrid_runs_loop_bodies_with_their_clusters_on_xla(name, deny):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("jax")
    from xcviz.runtime.execute import execute
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.measure import compare
    from xcviz.runtime.native import OnnxRuntime
    from xcviz.runtime.subgraphs import body_caches
    from xcviz.runtime.wholemodel import Hybrid

    path = os.path.join(EXPORTS, name + ".onnx")
    g = xcviz.load(path)
    c = xcviz.cluster(g, deny=deny)
    feeds, env = _env(g, dict(np.load(path.replace(".onnx", ".inputs.npz"))))
    h = Hybrid(g, c, OnnxRuntime(1), env, CompileCache())
    controls = [s for s in h.steps if s[0] == "control"]
    got = {g.output_names.get(r, r): np.asarray(v) for r, v in h(feeds).items()}
    numpy_path = execute(g, feeds, "hybrid", c, CompileCache()).outputs
    want = dict(np.load(path.replace(".onnx", ".ort.npz")))
    for k, ref in want.items():
        for other in (numpy_path[k], ref):
            if ref.dtype.kind in "iub":
                assert np.array_equal(got[k], other), k
            else:
                assert compare(got[k], other)["max_rel"] <= 1e-4, k
    if not controls:   # this export's loop is inside a cluster (XLA While): nothing for the body runner to do
        assert all(c.cluster_of[j] >= 0 for j, n in enumerate(g.nodes) if n.op == "loop")
        return
    on, whys = h.runtimes()
    assert set(on) == {"onnxruntime"} and not whys, (on, whys)   # nothing fell back to NumPy
    if deny:   # the body's other ops ran on onnxruntime
        assert h.bodies.segments_on.get("onnxruntime", 0) >= 1, h.bodies.segments_on
    compiled = [x.stats()["compiles"] for x in body_caches(h.bodies.caches)]
    assert compiled and sum(compiled) > 0               # and its clusters on XLA


@pytest.mark.parametrize("name,form", [("conv1d", "frozen.pb"), ("math_zoo", "frozen.pb"), ("conv1d", "savedmodel"),
                                       ("attention_encoder", "savedmodel"), ("jit_call", "savedmodel"),
                                       ("text_lstm", "savedmodel"), ("layers_zoo", "savedmodel"),
                                       ("ops_zoo", "frozen.pb"), ("ops_zoo", "savedmodel")])
def test_tensorflow_runs_a_graphdefs_own_nodes(name, form):
    """A GraphDef's NodeDefs, or a SavedModel's signature with its variables in TF's resource manager (a
    jit_compile call, a While and a Keras layer's call take the handles themselves), on TensorFlow's executor,
    equal to TF's own outputs. ops_zoo's strings: TF gives bytes where xcviz's reference gives str, the same
    text (it ran on NumPy while they compared unequal)."""
    tf = pytest.importorskip("tensorflow", reason="TensorFlow is optional: the TF native runtime needs it")
    from xcviz.runtime.native import describe, prepare_or_numpy, resolve

    g = xcviz.load(os.path.join(TF_KERAS, f"{name}_{form}"))
    z = np.load(os.path.join(TF_KERAS, f"{name}_io.npz"))
    feeds, env = _env(g, {k[3:]: z[k] for k in z.files if k.startswith("in_")})
    rt = resolve(None, g, 1)   # a TF GraphDef's default, TensorFlow installed
    assert rt.name == "tensorflow" and describe(rt)["version"] == tf.__version__ and rt.threads_seen in (1, None)
    spec = _whole(g)
    fn, ran, why = prepare_or_numpy(rt, g, spec.members, spec.entries, list(g.outputs), env)
    assert (ran, why) == ("tensorflow", None)
    outs = fn({r: env[r] for r in spec.entries})
    keys = [k for k in sorted(z.files) if k.startswith("out_")]   # TF's own dump (frozen: outputs in key order)
    assert len(outs) == len(keys)
    for got, key in zip(outs, keys):
        ref = z[key]
        if key.startswith("out_uniform_"):   # a stateful random op: the dump's numbers are another run's
            assert got.shape == ref.shape and got.dtype == ref.dtype
        elif ref.dtype.kind == "U":
            assert [x.decode() for x in got.flat] == list(ref.flat)
        elif ref.dtype.kind in "iub":
            assert got.dtype == ref.dtype and np.array_equal(got, ref)
        else:
            np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_a_savedmodels_hybrid_segments_read_their_variables_on_tensorflow():
    """Every part of a SavedModel's hybrid run, the ones whose calls and loops read a variable clustered or
    resident elsewhere included, runs on TensorFlow; none stands in on NumPy."""
    pytest.importorskip("tensorflow", reason="TensorFlow is optional: the TF native runtime needs it")
    from xcviz.runtime.validate import validate_graph

    for name in ("layers_zoo", "text_lstm"):
        z = np.load(os.path.join(TF_KERAS, f"{name}_io.npz"))
        r = validate_graph(xcviz.load(os.path.join(TF_KERAS, f"{name}_savedmodel")),
                           inputs={k[3:]: z[k] for k in z.files if k.startswith("in_")}, threads=1, repeats=3)
        m = r.model.to_json()
        assert m["native_runtime"] == "tensorflow" and m["note"] is None, (name, m["note"])
        assert set(m["fallback_segments_on"]) == {"tensorflow"}, (name, m["fallback_segments_on"])


def test_a_v1_control_flow_graph_with_no_cluster_is_timed_whole_on_tensorflow():
    """switch_case frozen with TF's lowering (Switch/Merge): no cluster, so the hybrid run is the graph itself,
    run on TensorFlow like the all-native one (not both in xcviz's frame executor on NumPy)."""
    pytest.importorskip("tensorflow", reason="TensorFlow is optional: the TF native runtime needs it")
    from xcviz.runtime.validate import validate_graph

    z = np.load(os.path.join(TF_KERAS, "switch_case_io.npz"))
    g = xcviz.load(os.path.join(TF_KERAS, "switch_case_frozen.pb"))
    r = validate_graph(g, inputs={k[3:]: z[k] for k in z.files if k.startswith("in_")}, threads=1, repeats=3)
    m = r.model.to_json()
    assert xcviz.cluster(g).clusters == []
    assert (m["native_runtime"], m["note"], m["fallback_segments_on"]) == ("tensorflow", None, {"tensorflow": 1})
    assert m["native_ms"] > 0 and m["hybrid_ms"] > 0


def test_without_tensorflow_a_tf_program_says_what_stood_in(without_tensorflow):
    from xcviz.runtime import native

    rt = native.resolve(None, xcviz.load(os.path.join(TF_KERAS, "conv1d_savedmodel")), 1)
    assert rt.name == "onnxruntime" and "TensorFlow is not installed" in rt.note and "pip install tensorflow-cpu" in rt.note
    assert native.resolve(None, xcviz.load(os.path.join(ROOT, "graphs", "resnet_mini.onnx")), 1).note is None


@pytest.mark.slow
def test_calibrate_against_tensorflow_times_every_class_on_tensorflow(tmp_path):
    """`calibrate --native tensorflow`: calibrate's programs as TF graphs, each checked against the NumPy
    reference, none falling back."""
    pytest.importorskip("tensorflow", reason="TensorFlow is optional")
    from xcviz.runtime.calibrate import calibrate

    cal = calibrate(64, 4096, 2, native="tensorflow", threads=1)
    assert cal.native["runtime"] == "tensorflow" and not cal.measured.get("fell_back"), cal.measured.get("fell_back")
    # and what a while loop's iteration costs TF's executor beyond its ops, written and read back
    assert cal.measured["native_iteration_overhead"] >= 0
    from xcviz.cost import load_hardware

    path = tmp_path / "tf.yaml"
    path.write_text(cal.profile_yaml("tf"))
    assert load_hardware(str(path)).calibrated.iteration_overhead == pytest.approx(cal.measured["native_iteration_overhead"], rel=1e-3)


@pytest.mark.slow
def test_calibrate_against_torch_times_every_class_on_torch(tmp_path):
    """`calibrate --native torch`: calibrate's programs as torch calls, each checked against the NumPy
    reference before it is timed (a wrong mapping would fall back and be listed in the profile)."""
    pytest.importorskip("torch", reason="torch eager: pip install -e '.[torch]'")
    import yaml

    from xcviz.cost import load_hardware

    text = xcviz.calibrate(native="torch", threads=1, name="t", matmul_n=32, stream_elements=1024, repeats=2)
    data = yaml.safe_load(text)
    assert data["native"] == "torch" and "torch" in data["source"]
    assert "on the NumPy reference" not in text, text   # no class fell back
    path = tmp_path / "t.yaml"
    path.write_text(text)
    hw = load_hardware(str(path))
    assert hw.native == "torch" and hw.calibrated is not None and hw.calibrated.classes["conv"].native_flops > 0
    # and the least a convolution torch sends to oneDNN costs (cost.classes.torch_onednn), read back
    assert data["native_onednn_conv_overhead"] > 0
    assert hw.calibrated.onednn_overhead == data["native_onednn_conv_overhead"]


@pytest.mark.slow
def test_validate_on_torch_estimates_with_the_profile_measured_against_torch():
    """A torch program is timed against torch eager, and its estimate comes from the built-in profile measured
    against torch eager (cpu_torch), not from the one measured against onnxruntime."""
    pytest.importorskip("torch", reason="needs the torch extra")
    g = xcviz.load(os.path.join(ROOT, "tests", "data", "torch_corpus", "hf_bert.pt2"))
    report = xcviz.validate(g, threads=1, repeats=1)
    m = report.to_json()["model"]
    assert report.native["runtime"] == "torch" and m["native_runtime"] == "torch"
    assert (m["est_hardware"], m["est_native"]) == ("cpu_torch", "torch")
