"""The five example ONNX models in graphs/ run in hybrid mode and match onnxruntime (1e-4 relative)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.runtime.measure import compare
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

MODELS = {"resnet_mini": (2, 3, 32, 32), "mobilenet_mini": (2, 3, 32, 32), "transformer_encoder": (2, 7, 64),
          "unet_mini": (1, 3, 32, 32), "detector_mini": (1, 3, 32, 32)}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_hybrid_matches_onnxruntime(name):
    import onnxruntime as ort

    path = os.path.join(ROOT, "graphs", f"{name}.onnx")
    assert os.path.getsize(path) < 2 * 1024 * 1024
    x = np.random.default_rng(7).standard_normal(MODELS[name]).astype(np.float32)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    expected = sess.run(None, {"x": x})
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert c.clusters, "every example model has at least one kept cluster"
    out = xcviz.run(g, {"x": x}, mode="hybrid", clustering=c)
    assert list(out) == [o.name for o in sess.get_outputs()]  # keyed by the model's own output names
    for got, ref in zip(out.values(), expected):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        cmp = compare(got, ref)
        assert cmp["max_rel"] <= 1e-4, (name, cmp)


def test_detector_nms_falls_back_and_still_runs():
    g = xcviz.load(os.path.join(ROOT, "graphs", "detector_mini.onnx"))
    c = xcviz.cluster(g)
    nms = g.index["nms"]
    assert c.cluster_of[nms] == -1 and "data-dependent" in (c.reason[nms] or "")


def test_models_script_is_deterministic(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_models", os.path.join(ROOT, "tools", "make_models.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(str(tmp_path))
    for name in MODELS:
        with open(tmp_path / f"{name}.onnx", "rb") as a, open(os.path.join(ROOT, "graphs", f"{name}.onnx"), "rb") as b:
            assert a.read() == b.read(), f"graphs/{name}.onnx is stale: rerun python tools/make_models.py"
