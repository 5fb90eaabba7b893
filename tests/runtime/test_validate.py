"""validate: every kept cluster of every example graph compiles, matches native, and reports its numbers."""
from __future__ import annotations

import glob
import json
import os

import pytest

import xcviz
from xcviz.errors import XcvizError
from tests.support.paths import ROOT

GRAPHS = sorted(glob.glob(os.path.join(ROOT, "graphs", "*.yaml")) + glob.glob(os.path.join(ROOT, "graphs", "*.json"))
                + glob.glob(os.path.join(ROOT, "graphs", "*.onnx")))


@pytest.mark.slow
@pytest.mark.parametrize("path", GRAPHS, ids=os.path.basename)
def test_validate_every_example_graph(path):
    g = xcviz.load(path)
    report = xcviz.validate(g, clustering=xcviz.cluster(g, min_cluster_size=1), repeats=1)
    assert report.clusters and report.ok, [(c.id, c.status, c.message) for c in report.clusters]
    for c in report.clusters:
        assert c.kernels_after >= 1 and c.compile_ms is not None and c.xla_ms > 0 and c.native_ms > 0
        assert c.memory["output_bytes"] > 0 and c.max_rel_error <= 1e-4
    json.dumps(report.to_json(), allow_nan=False)


@pytest.mark.slow
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


@pytest.mark.slow
def test_compile_error_is_a_status_and_auto_fallback_denies_it():
    # custom_nms has no JAX lowering: forcing it in with --allow makes its cluster fail to compile
    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    c = xcviz.cluster(g, min_cluster_size=1, allow=frozenset({"custom_nms"}))
    report = xcviz.validate(g, clustering=c, repeats=1)
    bad = [r for r in report.clusters if r.status != "ok"]
    # issue 12: a cluster is ok, mismatch or skipped; issue 29: a compile error is its own status (a run executes
    # such a cluster natively), and it still fails validation
    assert bad and bad[0].status == "compile_failed" and bad[0].reason == "compile-error" and "custom_nms" in bad[0].message
    assert bad[0].failed and not report.ok and report.status == "failed"
    assert report.to_json()["counts"]["compile_failed"] == 1
    fixed = xcviz.validate(g, clustering=c, repeats=1, auto_fallback=True)
    assert fixed.ok and fixed.denied == ["custom_nms"] and fixed.rounds == 2


def test_validate_given_inputs_must_match():
    g = xcviz.load(os.path.join(ROOT, "graphs", "seed_demo.yaml"))
    with pytest.raises(XcvizError):
        xcviz.validate(g, inputs={"x": [[1.0]]})


@pytest.mark.slow
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


@pytest.mark.slow
def test_cli_validate_piped_is_at_most_120_columns(run_cli):
    from rich.cells import cell_len

    code, out, _ = run_cli("validate", os.path.join(ROOT, "graphs", "seed_demo.yaml"), "--min-cluster-size", "1",
                           "--repeats", "1")
    assert code == 0 and max(cell_len(ln.rstrip()) for ln in out.splitlines()) <= 120
    assert [ln.split()[0] for ln in out.splitlines() if ln.startswith("cluster_")] == ["cluster_0", "cluster_1"]


# A model with an op xcviz cannot execute (Frobnicate, unknown) upstream of a cluster and producing an index
PARTIAL = """graph partial(%x: f32[4,8], %w: f32[8,8]) {
  %m: f32[4,8] = matmul(%x, %w)
  %u: f32[4,8] = Frobnicate(%m)
  %k: i64[4] = Frobnicate(%m)
  %r: f32[4,8] = relu(%u)
  %e: f32[4,8] = exp(%r)
  %g: f32[4,8] = gather(%e, %k)
  return %g
}"""


def test_validate_never_gives_up_synthetic_entries_where_upstream_cannot_run():
    g = xcviz.parse_graph(PARTIAL, allow_unknown=True)
    report = xcviz.validate(g, clustering=xcviz.cluster(g, min_cluster_size=1), repeats=1)
    got = {c.id: (c.nodes, c.status, c.inputs) for c in report.clusters}
    assert got == {"cluster_0": (["m"], "ok", "real"), "cluster_1": (["r", "e", "g"], "ok", "synthetic")}
    assert report.ok and report.counts() == {"ok": 2, "mismatch": 0, "skipped": 0, "compile_failed": 0}
    data = report.to_json()
    assert data["cannot_execute"] == [{"op": "Frobnicate", "count": 2, "node": "u", "why": "unknown op Frobnicate"}]
    assert [(c["status"], c["inputs"], c["reason"]) for c in data["clusters"]] == [("ok", "real", None),
                                                                                   ("ok", "synthetic", None)]
    json.dumps(data, allow_nan=False)


def test_synthetic_index_entries_stay_in_range():
    import numpy as np

    from xcviz.runtime.jit import cluster_spec
    from xcviz.runtime.partial import PartialRun, cluster_inputs

    g = xcviz.parse_graph(PARTIAL, allow_unknown=True)
    spec = cluster_spec(g, [g.index[n] for n in ("r", "e", "g")])
    for seed in range(20):
        values, kind, ref = cluster_inputs(g, spec, PartialRun({}, {}), seed)
        assert kind == "synthetic" and values["k"].dtype == np.int64 and 0 <= values["k"].min() <= values["k"].max() < 4
        # the reference is the native ops on those same entries
        e = np.exp(np.maximum(values["u"], 0))
        np.testing.assert_allclose(ref["g"], e[values["k"]], rtol=1e-6)


def test_cluster_holding_an_op_without_implementation_is_skipped_not_aborted():
    g = xcviz.parse_graph(PARTIAL, allow_unknown=True)
    report = xcviz.validate(g, clustering=xcviz.cluster(g, min_cluster_size=1, allow=frozenset({"Frobnicate"})),
                            repeats=1)
    [c] = report.clusters
    assert c.status == "skipped" and c.reason == "no-reference" and "Frobnicate" in c.message
    assert not c.failed  # nothing to compare with is not a failure of xcviz's lowering...
    # ...but a validation that compared nothing says so, and is not ok (issue 29)
    assert report.status == "nothing_checked" and not report.ok and report.to_json()["ok"] is False


def test_cli_run_lists_every_op_it_cannot_execute_validate_goes_on(run_cli, tmp_path):
    path = tmp_path / "partial.xcir"
    path.write_text(PARTIAL)
    code, out, err = run_cli("run", str(path), "--allow-unknown")
    assert code == 2 and not out and len(err.strip().splitlines()) == 1
    assert "cannot execute 2 node(s) of 1 op(s): Frobnicate ×2 (node 'u'" in err
    code, out, err = run_cli("validate", str(path), "--allow-unknown", "--min-cluster-size", "1", "--json",
                             "--repeats", "1")
    data = json.loads(out)
    assert code == 0 and data["ok"] and [c["inputs"] for c in data["clusters"]] == ["real", "synthetic"]
    code, out, err = run_cli("validate", str(path), "--allow-unknown", "--min-cluster-size", "1", "--repeats", "1")
    assert code == 0 and "ok*" in out and "cannot execute: Frobnicate ×2 (node 'u')" in out
