"""validate: every kept cluster of every example graph compiles, matches native, and reports its numbers."""
from __future__ import annotations

import glob
import json
import os

import pytest

import xcviz
from xcviz.errors import XcvizError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = sorted(glob.glob(os.path.join(ROOT, "graphs", "*.yaml")) + glob.glob(os.path.join(ROOT, "graphs", "*.json"))
                + glob.glob(os.path.join(ROOT, "graphs", "*.onnx")))


@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_validate_every_example_graph(path):
    g = xcviz.load(path)
    report = xcviz.validate(g, clustering=xcviz.cluster(g, min_cluster_size=1), repeats=1)
    assert report.clusters and report.ok, [(c.id, c.status, c.message) for c in report.clusters]
    for c in report.clusters:
        assert c.kernels_after >= 1 and c.compile_ms is not None and c.xla_ms > 0 and c.native_ms > 0
        assert c.memory["output_bytes"] > 0 and c.max_rel_error <= 1e-4
    json.dumps(report.to_json(), allow_nan=False)


def test_cli_validate_json_and_hlo(run_cli):
    seed = os.path.join(ROOT, "graphs", "seed_demo.yaml")
    code, out, _ = run_cli("validate", seed, "--min-cluster-size", "1", "--json", "--repeats", "1")
    data = json.loads(out)
    assert code == 0 and data["ok"] and data["clusters"][0]["ops"] == {"conv2d": 1, "matmul": 1, "relu": 1}
    code, out, _ = run_cli("hlo", seed, "--cluster", "0", "--min-cluster-size", "1", "--stage", "stablehlo")
    assert code == 0 and "stablehlo.convolution" in out and "dot_general" in out
    code, out, _ = run_cli("hlo", seed, "--cluster", "cluster_0", "--min-cluster-size", "1")
    assert code == 0 and "ENTRY" in out and "fusion" in out
    code, _, err = run_cli("hlo", seed, "--cluster", "7", "--min-cluster-size", "1")
    assert code == 2 and "no cluster" in err


def test_compile_error_is_a_status_and_auto_fallback_denies_it():
    # custom_nms has no JAX lowering: forcing it in with --allow makes its cluster fail to compile
    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    c = xcviz.cluster(g, min_cluster_size=1, allow=frozenset({"custom_nms"}))
    report = xcviz.validate(g, clustering=c, repeats=1)
    bad = [r for r in report.clusters if r.status != "ok"]
    assert bad and bad[0].status == "compile-error" and "custom_nms" in bad[0].message
    fixed = xcviz.validate(g, clustering=c, repeats=1, auto_fallback=True)
    assert fixed.ok and fixed.denied == ["custom_nms"] and fixed.rounds == 2


def test_validate_given_inputs_must_match():
    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    with pytest.raises(XcvizError):
        xcviz.validate(g, inputs={"x": [[1.0]]})
