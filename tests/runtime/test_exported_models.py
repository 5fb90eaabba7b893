"""The torch ONNX exports in tests/data/exports (docs/real-models.md) cluster as XLA would, run in hybrid mode
like onnxruntime (1e-4 relative to each output's scale; integer outputs exactly) and validate cluster by cluster:
all twelve (bert_dynamo since shape inference follows the values of shape tensors)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from xcviz.runtime.measure import compare
from tests.support.paths import ROOT

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

pytest.importorskip("onnx")
EXPORTS = os.path.join(ROOT, "tests", "data", "exports")

# model -> op types left outside every cluster: only what XLA itself cannot compile (NonMaxSuppression: data-
# dependent output size; TorchScript's Loop: its token tensor grows each step, which an XLA While cannot carry)
# and the few nodes beside them; dynamo's while_loop keeps fixed shapes, so its Loop joins the cluster
FALLBACK = {
    "bert_dynamo": set(), "bert_torchscript": set(), "gpt_dynamo": set(), "gpt_torchscript": set(),
    "tagger_dynamo": set(), "tagger_torchscript": set(), "unet_dynamo": set(), "unet_torchscript": set(),
    "detect_dynamo": {"NonMaxSuppression"}, "detect_torchscript": {"NonMaxSuppression", "Constant"},
    "greedy_decode_torchscript": {"Loop", "Constant", "Unsqueeze"},
    "greedy_whileloop_dynamo": set(),
}


@pytest.mark.parametrize("name", sorted(FALLBACK))
def test_export_clusters_runs_and_validates_like_onnxruntime(name):
    path = os.path.join(EXPORTS, f"{name}.onnx")
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert {n.op_type for i, n in enumerate(g.nodes) if c.cluster_of[i] < 0} == FALLBACK[name]
    feeds = dict(np.load(path.replace(".onnx", ".inputs.npz")))
    want = dict(np.load(path.replace(".onnx", ".ort.npz")))
    got = xcviz.run(g, feeds, mode="hybrid", clustering=c)
    for k, ref in want.items():
        assert got[k].shape == ref.shape and got[k].dtype == ref.dtype, k
        if ref.dtype.kind in "iub":
            assert np.array_equal(got[k], ref), k
        else:
            assert compare(got[k], ref)["max_rel"] <= 1e-4, (k, compare(got[k], ref))
    report = xcviz.validate(g, clustering=c, inputs=feeds, repeats=1)
    assert [(r.status, r.inputs) for r in report.clusters] == [("ok", "real")] * len(c.clusters)
