"""Speedups against a runtime users run: onnxruntime timing per cluster and per model, the JSON that says so,
hybrid fallback segments on onnxruntime agreeing with NumPy and with onnxruntime on the whole file, threads."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import xcviz
from xcviz.ir import bind_dims
from tests.support.paths import GRAPHS, ROOT

ort = pytest.importorskip("onnxruntime", reason="the native runtime under test is onnxruntime")

NUMPY_WORDS = "native = xcviz's NumPy reference, not a production runtime"


def _validate(name: str, **kw):
    g = xcviz.load(os.path.join(GRAPHS, name))
    return g, xcviz.validate(g, repeats=1, **kw)


def test_validate_json_names_the_runtime_and_the_whole_model():
    g, report = _validate("resnet_mini.onnx", threads=1)
    data = json.loads(json.dumps(report.to_json(), allow_nan=False))
    assert data["schema_version"] == 1
    assert data["native"]["runtime"] == "onnxruntime" and data["native"]["version"] == ort.__version__
    assert data["native"]["threads"] == 1 and data["native"]["mode"] == "op-by-op"
    m = data["model"]
    assert set(m) >= {"native_ms", "native_optimized_ms", "hybrid_ms", "speedup", "speedup_vs_optimized", "est_speedup"}
    assert m["native_ms"] > 0 and m["native_optimized_ms"] > 0 and m["hybrid_ms"] > 0
    assert m["speedup"] == pytest.approx(m["native_ms"] / m["hybrid_ms"])
    assert m["speedup_vs_optimized"] == pytest.approx(m["native_optimized_ms"] / m["hybrid_ms"])
    # the cost model's estimate of the same ratio: the whole model's S with the profile in use
    run_graph = bind_dims(g, report.dims)  # (the sizes the run bound)
    assert m["est_speedup"] == pytest.approx(xcviz.stats(run_graph, report.clustering).speedup_estimate)
    for c in data["clusters"]:
        assert c["native_runtime"] == "onnxruntime" and c["native_ms"] > 0 and c["xla_ms"] > 0
        assert c["speedup"] == pytest.approx(c["native_ms"] / c["xla_ms"]) and "est_speedup" in c


def test_numpy_baseline_is_said_in_words_in_every_table(run_cli):
    from xcviz.render.run_tables import native_words, validate_table
    from rich.console import Console

    _, report = _validate("resnet_mini.onnx", native="numpy")
    assert report.native["runtime"] == "numpy" and report.native["note"] == NUMPY_WORDS
    assert report.model.runtime == "numpy" and report.model.native_optimized_ms is None
    console = Console(width=200, record=True)
    console.print(validate_table(report, 200))
    assert NUMPY_WORDS in console.export_text()
    _, report = _validate("resnet_mini.onnx")
    console = Console(width=200, record=True)
    console.print(validate_table(report, 200))
    text = console.export_text()
    assert f"native = onnxruntime {ort.__version__} (CPU, op by op" in text and "whole model:" in text
    assert NUMPY_WORDS not in text
    assert native_words({"runtime": "onnxruntime", "version": "1", "threads": 2, "mode": "op-by-op",
                         "xla_threads": 2}, "numpy").startswith(NUMPY_WORDS)
    seed = os.path.join(GRAPHS, "seed_demo.yaml")   # custom_nms has no ONNX form: its segment runs on NumPy
    code, out, _ = run_cli("run", seed, "--mode", "hybrid")
    assert code == 0 and "NumPy reference, not a production" in " ".join(out.split())
    code, out, _ = run_cli("run", os.path.join(GRAPHS, "resnet_mini.onnx"), "--mode", "native")
    assert code == 0 and "native = onnxruntime" in " ".join(out.split())


def test_report_validate_says_what_it_measured_against(tmp_path, run_cli):
    target = str(tmp_path / "r.html")
    code, _, _ = run_cli("report", os.path.join(GRAPHS, "tiny_mlp_onnx.json"), "--validate", "-o", target)
    html = open(target, encoding="utf-8").read()
    assert code == 0 and "native (measured against)" in html and "native = onnxruntime" in html


def _outputs_by_name(graph, outs: dict) -> dict:
    return {graph.output_names.get(r, r): np.asarray(v) for r, v in outs.items()}


def test_hybrid_fallback_segments_on_onnxruntime_match_numpy_and_onnxruntime_whole():
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import CompileCache
    from xcviz.runtime.native import OnnxRuntime
    from xcviz.runtime.wholemodel import Hybrid

    path = os.path.join(GRAPHS, "detector_mini.onnx")   # NonMaxSuppression falls back: a segment outside XLA
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    feeds = bind_inputs(g, None, 0)
    env = execute(g, feeds, "native", keep_all=True).env
    h = Hybrid(g, c, OnnxRuntime(1), env, CompileCache())
    assert h.segments_on == {"onnxruntime": 1} and not h.why
    hybrid = _outputs_by_name(g, h(feeds))
    numpy_hybrid = execute(g, feeds, "hybrid", c, CompileCache()).outputs
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    direct = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {n: feeds[n] for n in names})))
    assert set(hybrid) == set(numpy_hybrid) == set(direct)
    for k in direct:
        np.testing.assert_allclose(hybrid[k], numpy_hybrid[k], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(hybrid[k], direct[k], rtol=1e-5, atol=1e-5)


def test_api_run_on_onnxruntime_equals_numpy():
    from xcviz.runtime.measure import compare

    g = xcviz.load(os.path.join(GRAPHS, "resnet_block.yaml"))   # no ONNX file: the nodes are emitted
    ref = xcviz.run(g, mode="native")
    for mode in ("native", "hybrid"):
        got = xcviz.run(g, mode=mode, native="onnxruntime", threads=1)
        assert set(got) == set(ref)
        for k in ref:   # the project's tolerance: max error relative to the largest value (float32: 1e-4)
            assert compare(got[k], ref[k])["ok"], (mode, k, compare(got[k], ref[k]))


def test_emitting_what_has_no_onnx_form_falls_back_and_says_why():
    from xcviz.runtime.native import OnnxRuntime, prepare_or_numpy
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.onnx_emit import Unmappable, subgraph_model

    g = xcviz.load(os.path.join(GRAPHS, "seed_demo.yaml"))
    env = execute(g, bind_inputs(g, None, 0), "native", keep_all=True).env
    nms = g.index["l1"]
    with pytest.raises(Unmappable, match="custom_nms"):
        subgraph_model(g, [nms], ["m1"], ["l1"], env)
    fn, name, why = prepare_or_numpy(OnnxRuntime(1), g, [nms], ["m1"], ["l1"], env)
    assert name == "numpy" and "custom_nms" in why
    np.testing.assert_array_equal(fn(env)[0], env["l1"])
    conv = g.index["c1"]   # conv2d -> ONNX Conv, pads kept
    model, feeds, outs = subgraph_model(g, [conv], ["x", "w1"], ["c1"], env)
    assert [n.op_type for n in model.graph.node] == ["Conv"] and feeds == {"x": "x", "w1": "w1"}


def test_onnx_slice_keeps_the_files_nodes_and_initializers():
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs
    from xcviz.runtime.jit import cluster_spec
    from xcviz.runtime.onnx_emit import subgraph_model

    g = xcviz.load(os.path.join(GRAPHS, "resnet_mini.onnx"))
    env = execute(g, bind_inputs(g, None, 0), "native", keep_all=True).env
    spec = cluster_spec(g, [3, 4, 5])   # Conv, BatchNormalization, Relu in the middle
    model, feeds, outs = subgraph_model(g, spec.members, spec.entries, spec.exits, env)
    assert [n.op_type for n in model.graph.node] == ["Conv", "BatchNormalization", "Relu"]
    assert list(feeds) == ["Relu_9"] and len(model.graph.initializer) == 6   # 2 conv + 4 batchnorm
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    got = sess.run(outs, {n: env[r] for r, n in feeds.items()})
    np.testing.assert_allclose(got[0], env[spec.exits[0]], rtol=1e-4, atol=1e-5)


def test_threads_reach_onnxruntime_sessions():
    from xcviz.runtime.native import OnnxRuntime

    g = xcviz.load(os.path.join(GRAPHS, "tiny_mlp_onnx.json"))
    from xcviz.runtime.execute import execute
    from xcviz.runtime.inputs import bind_inputs

    from xcviz.runtime.jit import cluster_spec

    env = execute(g, bind_inputs(g, None, 0), "native", keep_all=True).env
    spec = cluster_spec(g, list(range(len(g.nodes))))
    for threads, optimized in ((1, False), (2, True)):
        rt = OnnxRuntime(threads, optimized=optimized)
        rt.prepare(g, spec.members, spec.entries, spec.exits, env)
        so = rt.sessions[-1].get_session_options()
        assert so.intra_op_num_threads == threads and so.inter_op_num_threads == 1
        level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL if optimized else ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        assert so.graph_optimization_level == level


@pytest.mark.slow
def test_cli_threads_reach_xla_flags_before_jax_loads():
    code = ("import os, sys; from xcviz.runtime.native import apply_threads; n, ok = apply_threads(1); "
            "assert 'jax' not in sys.modules and ok and n == 1; f = os.environ['XLA_FLAGS']; "
            "assert 'intra_op_parallelism_threads=1' in f and '--xla_cpu_multi_thread_eigen=false' in f, f; "
            "import jax; print(jax.numpy.ones(2).sum())")
    env = {**os.environ, "PYTHONPATH": ROOT, "XLA_FLAGS": "intra_op_parallelism_threads=7"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    out = subprocess.run([sys.executable, "-m", "xcviz", "validate", os.path.join(GRAPHS, "tiny_mlp_onnx.json"),
                          "--threads", "1", "--repeats", "1", "--json"], env={**os.environ, "PYTHONPATH": ROOT},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    native = json.loads(out.stdout)["native"]
    assert native["threads"] == 1 and native["xla_threads"] == 1 and native["runtime"] == "onnxruntime"


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs a Linux process allowed on 2 or more CPUs")
def test_threads_1_keeps_every_xla_thread_on_one_cpu():
    """XLA_FLAGS alone did not bound XLA:CPU: its YNNPACK convolutions ran on 2 cores under
    intra_op_parallelism_threads=1. After a convolution compiled and run, every thread of the process (XLA's
    pool, onnxruntime's) may run on one CPU only."""
    code = ("import glob, json, os; from xcviz.runtime.native import apply_threads; apply_threads(1); "
            "import numpy as np, jax; x = jax.numpy.ones((1, 64, 56, 56)); w = jax.numpy.ones((64, 64, 3, 3)); "
            "f = jax.jit(lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 1), 'SAME')); "
            "[f(x, w).block_until_ready() for _ in range(3)]; "
            "cpus = {open(p).read().split('Cpus_allowed_list:')[1].split()[0] for p in glob.glob('/proc/self/task/*/status')}; "
            "print(json.dumps([len(glob.glob('/proc/self/task/*')), sorted(cpus)]))")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": ROOT},
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    n_threads, cpus = json.loads(out.stdout)
    # several threads, all allowed on the same single CPU ("3", not "0-1" or "0,1")
    assert n_threads > 1 and len(cpus) == 1 and cpus[0].isdigit(), out.stdout


def test_unknown_native_runtime_is_one_line(run_cli):
    code, _, err = run_cli("validate", os.path.join(GRAPHS, "tiny_mlp_onnx.json"), "--native", "tvm")
    assert code == 2 and "unknown native runtime 'tvm'" in err and "Traceback" not in err


def test_api_calibrate_returns_a_profile_against_onnxruntime(tmp_path):
    import yaml

    from xcviz.cost import load_hardware

    text = xcviz.calibrate(name="api", matmul_n=32, stream_elements=1024, repeats=2)
    data = yaml.safe_load(text)
    assert data["name"] == "api" and data["native"] == "onnxruntime" and "onnxruntime" in data["source"]
    path = tmp_path / "api.yaml"
    path.write_text(text)
    g = xcviz.load(os.path.join(GRAPHS, "resnet_mini.onnx"), dims={"N": 1})
    s = xcviz.stats(g, xcviz.cluster(g), hardware=str(path))
    assert s.native == "onnxruntime" and s.speedup_estimate is not None


def test_tf_graph_without_onnx_form_is_timed_on_numpy_and_says_so(without_tensorflow):
    # a TF GraphDef (no TensorFlow needed to read it): its ops have no ONNX form, its inputs are placeholders;
    # TensorFlow as if not installed (where it is, it is the native runtime: test_torch_tf_timing)
    path = os.path.join(ROOT, "tests", "data", "tf_suite", "conv_bn", "grappler_off-min1",
                        "mark_for_compilation_annotated.pbtxt")
    g = xcviz.load(path)
    report = xcviz.validate(g, repeats=1)
    m = report.model
    assert m.native_ms and m.hybrid_ms and m.runtime == "numpy" and m.native_optimized_ms is None
    assert all(c.native_runtime == "numpy" for c in report.clusters)
    from xcviz.render.run_tables import model_line

    assert NUMPY_WORDS in model_line(m)


@pytest.mark.slow
def test_an_estimate_against_another_runtime_says_which(run_cli):
    """Measured against the NumPy reference, estimated with the cpu profile (measured against onnxruntime):
    the whole-model line says what the estimate is against."""
    code, out, err = run_cli("validate", os.path.join(GRAPHS, "resnet_mini.onnx"), "--dim", "N=1", "--native", "numpy",
                             "--threads", "1", "--repeats", "1")
    assert code == 0, err
    assert "estimated (against onnxruntime: the cpu profile's runtime)" in " ".join(out.split())
