"""`xcviz sweep` over the nine model-zoo models shipped in the onnx wheel: a row per model × configuration
equal to analysing each alone, fallback ops across the models, error rows, --jobs, --json/--csv."""
from __future__ import annotations

import csv
import io
import json
import os

import onnx
import pytest

import xcviz
from xcviz.pipeline import AnalysisOptions

from tests.cli.test_diff import run
from tests.support.paths import ROOT

LIGHT = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
ZOO = sorted(f for f in os.listdir(LIGHT) if f.endswith(".onnx"))
SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")


@pytest.fixture(scope="module")
def zoo_report():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "xcviz", "sweep", LIGHT, "--set", "strategy=mark", "--set", "deny=relu",
                          "--jobs", "2", "--json"], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.slow
def test_a_row_per_zoo_model_and_configuration(zoo_report):
    assert len(ZOO) == 9
    rows = zoo_report["rows"]
    assert [(r["model"], r["config"]) for r in rows] == [(m, c) for m in ZOO for c in ("strategy=mark", "deny=relu")]
    assert zoo_report["failed"] == 0 and all(r["error"] is None for r in rows)


@pytest.mark.parametrize("name", ["light_squeezenet.onnx", "light_resnet50.onnx"])
def test_rows_equal_the_analysis_of_each_model_alone(zoo_report, name):
    for config, options in (("strategy=mark", AnalysisOptions()), ("deny=relu", AnalysisOptions(deny={"relu"}))):
        row = next(r for r in zoo_report["rows"] if r["model"] == name and r["config"] == config)
        a = xcviz.analyse(os.path.join(LIGHT, name), options)
        assert (row["nodes"], row["clusters"], row["boundary_bytes"]) == (a.stats.nodes, a.stats.clusters, a.stats.boundary_bytes)
        assert row["coverage"] == pytest.approx(a.stats.coverage, abs=1e-6)
        relu = sum(n.op_type == "Relu" for n in a.graph.nodes)
        assert row["fallback_ops"].get("Relu", 0) == (relu if config == "deny=relu" else 0)


def test_fallback_ops_table_counts_models_and_nodes(zoo_report):
    relu = [o for o in zoo_report["fallback_ops"] if o["config"] == "deny=relu" and o["op"] == "Relu"]
    with_relu = [r for r in zoo_report["rows"] if r["config"] == "deny=relu" and r["fallback_ops"].get("Relu")]
    assert relu == [{"config": "deny=relu", "op": "Relu", "models": len(with_relu),
                     "nodes": sum(r["fallback_ops"]["Relu"] for r in with_relu)}]
    assert len(with_relu) >= 8


def test_errors_are_rows_and_exit_1(capsys, tmp_path):
    (tmp_path / "broken.yaml").write_text("nodes: [\n")
    (tmp_path / "seed.yaml").write_text(open(SEED, encoding="utf-8").read())
    code, out, _ = run(capsys, "sweep", str(tmp_path), "--json")
    assert code == 1
    rows = json.loads(out)["rows"]
    assert [r["model"] for r in rows] == ["broken.yaml", "seed.yaml"]
    assert "malformed" in rows[0]["error"] or "YAML" in rows[0]["error"]
    assert rows[1]["error"] is None and rows[1]["nodes"] == 6


def test_config_files_greedy_and_csv(capsys, tmp_path):
    (tmp_path / "greedy.yaml").write_text("strategy: greedy\nmin_cluster_size: 1\n")
    (tmp_path / "mark1.yaml").write_text("min_cluster_size: 1\n")
    code, out, _ = run(capsys, "sweep", SEED, "--config", str(tmp_path / "greedy.yaml"), str(tmp_path / "mark1.yaml"), "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["config"], r["clusters"]) for r in rows] == [("greedy", "3"), ("mark1", "2")]
    assert rows[0]["top_fallback_reasons"] == "forced×1, unsupported×1"


def test_jobs_give_the_same_rows(capsys, tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.yaml").write_text(open(SEED, encoding="utf-8").read())
    one = run(capsys, "sweep", str(tmp_path), "--set", "min_cluster_size=1", "--json")
    two = run(capsys, "sweep", str(tmp_path), "--set", "min_cluster_size=1", "--json", "--jobs", "2")
    assert one[0] == two[0] == 0 and json.loads(one[1]) == json.loads(two[1])


@pytest.mark.parametrize("args, message", [
    (["--set", "strategy=fast"], "strategy"), (["--set", "min_cluster_size=x"], "whole number"),
    (["--json", "--csv"], "exclude"), (["-o", "rows.txt", "--csv"], "does not write"),
])
def test_bad_input_exits_2(capsys, args, message):
    code, _, err = run(capsys, "sweep", SEED, *args)
    assert code == 2 and message in err
    assert run(capsys, "sweep", "no/such/dir")[0] == 2
