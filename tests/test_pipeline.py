"""The analysis pipeline (xcviz.pipeline): its options object and analyse(), as the CLI, samples and tests use them."""
from __future__ import annotations

import ast
import dataclasses
import json
import os

import pytest

import xcviz
from xcviz.errors import XcvizError
from xcviz.pipeline import Analysis, AnalysisOptions, analyse, load_graph, parse_dims, split_list

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "graphs", "seed_demo.yaml")


def _report(a: Analysis) -> dict:
    from xcviz.render.report_json import cluster_report

    return cluster_report(a.graph, a.clustering, a.stats)


def test_options_are_frozen_and_replace_validates_again():
    o = AnalysisOptions(min_cluster_size=1, allow=["relu"], dims={"batch": 8})
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.strategy = "greedy"  # type: ignore[misc]
    with pytest.raises(TypeError):
        o.dims["batch"] = 2  # type: ignore[index]
    assert o.allow == frozenset({"relu"}) and isinstance(o.allow, frozenset)
    assert o.replace(strategy="greedy").strategy == "greedy" and o.strategy == "mark"
    assert o.cluster_options.min_size == 1
    same = AnalysisOptions(min_cluster_size=1, allow={"relu"}, dims={"batch": 8})
    assert o == same and hash(o) == hash(same) and o != o.replace(dims={"batch": 4})
    with pytest.raises(XcvizError, match="unknown strategy"):
        o.replace(strategy="fastest")


def test_option_fields_are_the_shared_flags():
    from xcviz.cli.base import ANALYSIS_OPTIONS

    fields = [f.name for f in dataclasses.fields(AnalysisOptions)]
    assert fields == [name for name, _, _ in ANALYSIS_OPTIONS if name != "debug"]
    defaults = {f.name: f.default for f in dataclasses.fields(AnalysisOptions) if f.default is not dataclasses.MISSING}
    for name, _, default in ANALYSIS_OPTIONS:
        if name in defaults and default is not None and not isinstance(default, bool):
            assert defaults[name] == default, name


@pytest.mark.parametrize("kwargs, message, hint", [
    (dict(strategy="fast"), "unknown strategy 'fast'", "--strategy mark"),
    (dict(device="npu"), "unknown device 'npu'", "--device cpu"),
    (dict(dims={"batch": -1}), "bad --dim", "--dim batch=8"),
])
def test_invalid_options_are_xcviz_errors_with_hints(kwargs, message, hint):
    with pytest.raises(XcvizError) as e:
        AnalysisOptions(**kwargs)
    assert message in e.value.message and hint in e.value.hint


def test_from_flags_parses_the_command_line_strings(tmp_path):
    ops = tmp_path / "ops.txt"
    ops.write_text("relu  # the activation\n\nadd\n", encoding="utf-8")
    o = AnalysisOptions.from_flags(allow=["relu, add", "matmul"], deny=None, supported_ops=str(ops),
                                   dims=["batch=8", "seq=16", "batch=2"], strategy="greedy")
    assert o.allow == frozenset({"relu", "add", "matmul"}) and o.deny == frozenset()
    assert o.supported_ops == frozenset({"relu", "add"})
    assert dict(o.dims) == {"batch": 2, "seq": 16} and o.strategy == "greedy"
    ops.write_text("[relu, matmul]\n", encoding="utf-8")
    assert AnalysisOptions.from_flags(supported_ops=str(ops)).supported_ops == frozenset({"relu", "matmul"})
    assert split_list(["a,,b", " c "]) == frozenset("abc") and parse_dims(None) == {}
    with pytest.raises(XcvizError, match="bad --dim 'batch'") as e:
        AnalysisOptions.from_flags(dims=["batch"])
    assert e.value.hint == "write --dim batch=8"
    with pytest.raises(XcvizError, match="supported-ops file not found"):
        AnalysisOptions.from_flags(supported_ops=str(tmp_path / "missing.txt"))


def test_analyse_a_path_and_a_graph_give_the_same_result():
    options = AnalysisOptions(min_cluster_size=1)
    from_path = analyse(SEED, options)
    from_graph = analyse(xcviz.load(SEED), options)
    assert isinstance(from_path, Analysis)
    assert _report(from_path) == _report(from_graph)
    assert from_path.stats.hardware == from_graph.hardware.name == "cpu"
    assert "seed_demo" in repr(from_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        from_path.graph = None  # type: ignore[misc]


@pytest.mark.parametrize("name", ["seed_demo.yaml", "cycle_refused.yaml", "transformer_block.yaml"])
def test_analyse_without_recording_attempts_gives_the_same_numbers(name):
    """record=False (what `stats` asks for) keeps no merge attempt and changes nothing else."""
    from xcviz.render.report_json import stats_report

    path = os.path.join(ROOT, "graphs", name)
    full, bare = analyse(path, AnalysisOptions(min_cluster_size=1)), analyse(path, AnalysisOptions(min_cluster_size=1), record=False)
    assert len(full.clustering.attempts) > 0 and len(bare.clustering.attempts) == 0
    assert stats_report(bare.graph, bare.clustering, bare.stats) == stats_report(full.graph, full.clustering, full.stats)
    assert (bare.clustering.clusters, bare.clustering.cluster_of, bare.clustering.reason) == \
        (full.clustering.clusters, full.clustering.cluster_of, full.clustering.reason)


def test_analyse_matches_the_cli_report(run_cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("cluster", "graphs/seed_demo.yaml", "--min-cluster-size", "1", "--deny", "relu", "--json")
    assert code == 0
    a = analyse("graphs/seed_demo.yaml", AnalysisOptions(min_cluster_size=1, deny={"relu"}))
    assert json.loads(out) == _report(a)


def test_options_reach_loading_and_clustering(write_graph):
    path = write_graph("name: g\ninputs: [{name: x, shape: [n, 4], dtype: float32}]\n"
                       "nodes:\n  - {name: a, op: relu, inputs: [x]}\n  - {name: b, op: mystery_op, inputs: [a],"
                       " shape: [n, 4], dtype: float32}\n  - {name: c, op: relu, inputs: [b]}\noutputs: [c]\n")
    with pytest.raises(XcvizError, match="mystery_op"):
        analyse(path)
    a = analyse(path, AnalysisOptions(allow_unknown=True, dims={"n": 3}, min_cluster_size=1))
    assert a.graph.dims["n"] == 3 and a.stats.boundary_bytes is not None
    assert a.clustering.cluster_of[a.graph.index["b"]] < 0
    # a support file replaces the built-in set and loads the ops it does not know
    b = analyse(path, AnalysisOptions(supported_ops={"relu"}, min_cluster_size=1))
    assert b.clustering.cluster_of[b.graph.index["a"]] >= 0
    with pytest.raises(XcvizError, match="over the limit of 2"):
        load_graph(path, AnalysisOptions(allow_unknown=True, max_nodes=2))


def test_progress_names_each_step_and_the_library_is_silent(capsys):
    seen: list[str] = []
    analyse(SEED, progress=seen.append)
    assert seen == [f"loading {SEED}", "clustering 6 nodes", "cost model"]
    seen.clear()
    analyse(xcviz.load(SEED), progress=seen.append)
    assert seen == ["clustering 6 nodes", "cost model"]
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_public_api_exports_the_pipeline():
    assert xcviz.analyse is analyse and xcviz.AnalysisOptions is AnalysisOptions
    assert {"analyse", "AnalysisOptions", "Analysis"} <= set(xcviz.__all__)


@pytest.mark.slow
def test_only_the_cli_imports_the_cli():
    """The library, samples and renderers never reach into the command line (it sits on top)."""
    package = os.path.join(ROOT, "xcviz")
    offenders = []
    for folder, _, files in os.walk(package):
        rel = os.path.relpath(folder, package)
        if rel == "cli" or rel.startswith("cli" + os.sep):
            continue
        for name in files:
            if not name.endswith(".py") or (rel == "." and name == "__main__.py"):
                continue
            path = os.path.join(folder, name)
            tree = ast.parse(open(path, encoding="utf-8").read())
            for node in ast.walk(tree):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [("." * node.level) + (node.module or "")] if isinstance(node, ast.ImportFrom) else []
                if any(m == "xcviz.cli" or m.startswith("xcviz.cli.") or m.lstrip(".").split(".")[0] == "cli"
                       and m.startswith(".") for m in mods):
                    offenders.append(os.path.relpath(path, ROOT))
    assert not offenders
