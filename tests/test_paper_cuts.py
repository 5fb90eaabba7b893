"""Issue 30's paper cuts on real exports, each by the command the issue names: --dim/--inputs everywhere,
sweep's per-model dims, print without weight data."""
from __future__ import annotations

import json
import os
import shutil

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRAPHS = os.path.join(ROOT, "graphs")
EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
GPT = os.path.join(EXPORTS, "gpt_dynamo.onnx")
GPT_INPUTS = os.path.join(EXPORTS, "gpt_dynamo.inputs.npz")   # input_ids: (2, 7)
RESNET = os.path.join(GRAPHS, "resnet_mini.onnx")


def stats_json(run_cli, *args):
    code, out, err = run_cli("stats", *args, "--json")
    assert code == 0, err
    return json.loads(out)["stats"]


# ---- --dim and --inputs on every analysis command -------------------------------------------------------
def test_inputs_bind_the_dims_their_shapes_give(run_cli):
    unbound = stats_json(run_cli, GPT)
    by_inputs = stats_json(run_cli, GPT, "--inputs", GPT_INPUTS)
    by_dims = stats_json(run_cli, GPT, "--dim", "batch=2", "--dim", "seq=7")
    assert unbound["boundary_bytes"] is None and by_inputs["boundary_bytes"] is not None
    assert by_inputs == by_dims
    # the arrays win over a --dim that says otherwise (as validate binds them)
    assert stats_json(run_cli, GPT, "--dim", "seq=100", "--inputs", GPT_INPUTS) == by_dims


@pytest.mark.parametrize("command", [
    ["cluster"], ["stats"], ["explain", "GRAPH", "node_Gemm_0"], ["render", "--dot", "-o", "OUT.dot"],
    ["report", "-o", "OUT.html"], ["check", "--max-clusters", "5"], ["print"], ["diff", "GRAPH", "GRAPH"],
    ["sweep"], ["export", "--graphdef", "OUT.pbtxt"],
])
def test_every_analysis_command_takes_dim_and_inputs(run_cli, tmp_path, command):
    from xcviz.pipeline import load_graph

    graph = load_graph(GPT)
    name = command[0]
    rest = [a.replace("OUT", str(tmp_path / "out")) for a in command[1:]]
    if "GRAPH" in rest:
        args = [name] + [GPT if a == "GRAPH" else a for a in rest]
    else:
        args = [name, GPT] + rest
    if name == "explain":
        args[2] = graph.nodes[-1].name
    for flags in (["--inputs", GPT_INPUTS], ["--dim", "batch=2", "--dim", "seq=7"]):
        code, out, err = run_cli(*args, *flags)
        assert code == 0, (args, flags, err)


def test_sweep_binds_each_dim_only_where_a_model_has_it(run_cli, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for f in ("gpt_dynamo.onnx", "bert_dynamo.onnx", "unet_dynamo.onnx"):
        shutil.copy(os.path.join(EXPORTS, f), models / f)
    for f in ("resnet_mini.onnx", "transformer_encoder.onnx", "seed_demo.yaml"):
        shutil.copy(os.path.join(GRAPHS, f), models / f)
    code, out, err = run_cli("sweep", str(models), "--dim", "batch=1", "--dim", "N=1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["failed"] == 0
    rows = {r["model"]: r for r in report["rows"]}
    assert rows["gpt_dynamo.onnx"]["unbound_dims"] == ["seq"] and rows["gpt_dynamo.onnx"]["dims_not_in_model"] == ["N"]
    assert rows["resnet_mini.onnx"]["unbound_dims"] == [] and rows["resnet_mini.onnx"]["dims_not_in_model"] == ["batch"]
    assert rows["transformer_encoder.onnx"]["unbound_dims"] == ["B", "S"]
    assert rows["unet_dynamo.onnx"]["dims_not_in_model"] == ["batch", "N"]
    # the row of a model a --dim binds is the model analysed alone with that --dim
    alone = stats_json(run_cli, RESNET, "--dim", "N=1")
    assert rows["resnet_mini.onnx"]["boundary_bytes"] == alone["boundary_bytes"] is not None
    code, table, _ = run_cli("sweep", str(models), "--dim", "batch=1", "--dim", "N=1")
    assert code == 0 and "unbound" in table and "error" not in table
    # alone, a --dim the graph lacks is still an error (a typo must not pass silently)
    code, _, err = run_cli("stats", RESNET, "--dim", "batch=1")
    assert code == 2 and "no dimension 'batch'" in err


# ---- print without weight data ----------------------------------------------------------------------------
def test_print_starts_with_the_nodes_and_sums_up_the_weights(run_cli, tmp_path):
    from xcviz.pipeline import load_graph

    code, out, err = run_cli("print", RESNET)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("# weights left out (50 tensors, 98.4 KiB")
    assert lines[1] == "graph resnet_mini(%x: f32[N,3,32,32]) {" and "conv2d(" in lines[2]
    assert "dense<" not in out and len(out) < 20_000
    g = load_graph(RESNET)
    weights = [v for v in g.inputs if v.data is not None]
    assert lines[-len(weights):] == [f"# weight %{v.name}: {_t(v)} ({_kib(v.data.nbytes)})" for v in weights]
    # the weight-less text refuses to read back, with the way out
    (tmp_path / "r.xcir").write_text(out, encoding="utf-8")
    code, _, err = run_cli("cluster", str(tmp_path / "r.xcir"))
    assert code == 2 and "without its weights" in err and "xcviz print --weights" in err


def test_print_weights_and_xcir_files_read_back_exactly(run_cli, tmp_path):
    from xcviz.ir.text_print import print_graph
    from xcviz.pipeline import load_graph

    code, out, _ = run_cli("print", RESNET, "--weights", "--plain")
    assert code == 0 and out == print_graph(load_graph(RESNET)) and "dense<" in out
    target = str(tmp_path / "r.xcir")   # a .xcir file is for reading back: weights by default
    code, _, _ = run_cli("print", RESNET, "-o", target)
    assert code == 0 and "dense<" in open(target, encoding="utf-8").read()
    assert stats_json(run_cli, target, "--dim", "N=1") == stats_json(run_cli, RESNET, "--dim", "N=1")


def _t(v):
    from xcviz.ir.text_print import type_text

    return type_text(v.type)


def _kib(n):
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB"
