"""Compile cache: structurally identical clusters compile once (a 12-layer transformer -> 1 layer compile)."""
from __future__ import annotations

import pytest
import importlib.util
import os

import numpy as np

import xcviz
from xcviz.passes.prepare import prepare
from xcviz.loaders.onnx_model import graph_from_model
from xcviz.runtime.execute import bind_inputs, execute
from xcviz.runtime.jit import CompileCache, count_kernels
from xcviz.runtime.measure import compare
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)



def _make_models():
    spec = importlib.util.spec_from_file_location("make_models", os.path.join(ROOT, "tools", "make_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_twelve_layer_transformer_compiles_each_distinct_cluster_once():
    model = _make_models().transformer(layers=12, d=32, heads=2, check_numerics=True, name="deep")
    g = prepare(graph_from_model(model, "deep.onnx"), onnx=True)
    c = xcviz.cluster(g)
    assert len(c.clusters) == 12  # split by CheckNumerics; the final norm alone is below min size
    feeds = bind_inputs(g, {"x": np.random.default_rng(0).standard_normal((2, 5, 32)).astype(np.float32)})
    cache = CompileCache()
    res = execute(g, feeds, "hybrid", c, cache)
    assert cache.stats()["compiles"] == 1 and cache.hits == 11  # one compile for the layer body
    ref = execute(g, feeds, "native")
    for k in ref.outputs:
        assert compare(res.outputs[k], ref.outputs[k])["ok"]
    again = execute(g, feeds, "hybrid", c, cache)
    assert cache.stats()["compiles"] == 1 and cache.hits == 11 + 12 and again.compile_seconds == 0.0


def test_different_shapes_are_different_executables():
    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_encoder.onnx"))
    c = xcviz.cluster(g)
    cache = CompileCache()
    for s in (3, 3, 4):
        feeds = bind_inputs(g, {"x": np.zeros((1, s, 64), np.float32)})
        execute(g, feeds, "hybrid", c, cache)
    assert cache.misses == 2 and cache.hits == 1
    assert feeds.dims == {"B": 1, "S": 4} and g.dims == {}  # (the sizes the last run bound; the graph keeps its own)


def test_count_kernels_reads_the_entry_computation():
    text = """HloModule m
%fused_computation (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %e = f32[4]{0} exponential(%p)
}
ENTRY %main (a: f32[4]) -> (f32[4], f32[4]) {
  %a = f32[4]{0} parameter(0)
  %fusion = f32[4]{0} fusion(%a), kind=kLoop, calls=%fused_computation
  %dot.1 = f32[4]{0} custom-call(%a), custom_call_target="x"
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%fusion, %dot.1)
}
"""
    assert count_kernels(text) == (2, 1)


def test_repeated_runs_reuse_the_plan_without_reclustering_or_recompiling(monkeypatch):
    import xcviz.runtime.execute as ex

    g = xcviz.load(os.path.join(ROOT, "graphs", "transformer_encoder.onnx"))
    calls = []
    real = ex.jit_clustering
    monkeypatch.setattr(ex, "jit_clustering", lambda graph: calls.append(1) or real(graph))
    x = np.random.default_rng(1).standard_normal((1, 3, 64)).astype(np.float32)
    first = xcviz.run(g, {"x": x}, mode="jit")
    for _ in range(3):
        again = xcviz.run(g, {"x": x}, mode="jit")
        assert all(np.array_equal(again[k], first[k]) for k in first)
    cache = ex.graph_cache(g)
    assert calls == [1] and cache.misses == 1 and cache.hits == 3
    xcviz.run(g, {"x": np.concatenate([x, x], axis=1)}, mode="jit")  # a new sequence length: one new executable
    assert calls == [1] and cache.misses == 2
    # a rebuilt graph (new nodes) gets a fresh cache, never a stale plan
    g2 = xcviz.load(os.path.join(ROOT, "graphs", "transformer_encoder.onnx"))
    assert ex.graph_cache(g2) is not cache


def test_hybrid_options_plan_is_cached_per_options():
    from xcviz.runtime.execute import graph_cache

    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    for _ in range(3):
        xcviz.run(g, seed=0, min_cluster_size=1)
    cache = graph_cache(g)
    assert len(cache.plans) == 1 and cache.misses == 2 and cache.hits == 4
