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
    from xcviz.clustering import ClusterOptions
    from xcviz.pipeline import LoadOptions

    assert [f.name for f in dataclasses.fields(AnalysisOptions)] == ["load", "cluster", "hardware", "tf_xla_flags"]
    assert list(AnalysisOptions.flat_names()) == [name for name, _, _ in ANALYSIS_OPTIONS if name != "debug"]
    defaults = {f.name: f.default for part in (LoadOptions, ClusterOptions) for f in dataclasses.fields(part)
                if f.default is not dataclasses.MISSING}
    for name, _, default in ANALYSIS_OPTIONS:
        if name in defaults and default is not None and not isinstance(default, bool):
            assert defaults[name] == default, name
    o = AnalysisOptions()
    assert all(getattr(o, name) == value for name, value in o.flat().items())


def test_options_from_parts_equal_options_from_flat_keywords():
    from xcviz.clustering import ClusterOptions
    from xcviz.pipeline import LoadOptions

    parts = AnalysisOptions(load=LoadOptions(dims={"n": 2}, allow_unknown=True),
                            cluster=ClusterOptions(strategy="greedy", deny={"Relu"}), hardware="gpu")
    flat = AnalysisOptions(dims={"n": 2}, allow_unknown=True, strategy="greedy", deny=["relu"], hardware="gpu")
    assert parts == flat and hash(parts) == hash(flat) and flat.deny == frozenset({"relu"})
    assert parts.cluster.deny == flat.deny and parts.load.dims == {"n": 2} and parts.replace(hardware=None) != flat
    assert AnalysisOptions(**flat.flat()) == flat  # (the flat values travel to worker processes)
    # the TF flag fills the sizes not given; a flat keyword over a part changes only that field
    assert AnalysisOptions(tf_xla_flags="--tf_xla_min_cluster_size=2").min_cluster_size == 2
    assert AnalysisOptions(min_cluster_size=3, tf_xla_flags="--tf_xla_min_cluster_size=2").min_cluster_size == 3
    assert AnalysisOptions(cluster=ClusterOptions(strategy="greedy"), min_cluster_size=5).strategy == "greedy"
    with pytest.raises(TypeError, match="strategyy"):
        AnalysisOptions(strategyy="mark")


def _spelled(e: XcvizError, param: str, flag: str) -> str:
    """An error's text with its parameter's spelling taken out, to compare the CLI's with the API's."""
    return str(e).replace(flag, "PARAM", 1) if str(e).startswith(flag) else str(e).replace(param, "PARAM", 1)


def test_an_op_name_typo_is_refused_alike_by_every_surface(run_cli, monkeypatch):
    """One validation (ClusterOptions'): xcviz.cluster, xcviz.analyse and `xcviz cluster --deny` refuse the
    same typo with the same words, the parameter spelled as each surface spells it."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(XcvizError) as api_cluster:
        xcviz.cluster(xcviz.load(SEED), deny=["reluu"])
    with pytest.raises(XcvizError) as api_analyse:
        xcviz.analyse(SEED, deny=["reluu"])
    code, out, err = run_cli("cluster", "graphs/seed_demo.yaml", "--deny", "reluu")
    assert code == 2 and out == ""
    cli = err.strip().removeprefix("error: ")
    assert cli.startswith("--deny: unknown op 'reluu' (hint: did you mean 'Relu'")
    assert str(api_cluster.value).startswith("deny: unknown op 'reluu' (hint: did you mean 'Relu'")
    assert api_cluster.value.param == api_analyse.value.param == "deny"
    # the hint names the flag or the keyword for the same thing: the rest is word for word
    texts = {_spelled(e.value, "deny", "--deny").replace("allow_unknown=True", "--allow-unknown")
             for e in (api_cluster, api_analyse)} | {cli.replace("--deny", "PARAM", 1)}
    assert len(texts) == 1, texts
    # the options object made directly speaks the command line's flags (from_flags and the settings use it)
    with pytest.raises(XcvizError, match=r"^--deny: unknown op 'reluu'"):
        AnalysisOptions(deny=["reluu"])


def test_cluster_option_errors_name_their_parameter():
    from xcviz.clustering import ClusterOptions

    for kwargs, param in [({"strategy": "fast"}, "strategy"), ({"device": "npu"}, "device"),
                          ({"min_cluster_size": -1}, "min_cluster_size"), ({"max_cluster_size": 1.5}, "max_cluster_size"),
                          ({"allow": ["Frobnicate"]}, "allow")]:
        with pytest.raises(XcvizError) as e:
            ClusterOptions(**kwargs)
        assert e.value.param == param and str(e.value).startswith("--" + param.replace("_", "-") + ": ")
        with pytest.raises(XcvizError) as e:
            xcviz.cluster(xcviz.load(SEED), **kwargs)
        assert str(e.value).startswith(param + ": ")
    # "graph": a name may be an opaque op of the clustered graph's own; "any" (--allow-unknown): not checked
    assert ClusterOptions(deny={"my_op"}, op_names="graph").deny == frozenset({"my_op"})
    assert ClusterOptions(allow="relu").allow == frozenset({"relu"})  # one name, not its letters


def test_binding_dims_makes_a_new_graph(tmp_path):
    import numpy as np

    from xcviz.ir import bind_dims
    from xcviz.pipeline import bind_input_arrays, bind_present_dims

    block = os.path.join(ROOT, "graphs", "transformer_block.yaml")
    g = xcviz.load(block)
    own = dict(g.dims)  # (the file binds batch and seq itself)
    h = bind_dims(g, {"batch": 2})
    assert h is not g and dict(h.dims) == own | {"batch": 2} and dict(g.dims) == own and h.nodes is g.nodes
    bound, skipped = bind_present_dims(g, {"seq": 8, "nope": 3})
    assert dict(bound.dims) == own | {"seq": 8} and skipped == ["nope"] and dict(g.dims) == own
    x = next(v for v in g.inputs if v.type.shape and "seq" in v.type.shape)
    shape = [8 if d == "seq" else 2 if isinstance(d, str) else d for d in x.type.shape]
    np.savez(tmp_path / "in.npz", **{x.name: np.zeros(shape, np.float32)})
    with_inputs, dims = bind_input_arrays(g, str(tmp_path / "in.npz"))
    assert dims["seq"] == 8 and with_inputs.dims["seq"] == 8 and dict(g.dims) == own
    # the load step binds through the same functions: --dim, and --inputs over it
    a = analyse(block, AnalysisOptions(dims={"seq": 4}, inputs=str(tmp_path / "in.npz")))
    assert a.graph.dims["seq"] == 8


def test_the_reference_comparison_is_a_pipeline_step(write_graph):
    path = write_graph("name: g\ninputs: [{name: x, shape: [4], dtype: float32}]\nnodes:\n"
                       "  - {name: a, op: relu, inputs: [x], attrs: {_XlaCluster: c0}}\n"
                       "  - {name: b, op: relu, inputs: [a], attrs: {_XlaCluster: c0}}\n"
                       "  - {name: c, op: relu, inputs: [b]}\noutputs: [c]\n")
    a = analyse(path, AnalysisOptions(min_cluster_size=1))
    assert a.reference["identical"] is False and a.reference["differing_nodes"] == ["a", "b", "c"]
    assert analyse(SEED).reference is None


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
    # (xcviz.analyse runs the pipeline's, through the API's wrapper: its errors name keywords, not flags)
    assert xcviz.AnalysisOptions is AnalysisOptions and xcviz.Analysis is Analysis
    assert _report(xcviz.analyse(SEED, min_cluster_size=1)) == _report(analyse(SEED, AnalysisOptions(min_cluster_size=1)))
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
