"""A run never aborts on a cluster (issue 29): a must-be-constant value a Loop body computes from outer shapes is
baked in (TF's backwards constant analysis through bodies); a cluster XLA cannot compile runs natively with a
warning (TF's lazy compilation) and is `compile_failed` in validate; a validate that compared nothing says so."""
from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pytest

import xcviz

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _vi(name, shape, dtype=F):
    return helper.make_tensor_value_info(name, dtype, shape)


def topk_loop_model():
    """k = min(5, x0.shape[-1]) outside a while Loop whose body takes the top k of its logits (as a greedy
    decoder's top-k): with Min left out of every cluster (deny), k enters the Greater + Loop cluster."""
    body = helper.make_graph([
        helper.make_node("Add", ["x", "bias"], ["logits"], name="b_add"),
        helper.make_node("TopK", ["logits", "k"], ["vals", "idx"], axis=-1, name="b_topk"),
        helper.make_node("ReduceMax", ["vals"], ["m"], axes=[1], keepdims=1, name="b_max"),
        helper.make_node("Sub", ["x", "m"], ["x2"], name="b_sub"),
        helper.make_node("Tanh", ["x2"], ["x3"], name="b_tanh"),
        helper.make_node("Identity", ["c"], ["c2"], name="b_cond"),
    ], "body", [_vi("i", [], I64), _vi("c", [], TensorProto.BOOL), _vi("x", [2, 10])],
        [_vi("c2", [], TensorProto.BOOL), _vi("x3", [2, 10])],
        [numpy_helper.from_array(np.linspace(-1, 1, 10).astype(np.float32), "bias")])
    g = helper.make_graph([
        helper.make_node("Shape", ["x0"], ["s"], name="g_shape"),
        helper.make_node("Gather", ["s", "last"], ["d"], axis=0, name="g_last"),
        helper.make_node("Min", ["d", "five"], ["k0"], name="g_min"),
        helper.make_node("Unsqueeze", ["k0", "ax0"], ["k"], name="kk"),
        helper.make_node("ReduceSum", ["x0"], ["tot"], keepdims=0, name="total"),
        helper.make_node("Greater", ["tot", "lo"], ["go"], name="go"),
        helper.make_node("Loop", ["M", "go", "x0"], ["xf"], body=body, name="loop"),
    ], "topk_loop", [_vi("x0", [2, 10])], [_vi("xf", [2, 10])],
        [numpy_helper.from_array(np.array(3, np.int64), "M"), numpy_helper.from_array(np.float32(-100.0), "lo"),
         numpy_helper.from_array(np.array(-1, np.int64), "last"), numpy_helper.from_array(np.array(5, np.int64), "five"),
         numpy_helper.from_array(np.array([0], np.int64), "ax0")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def topk_loop(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("topk") / "topk_loop.onnx")
    onnx.save(topk_loop_model(), path)
    return path


def test_a_constant_a_body_needs_is_baked_into_the_cluster(topk_loop):
    from xcviz.runtime.jit import baked_entries, cluster_spec

    g = xcviz.load(topk_loop)
    c = xcviz.cluster(g, deny=frozenset({"Min"}))
    [members] = c.clusters
    assert "loop" in [g.nodes[i].name for i in members] and "g_min" not in [g.nodes[i].name for i in members]
    spec = cluster_spec(g, members)
    assert "g_min" in spec.entries and "g_min" in baked_entries(g, spec)  # k's producer, outside the cluster
    x0 = np.random.default_rng(0).standard_normal((2, 10)).astype(np.float32)
    want = ort.InferenceSession(topk_loop, providers=["CPUExecutionProvider"]).run(None, {"x0": x0})[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not a native fallback
        got = xcviz.run(g, {"x0": x0}, mode="hybrid", clustering=c)["xf"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_cluster_that_does_not_compile_runs_natively_with_a_warning(run_cli):
    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    c = xcviz.cluster(g, min_cluster_size=1, allow=frozenset({"custom_nms"}))  # custom_nms: no JAX lowering
    with pytest.warns(RuntimeWarning, match=r"cluster_0 of seed_demo did not compile and ran natively.*custom_nms"):
        got = xcviz.run(g, mode="hybrid", clustering=c, seed=0)
    want = xcviz.run(g, mode="native", seed=0)
    assert got.keys() == want.keys() and all(np.array_equal(got[k], want[k]) for k in got)
    code, out, err = run_cli("run", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--min-cluster-size", "1",
                             "--allow", "custom_nms", "--check", "--json", "--repeats", "1")
    data = json.loads(out)
    assert code == 0 and "warning: cluster_0 of seed_demo did not compile and ran natively" in err
    assert [f["cluster"] for f in data["fallbacks"]] == ["cluster_0"] and "custom_nms" in data["fallbacks"][0]["error"]
    assert all(o["check"]["ok"] for o in data["outputs"].values())


PARTIAL = """graph partial(%x: f32[4,8], %w: f32[8,8]) {
  %m: f32[4,8] = matmul(%x, %w)
  %u: f32[4,8] = Frobnicate(%m)
  %r: f32[4,8] = relu(%u)
  %e: f32[4,8] = exp(%r)
  return %e
}"""


def test_validate_that_checked_nothing_is_not_ok(run_cli, tmp_path):
    path = tmp_path / "partial.xcir"
    path.write_text(PARTIAL)
    args = ("validate", str(path), "--allow-unknown", "--allow", "Frobnicate", "--min-cluster-size", "1",
            "--repeats", "1")
    code, out, err = run_cli(*args, "--json")
    data = json.loads(out)
    assert [c["status"] for c in data["clusters"]] == ["skipped"]
    assert data["ok"] is False and data["status"] == "nothing_checked" and code == 1
    assert "nothing was checked: every cluster was skipped (no-reference)" in err
    code, out, err = run_cli(*args)
    assert code == 1 and "nothing checked" in out


def nan_cast_model():
    """T5's position buckets in small: log|rel| cast to int (log 0 = -inf) where Where keeps the exact bucket for
    small |rel|; and `raw`, log(|rel| - 1) cast to int, NaN on the diagonal (XLA gives 0 there, NumPy INT_MIN)."""
    vi = helper.make_tensor_value_info
    g = helper.make_graph([
        helper.make_node("Abs", ["rel"], ["a"], name="abs"),
        helper.make_node("Cast", ["a"], ["af"], to=F, name="tofloat"),
        helper.make_node("Log", ["af"], ["l"], name="log"),
        helper.make_node("Mul", ["l", "scale"], ["ls"], name="mul_scale"),
        helper.make_node("Cast", ["ls"], ["bi"], to=I64, name="toint"),
        helper.make_node("Add", ["bi", "eight"], ["big"], name="shift"),
        helper.make_node("Less", ["a", "eight"], ["small"], name="small"),
        helper.make_node("Where", ["small", "a", "big"], ["bucket"], name="pick"),
        helper.make_node("Sub", ["af", "one"], ["am"], name="minus1"),
        helper.make_node("Log", ["am"], ["lm"], name="log_m"),
        helper.make_node("Cast", ["lm"], ["raw"], to=I64, name="cast_raw"),
    ], "nancast", [vi("rel", I64, [4, 4])], [vi("bucket", I64, [4, 4]), vi("raw", I64, [4, 4])],
        [numpy_helper.from_array(np.float32(3.0), "scale"), numpy_helper.from_array(np.array(8, np.int64), "eight"),
         numpy_helper.from_array(np.float32(1), "one")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_integers_cast_from_nan_are_undefined_and_said_so(run_cli, tmp_path):
    from xcviz.runtime.execute import bind_inputs, execute
    from xcviz.runtime.undefined import undefined_masks

    path = str(tmp_path / "nancast.onnx")
    onnx.save(nan_cast_model(), path)
    rel = (np.subtract.outer(np.arange(4), np.arange(4)) * 5).astype(np.int64)
    np.savez(tmp_path / "in.npz", rel=rel)
    g = xcviz.load(path)
    env = execute(g, bind_inputs(g, {"rel": rel}), "native", keep_all=True).env
    masks = undefined_masks(g.nodes, env)
    # Where keeps the exact bucket where log|rel| is -inf: nothing undefined reaches `bucket`; raw's NaN diagonal is
    assert "pick" not in masks and np.array_equal(masks["cast_raw"], np.eye(4, dtype=bool))
    want = dict(zip(["bucket", "raw"], ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
        None, {"rel": rel})))
    code, out, err = run_cli("run", path, "--inputs", str(tmp_path / "in.npz"), "--mode", "jit", "--check", "--json",
                             "--repeats", "1", "-o", str(tmp_path / "out.npz"))
    data = json.loads(out)
    assert code == 0, err
    raw = data["outputs"]["raw"]["check"]
    assert raw["ok"] and raw["undefined"] == 4 and "cast from non-finite" in raw["note"]
    got = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(got["bucket"], want["bucket"])  # the defined elements agree with onnxruntime
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_array_equal(got["raw"][off], want["raw"][off])
    code, out, _ = run_cli("validate", path, "--inputs", str(tmp_path / "in.npz"), "--min-cluster-size", "1",
                           "--json", "--repeats", "1")
    [c] = json.loads(out)["clusters"]
    assert code == 0 and c["status"] == "ok" and c["undefined"] == 4 and "not compared" in c["message"]


def test_validate_with_no_cluster_kept_says_nothing_was_checked(run_cli):
    code, out, err = run_cli("validate", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--json", "--repeats", "1")
    data = json.loads(out)
    assert code == 1 and data["clusters"] == [] and data["ok"] is False and data["status"] == "nothing_checked"
    assert "nothing was checked: no cluster is kept" in err
