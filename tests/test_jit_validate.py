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


@pytest.mark.parametrize("width", [120, 100])
def test_validate_table_fits_100_to_120_columns(width):
    from rich.cells import cell_len
    from rich.console import Console

    from xcviz.render.run_tables import ops_summary, validate_table

    g = xcviz.load(os.path.join(ROOT, "graphs", "resnet_mini.onnx"))
    report = xcviz.validate(g, clustering=xcviz.cluster(g), repeats=1)
    console = Console(width=width, record=True, file=open(os.devnull, "w"), color_system=None)
    console.print(validate_table(report, width))
    lines = console.export_text().splitlines()
    assert max(cell_len(ln.rstrip()) for ln in lines) <= width
    row = next(ln for ln in lines if ln.startswith("cluster_0"))
    # one line per cluster; top ops first, then how many more kinds; numbers whole (never cut by an ellipsis)
    assert "Conv×8" in row or "BatchNormalizat" in row
    assert "…+" in row and "29→" in row and row.rstrip().endswith("ok")
    assert f"{report.clusters[0].speedup_measured:.2f}×" in row and f"{report.clusters[0].max_rel_error:.1e}" in row
    assert ops_summary({"Conv": 8, "Add": 3, "Relu": 1}, 40) == "Conv×8, Add×3, Relu"
    assert ops_summary({"Conv": 8, "Add": 3, "Relu": 1}, 12) == "Conv×8 …+2"


def test_cli_validate_piped_is_at_most_120_columns(run_cli):
    from rich.cells import cell_len

    code, out, _ = run_cli("validate", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--min-cluster-size", "1",
                           "--repeats", "1")
    assert code == 0 and max(cell_len(ln.rstrip()) for ln in out.splitlines()) <= 120
    assert [ln.split()[0] for ln in out.splitlines() if ln.startswith("cluster_")] == ["cluster_0", "cluster_1"]
