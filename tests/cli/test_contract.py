"""The CLI contract: JSON on stdout only, stable bytes, documented keys, one-line errors with exit codes."""
import json
import os
import subprocess
import sys

import pytest
from tests.support.paths import ROOT

SEED = os.path.join("graphs", "seed_demo.yaml")


def test_cluster_json_contract_and_determinism(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out1, err = run_cli("cluster", SEED, "--min-cluster-size", "1", "--json")
    assert code == 0 and err == ""
    _, out2, _ = run_cli("cluster", SEED, "--min-cluster-size", "1", "--json")
    assert out1 == out2  # same input and flags: same bytes
    data = json.loads(out1)
    assert data["schema_version"] == 1
    assert [c["nodes"] for c in data["clusters"]] == [["c1", "r1", "m1"], ["a1"]]
    c0 = data["clusters"][0]
    assert {"id", "nodes", "entry_points", "exit_points", "boundary_bytes_in", "boundary_bytes_out"} <= set(c0)
    assert c0["id"] == "cluster_0"
    assert data["nodes"]["p1"] == {**data["nodes"]["p1"], "cluster": None, "reason": "forced off (compile: false)"}
    assert data["nodes"]["r1"]["cluster"] == "cluster_0" and data["nodes"]["r1"]["reason"] is None
    assert {"coverage", "coverage_flops", "boundary_bytes", "speedup_estimate", "clusters", "fallback_nodes"} <= set(data["stats"])
    assert data["stats"]["coverage"] == pytest.approx(4 / 6, abs=1e-6)
    assert data["stats"]["boundary_bytes"] == sum(e["bytes"] for e in data["boundary_edges"])
    assert data["graph"]["source"] == SEED  # as given, never made absolute


def test_merges_refused_in_json(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("cluster", "graphs/cycle_refused.yaml", "--json")
    refused = json.loads(out)["merges_refused"]
    assert refused and refused[0] == {**refused[0], "from": "enc_scale", "to": "merge", "phase": 1,
                                      "path": ["tokenize_hook"]}
    assert "cycle" in refused[0]["reason"]


def test_json_to_file_is_atomic_and_refuses_input(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "r.json"
    code, stdout, _ = run_cli("stats", SEED, "--json", "-o", str(out))
    assert code == 0 and stdout == "" and json.loads(out.read_text())["stats"]["clusters"] == 0
    code, _, err = run_cli("stats", SEED, "--json", "-o", SEED)
    assert code == 2 and "refusing to write over an input file" in err
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp files left behind


@pytest.mark.slow
def test_tables_summary_line_and_explain(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("cluster", SEED, "--min-cluster-size", "1")
    assert code == 0
    assert "2 clusters · coverage 4/6 ops (67 %)" in out
    assert "forced off (compile: false)" in out
    code, out, _ = run_cli("explain", "graphs/cycle_refused.yaml", "merge")
    assert "would create a cycle via tokenize_hook" in out and "result: in cluster_1" in out
    code, out, _ = run_cli("explain", SEED, "c1")
    assert "falls back, cluster below minimum size (3 < 4)" in out
    code, out, _ = run_cli("ops")
    assert "NonMaxSuppression" in out and "conv2d" in out


@pytest.mark.parametrize("args, code, text", [
    (["cluster", "nope.yaml"], 2, "nope.yaml: file not found"),
    (["explain", SEED, "zz"], 2, "no node named 'zz'"),
    (["cluster", SEED, "--strategy", "best"], 2, "unknown strategy 'best'"),
    (["cluster", SEED, "--hardware", "abacus"], 2, "unknown hardware profile"),
    (["cluster", SEED, "--dim", "batch"], 2, "bad --dim"),
])
def test_errors_are_one_line_without_traceback(run_cli, monkeypatch, args, code, text):
    monkeypatch.chdir(ROOT)
    rc, out, err = run_cli(*args)
    assert rc == code and text in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_every_example_graph_clusters_and_stats(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    for name in sorted(os.listdir("graphs")):  # every file: graphs/ holds graphs only
        for cmd in ("cluster", "stats"):
            rc, out, err = run_cli(cmd, f"graphs/{name}", "--json")
            assert rc == 0, (name, err)
            assert json.loads(out)["schema_version"] == 1


@pytest.mark.slow
def test_python_m_xcviz_and_fast_help():
    r = subprocess.run([sys.executable, "-m", "xcviz", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "cluster" in r.stdout
    r = subprocess.run([sys.executable, "-c", "import sys, xcviz.cli; print(sorted(m for m in ('jax', 'onnx', 'graphviz') if m in sys.modules))"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.stdout.strip() == "[]"  # heavy imports stay lazy
