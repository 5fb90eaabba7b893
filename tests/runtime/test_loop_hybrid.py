"""A Loop that falls back (its token tensor grows, so no XLA While can carry it) runs its body hybrid per
iteration in a hybrid run: the body's own clusters compiled, once per input shape, and the same numbers as
onnxruntime; a native run stays pure NumPy and compiles nothing."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.runtime import jit
from xcviz.runtime.execute import execute
from xcviz.runtime.inputs import bind_inputs
from xcviz.runtime.jit import CompileCache
from xcviz.runtime.measure import compare
from xcviz.runtime.subgraphs import _BODY_RUN, body_caches
from tests.support.paths import TESTS

pytest.importorskip("onnx")
pytest.importorskip("jax")

PATH = os.path.join(TESTS, "data", "exports", "greedy_decode_torchscript.onnx")


@pytest.fixture(scope="module")
def model():
    g = xcviz.load(PATH)
    feeds = bind_inputs(g, dict(np.load(PATH.replace(".onnx", ".inputs.npz"))), 0)
    return g, feeds, dict(np.load(PATH.replace(".onnx", ".ort.npz")))


@pytest.fixture(scope="module")
def hybrid(model):
    """Two hybrid runs on one cache: the body caches after each (compiles, hits), and the outputs."""
    g, feeds, _ = model
    cache = CompileCache()
    first = execute(g, feeds, "hybrid", None, cache)
    [plan] = cache.plans.values()
    after_first = [c.stats() for c in body_caches(plan.bodies)]
    second = execute(g, feeds, "hybrid", None, cache)
    return first, second, after_first, [c.stats() for c in body_caches(plan.bodies)]


def _check(got: dict, want: dict) -> None:
    assert set(got) >= set(want)
    for k, ref in want.items():
        if ref.dtype.kind in "iub":
            assert got[k].dtype == ref.dtype and np.array_equal(got[k], ref), k
        else:
            assert compare(got[k], ref)["max_rel"] <= 1e-4, k


def test_the_loop_falls_back_and_its_body_is_one_cluster(model):
    g, _, _ = model
    c = xcviz.cluster(g)
    assert c.cluster_of[g.index["/Loop"]] < 0  # the premise: the Loop itself runs natively


@pytest.mark.slow
def test_hybrid_matches_onnxruntime_and_native(model, hybrid):
    g, feeds, want = model
    first, second, _, _ = hybrid
    _check(first.outputs, want)
    _check(second.outputs, want)
    native = execute(g, feeds, "native", None, CompileCache()).outputs
    assert np.array_equal(first.outputs["tokens"], native["tokens"])
    assert compare(first.outputs["h"], native["h"])["max_rel"] <= 1e-5


def test_body_clusters_compile_once_per_shape(model, hybrid):
    _, _, want = model
    first, second, after_first, after_second = hybrid
    iterations = want["tokens"].shape[1] - 1        # the start token, then one per iteration
    [body] = after_first                            # one body (the If inside it is compiled within its cluster)
    # the token tensor grows by one column per iteration: one executable per shape, no more
    assert 0 < body["compiles"] <= iterations and body["distinct"] == body["compiles"]
    assert body["compiles"] + body["hits"] == iterations
    assert first.compile_seconds >= body["compile_seconds"] > 0   # the run's compile time counts its bodies'
    [again] = after_second                          # a repeated run compiles nothing: every iteration is a hit
    assert again["compiles"] == body["compiles"] and again["hits"] == body["hits"] + iterations
    assert second.compile_seconds == 0
    assert _BODY_RUN.get() is None                  # the run's mode ends with the run


def test_native_compiles_nothing(model, monkeypatch):
    g, feeds, want = model
    calls = []
    monkeypatch.setattr(jit, "compile_cluster", lambda *a, **k: calls.append(a) or pytest.fail("native compiled"))
    cache = CompileCache()
    res = execute(g, feeds, "native", None, cache)
    _check({"tokens": res.outputs["tokens"]}, {"tokens": want["tokens"]})
    [plan] = cache.plans.values()
    assert calls == [] and plan.bodies == {} and cache.stats()["compiles"] == 0


@pytest.mark.slow
def test_run_command_counts_the_body_compiles(run_cli):
    import json

    code, out, err = run_cli("run", PATH, "--mode", "hybrid", "--inputs", PATH.replace(".onnx", ".inputs.npz"),
                             "--json", "--repeats", "1")
    assert code == 0, err
    report = json.loads(out)
    outer = 1                                       # the main graph's one cluster
    assert outer < report["cache"]["compiles"] <= outer + 8 and report["cache"]["distinct"] == report["cache"]["compiles"]
    # one first run compiles everything: its compile time is the caches' (bodies included)
    assert report["compile_ms"] == pytest.approx(report["cache"]["compile_seconds"] * 1e3)
    assert report["outputs"]["tokens"]["shape"] == [2, 9]


def _mixed_loop(tmp_path):
    """A Loop that falls back (NonZero in its body) whose body still has a 5-op cluster: per iteration the
    cluster runs compiled, NonZero and Size natively."""
    import onnx
    from onnx import TensorProto, helper

    def vi(name, dtype, shape):
        return helper.make_tensor_value_info(name, dtype, shape)

    F, I = TensorProto.FLOAT, TensorProto.INT64
    body = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["a"], name="b_add"), helper.make_node("Mul", ["a", "a"], ["m"], name="b_mul"),
         helper.make_node("Tanh", ["m"], ["t"], name="b_tanh"), helper.make_node("Sub", ["t", "x"], ["d"], name="b_sub"),
         helper.make_node("Greater", ["d", "zero"], ["pos"], name="b_gt"),
         helper.make_node("NonZero", ["pos"], ["nz"], name="b_nz"), helper.make_node("Size", ["nz"], ["n"], name="b_size"),
         helper.make_node("Identity", ["c"], ["c2"], name="b_id")],
        "mixed", [vi("i", I, []), vi("c", TensorProto.BOOL, []), vi("x", F, [4])],
        [vi("c2", TensorProto.BOOL, []), vi("d", F, [4]), vi("n", I, [])],
        [helper.make_tensor("one", F, [], [0.5]), helper.make_tensor("zero", F, [], [0.0])])
    graph = helper.make_graph([helper.make_node("Loop", ["trips", "", "x0"], ["xf", "ns"], body=body, name="loop")],
                              "mixed_loop", [vi("trips", I, []), vi("x0", F, [4])], [vi("xf", F, [4]), vi("ns", I, [None])])
    path = str(tmp_path / "mixed_loop.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_body_with_a_fallback_op_runs_its_cluster_compiled_and_the_rest_natively(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    path = _mixed_loop(tmp_path)
    feeds = {"trips": np.array(6, np.int64), "x0": np.array([-1.5, -0.2, 0.3, 2.0], np.float32)}
    want = dict(zip(["xf", "ns"], ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)))
    g = xcviz.load(path)
    assert xcviz.cluster(g).cluster_of[g.index["loop"]] < 0   # NonZero in its body: the Loop runs natively
    cache = CompileCache()
    got = execute(g, feeds, "hybrid", None, cache).outputs
    _check(got, want)
    assert np.array_equal(got["ns"], execute(g, feeds, "native", None, CompileCache()).outputs["ns"])
    [plan] = cache.plans.values()
    [body] = [c.stats() for c in body_caches(plan.bodies)]
    assert (body["compiles"], body["hits"]) == (1, 5)       # a fixed shape: one executable, five reuses
