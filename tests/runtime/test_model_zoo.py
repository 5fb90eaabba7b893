"""Model-zoo models shipped in the onnx wheel (onnx/backend/test/data/light) run in hybrid mode, one cluster of
every node, and match onnxruntime within 1e-4 relative on seeded inputs (the wheel ships no inputs: its
*_output_0.pb come from random inputs the onnx runner does not keep)."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import xcviz
from xcviz.runtime.measure import compare
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")


def _survey_tool():
    """tools/make_exports.py: its folding (ConstantOfShape weights -> seeded random initializers) and inputs."""
    spec = importlib.util.spec_from_file_location("make_exports", os.path.join(ROOT, "tools", "make_exports.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# The smallest and fastest of the nine: SqueezeNet (opset-9 Softmax over 1x1000x1x1) and AlexNet (LRN), folded:
# with every weight 0.02 the logits are ~7e9 and all equal, a comparison that proves little (docs/real-models.md)
@pytest.mark.parametrize("name,folded", [("squeezenet", True), ("bvlc_alexnet", True)])
def test_zoo_model_runs_hybrid_like_onnxruntime(name, folded, tmp_path):
    path = os.path.join(LIGHT, f"light_{name}.onnx")
    tool = _survey_tool()
    if folded:
        path = tool.fold_constant_of_shape(path, str(tmp_path / f"{name}_folded.onnx"))
    feeds = tool._seeded_inputs(path)
    expected = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert [len(m) for m in c.clusters] == [len(g.nodes)]  # LRN, legacy Softmax: all compilable
    out = xcviz.run(g, feeds, mode="hybrid", clustering=c)
    for got, ref in zip(out.values(), expected):
        assert got.shape == ref.shape and got.dtype == ref.dtype
        assert compare(got, ref)["max_rel"] <= 1e-4, (name, compare(got, ref))
    if name == "squeezenet":
        assert abs(float(np.sum(list(out.values())[0])) - 1.0) < 1e-4  # opset-9 Softmax: a distribution


@pytest.mark.parametrize("name", ["bvlc_alexnet", "densenet121", "inception_v1", "inception_v2", "resnet50",
                                  "shufflenet", "squeezenet", "vgg19", "zfnet512"])
def test_zoo_model_is_one_cluster_as_xla_makes_it(name):
    g = xcviz.load(os.path.join(LIGHT, f"light_{name}.onnx"))
    c = xcviz.cluster(g)  # ConstantOfShape (XLA's Fill) makes every weight: it no longer splits the model
    assert [len(m) for m in c.clusters] == [len(g.nodes)]
