"""The PyTorch corpus (tools/make_torch_corpus.py: transformers models random-initialised from tiny configs and
modules written as timm writes its layers): each .pt2, read by xcviz's own archive reader, loads with no unknown
op, clusters with the partition of its ONNX twin (same clusters, same coverage), and runs hybrid as torch eager."""
from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
pytest.importorskip("jax", reason="needs the jax extra: pip install -e '.[jax]'")
import xcviz  # noqa: E402
from tests.support.paths import TESTS  # noqa: E402

HERE = os.path.join(TESTS, "data", "torch_corpus")
MODELS = sorted(n[:-4] for n in os.listdir(HERE) if n.endswith(".pt2"))


def _partition(graph, clustering) -> tuple[int, int, int]:
    """(kept clusters, ops clustered, ops), constants left out: an ONNX Constant is a node, a .pt2 weight is not."""
    ops = [j for j, n in enumerate(graph.nodes) if n.op not in ("const", "identity")]
    return len(clustering.clusters), sum(1 for j in ops if clustering.cluster_of[j] >= 0), len(ops)


def test_the_corpus_holds_the_issue_s_patterns():
    assert {"timm_vit", "timm_gn_weightnorm", "hf_bert", "hf_t5_encoder", "hf_wav2vec2"} <= set(MODELS)


@pytest.mark.slow
@pytest.mark.parametrize("name", MODELS)
def test_pt2_clusters_as_its_onnx_twin_and_runs_as_eager(name, monkeypatch):
    base = os.path.join(HERE, name)
    # read by xcviz's own archive reader: torch.export.load (which unpickles) is never needed
    monkeypatch.setattr(torch.export, "load", lambda *a, **k: pytest.fail("torch.export.load was called"))
    g = xcviz.load(base + ".pt2")
    assert [(n.name, n.note) for n in g.nodes if not n.known] == []
    c = xcviz.cluster(g)
    onnx = xcviz.load(base + ".onnx")
    co = xcviz.cluster(onnx)
    pt2_clusters, pt2_in, pt2_ops = _partition(g, c)
    onnx_clusters, onnx_in, onnx_ops = _partition(onnx, co)
    assert pt2_clusters == onnx_clusters
    assert pt2_in / pt2_ops == onnx_in / onnx_ops
    inputs = dict(np.load(base + ".inputs.npz"))
    eager = np.load(base + ".eager.npz")
    got = list(xcviz.run(g, inputs, mode="hybrid", clustering=c).values())
    assert len(got) == len(eager.files)
    for k, a in enumerate(got):
        want = eager[f"out{k}"]
        assert a.shape == want.shape
        np.testing.assert_allclose(a, want, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(want).max())),
                                   err_msg=f"{name} output {k}")
