"""Issue 30's paper cuts on real exports, each by the command the issue names: --dim/--inputs everywhere,
sweep's per-model dims, print without weight data."""
from __future__ import annotations

import json
import os
import shutil

import pytest
from tests.support.paths import GRAPHS, ROOT

EXPORTS = os.path.join(ROOT, "tests", "data", "exports")
GPT = os.path.join(EXPORTS, "gpt_dynamo.onnx")
GPT_INPUTS = os.path.join(EXPORTS, "gpt_dynamo.inputs.npz")   # input_ids: (2, 7)
RESNET = os.path.join(GRAPHS, "resnet_mini.onnx")
SEED_DEMO = os.path.join(GRAPHS, "seed_demo.yaml")


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


# ---- boundary gates and entry → exit are about activations ---------------------------------------------
def test_max_boundary_bytes_counts_what_the_summary_line_counts(run_cli):
    from xcviz.render.units import fmt_bytes

    s = stats_json(run_cli, RESNET, "--dim", "N=8")
    act, par = s["boundary_bytes_activations"], s["parameter_bytes"]
    assert act and par and s["boundary_bytes"] == act + par
    code, summary, _ = run_cli("stats", RESNET, "--dim", "N=8")
    assert f"{fmt_bytes(act)} cross boundaries (+ {fmt_bytes(par)} resident parameters)" in " ".join(summary.split())
    # a limit between the activations and D: passes (it failed while weights counted)
    between = f"{(act + s['boundary_bytes']) // 2}"
    code, out, _ = run_cli("check", RESNET, "--dim", "N=8", "--max-boundary-bytes", between)
    assert code == 0 and f"activations crossing boundaries {fmt_bytes(act)} ≤" in out
    assert f"+ {fmt_bytes(par)} resident parameters, not counted" in out
    code, out, _ = run_cli("check", RESNET, "--dim", "N=8", "--max-boundary-bytes", str(act - 1))
    fail = next(line for line in out.splitlines() if line.startswith("FAIL"))
    assert code == 1 and "largest crossings: " in fail and "resnet_mini_w" not in fail   # no weight named
    # the parameters have a gate of their own
    code, out, _ = run_cli("check", RESNET, "--dim", "N=8", "--max-parameter-bytes", str(par - 1))
    assert code == 1 and f"resident parameters read across boundaries {fmt_bytes(par)} >" in out and "resnet_mini_w" in out
    code, out, _ = run_cli("check", RESNET, "--dim", "N=8", "--max-parameter-bytes", str(par))
    assert code == 0 and "1/1 expectations hold" in out


def test_entry_points_are_not_the_nodes_reading_weights(run_cli):
    code, out, _ = run_cli("cluster", RESNET, "--json")
    c = json.loads(out)["clusters"][0]
    assert c["entry_points"] == ["Conv_3"] and c["exit_points"] == ["fc"]   # x enters at the first conv only
    code, out, _ = run_cli("cluster", RESNET)
    assert "Conv_3 → fc" in out
    # on the seed demo the inputs w/w1/b hold no data: activations, so their readers stay entries
    code, out, _ = run_cli("cluster", os.path.join(GRAPHS, "seed_demo.yaml"), "--min-cluster-size", "1", "--json")
    assert json.loads(out)["clusters"][0]["entry_points"] == ["c1", "m1"]


# ---- explain: a short story, did-you-mean --------------------------------------------------------------
def test_explain_tells_a_short_story_and_all_of_it_with_all(run_cli):
    gpt = os.path.join(EXPORTS, "gpt_torchscript.onnx")
    code, short, _ = run_cli("explain", gpt, "/MatMul")
    assert code == 0
    code, full, _ = run_cli("explain", gpt, "/MatMul", "--all")
    assert code == 0
    steps = [line for line in full.splitlines() if line.lstrip().startswith(("✓", "✗"))]
    shown = [line for line in short.splitlines() if line.lstrip().startswith(("✓", "✗"))]
    assert len(steps) == 157 and 1 <= len(shown) <= 12
    assert f"… {len(steps) - len(shown)} more merge lines hidden (--all shows every merge)" in short
    assert "merged /ln/LayerNormalization -> /MatMul" in short   # how the node itself joined
    assert "hidden" not in full and len(short.splitlines()) < 15
    # the refused merges stay in the short story: they say why the cluster ends where it does
    code, out, _ = run_cli("explain", os.path.join(GRAPHS, "cycle_refused.yaml"), "--min-cluster-size", "1", "embed")
    assert code == 0 and "refused" in out and "cycle via tokenize_hook" in " ".join(out.split())


@pytest.mark.parametrize("graph, typed, suggested", [
    (os.path.join(EXPORTS, "gpt_torchscript.onnx"), "fc", "'/blocks.0/fc/Add'"),
    (os.path.join(EXPORTS, "gpt_torchscript.onnx"), "LayerNormalization", "'/ln/LayerNormalization'"),
    (os.path.join(GRAPHS, "seed_demo.yaml"), "m2", "'m1'"),
    (os.path.join(GRAPHS, "seed_demo.yaml"), "softmax_7", "'c1', 'r1'"),
])
def test_explain_suggests_real_node_names(run_cli, graph, typed, suggested):
    code, out, err = run_cli("explain", graph, typed)
    assert code == 2 and out == "" and f"no node named {typed!r}" in err and suggested in err


def test_node_hint_prefers_a_path_part_then_a_suffix():
    from xcviz.errors import node_hint

    names = ["/conv1/Conv", "/layer4/layer4.1/relu_1/Relu", "/avgpool/GlobalAveragePool", "/Flatten", "/fc/Gemm", "x_fc"]
    assert node_hint("fc", names) == "did you mean '/fc/Gemm' or 'x_fc'?"
    assert node_hint("Gemm", names).startswith("did you mean '/fc/Gemm'")


# ---- hlo states the dims it bound ---------------------------------------------------------------------
@pytest.mark.slow
def test_hlo_says_which_dims_it_bound_to_one(run_cli):
    pytest.importorskip("jax", reason="hlo compiles with JAX")
    enc = os.path.join(GRAPHS, "transformer_encoder.onnx")
    code, out, err = run_cli("hlo", enc, "--cluster", "0", "--stage", "stablehlo")
    assert code == 0 and "tensor<1x1x64xf32>" in out
    assert "; bound unbound dimensions to 1: B=1, S=1 (use --dim)" in err
    code, out, err = run_cli("hlo", enc, "--cluster", "0", "--stage", "stablehlo", "--dim", "B=2", "--dim", "S=3")
    assert code == 0 and "tensor<2x3x64xf32>" in out and "bound unbound" not in err


# ---- xcviz ops PATTERN ------------------------------------------------------------------------------------
def test_ops_looks_up_one_op(run_cli):
    from xcviz.ops import REGISTRY

    code, out, err = run_cli("ops", "Conv")
    assert code == 0, err
    conv = REGISTRY.get("Conv")
    assert out.splitlines()[0] == conv.name and "aliases: Conv, " in out and "cpu: XLA compiles it" in out
    code, out, _ = run_cli("ops", "Conv", "--json")
    assert [o["name"] for o in json.loads(out)["ops"]] == [conv.name]
    code, _, err = run_cli("ops", "Frobnicate")
    assert code == 2 and "no op matches 'Frobnicate'" in err


def test_ops_filters_and_pipes_one_line_per_op(run_cli):
    from xcviz.ops import REGISTRY

    code, out, _ = run_cli("ops", "conv*")   # (captured: not a terminal, so tab-separated lines)
    lines = out.splitlines()
    assert lines[0] == "op\taliases\tcpu\tgpu\ttpu\tsource"
    names = [line.split("\t")[0] for line in lines[1:]]
    assert names == [op.name for op in REGISTRY if any(n.lower().startswith("conv") for n in (op.name, *op.aliases))]
    code, out, _ = run_cli("ops", "--framework", "tf", "--unsupported", "--device", "gpu")
    rows = [line.split("\t") for line in out.splitlines()[1:]]
    assert rows and all(r[0].startswith("tf.") and r[2] == "no" for r in rows)
    assert {r[0] for r in rows} == {op.name for op in REGISTRY if op.name.startswith("tf.") and not op.compilable_on("gpu")}
    code, out, _ = run_cli("ops", "--framework", "onnx", "--json")
    onnx_ops = [o["name"] for o in json.loads(out)["ops"]]
    assert "conv2d" in onnx_ops and not any(n.startswith("tf.") for n in onnx_ops) and "custom_nms" not in onnx_ops
    code, out, _ = run_cli("ops", "--framework", "aten", "conv2d")
    assert code == 0 and "aten.conv2d\tconv2d\tyes\tyes\tyes" in out
    code, out, _ = run_cli("ops")
    assert len(out.splitlines()) == len(list(REGISTRY)) + 1


# ---- a diff summary that never contradicts itself -----------------------------------------------------
def test_diff_of_two_exporters_does_not_claim_a_perfect_partition(run_cli):
    code, out, _ = run_cli("diff", os.path.join(EXPORTS, "gpt_torchscript.onnx"), os.path.join(EXPORTS, "gpt_dynamo.onnx"))
    last = " ".join(out.split("\n\n")[-1].split())
    assert code == 0 and "(ARI) 1.000" not in out
    assert last == "different · 0/2 clusters the same · the graphs share 0 of 164/68 node names: no partition similarity by name"
    code, out, _ = run_cli("diff", os.path.join(EXPORTS, "gpt_torchscript.onnx"), os.path.join(EXPORTS, "gpt_dynamo.onnx"), "--json")
    report = json.loads(out)
    assert report["common_nodes"] == 0 and [c["kind"] for c in report["clusters"]] == ["gone", "new"]


def test_diff_matches_clusters_by_their_ops_when_names_differ(run_cli):
    code, out, _ = run_cli("diff", os.path.join(EXPORTS, "unet_torchscript.onnx"), os.path.join(EXPORTS, "unet_dynamo.onnx"), "--json")
    report = json.loads(out)
    assert report["common_nodes"] == 0
    assert report["clusters"] == [{"kind": "same", "a": ["cluster_0"], "b": ["cluster_0"], "by": "ops"}]
    code, out, _ = run_cli("diff", os.path.join(EXPORTS, "unet_torchscript.onnx"), os.path.join(EXPORTS, "unet_dynamo.onnx"))
    assert "1/1 clusters the same (1 matched by their ops: node names differ)" in " ".join(out.split())
    # the same graph twice: every node shared, the usual line
    code, out, _ = run_cli("diff", SEED_DEMO, "--b", "min_cluster_size=1")
    assert "partition similarity (ARI) 0.000" in out and "node names" not in out


# ---- an example in every command's --help -------------------------------------------------------------
def _commands():
    import typer.main

    from xcviz.cli import app

    return typer.main.get_command(app).commands


def test_every_command_shows_examples_that_use_its_own_flags(run_cli):
    import shlex

    commands = _commands()
    assert len(commands) >= 16
    for name, cmd in sorted(commands.items()):
        code, out, _ = run_cli(name, "--help")
        assert code == 0 and "Examples:" in out, name
        shown = [line.strip() for line in out.split("Examples:", 1)[1].splitlines() if line.strip()]
        assert shown and all(line.startswith("xcviz ") for line in shown), name
        for line in shown:
            words = shlex.split(line.split("|")[0])
            target = commands[words[1]]   # (calibrate's second example uses the profile with stats)
            flags = {o for p in target.params for o in (*p.opts, *p.secondary_opts)}
            assert all(w in flags for w in words[2:] if w.startswith("-")), (name, line)


# ---- pictures and the report ------------------------------------------------------------------------------
LOOP = os.path.join(EXPORTS, "greedy_decode_torchscript.onnx")


def test_labels_are_cut_in_the_middle_never_from_the_left():
    from xcviz.render.params import NAME_CHARS, short_name

    for name in ("layers.0.0.conv1.weight", "model.encoder.layer.3.attention.self.query.weight"):
        cut = short_name(name)
        assert len(cut) <= NAME_CHARS and "…" in cut and not cut.startswith("…")
        head, tail = cut.split("…")
        assert name.startswith(head) and name.endswith(tail) and tail.endswith("weight")
    assert short_name("layers.0.0.conv1.weight") == "layers.0…conv1.weight"


def test_weights_in_a_loop_body_draw_with_their_type(run_cli, tmp_path):
    out = tmp_path / "loop.dot"
    code, _, err = run_cli("render", LOOP, "--dot", "-o", str(out))
    assert code == 0, err
    dot = out.read_text(encoding="utf-8")
    assert "emb.weight ‹20×16› f32" in dot and "w.weight ‹16×16› f32" in dot
    assert "emb.weight\\n?[?]" not in dot and "w.weight\\n?[?]" not in dot


def test_the_report_carries_the_loop_bodies(run_cli, tmp_path):
    from xcviz.pipeline import analyse
    from xcviz.render.bodies_view import bodies_of, body_lines
    from xcviz.render.report_html import report_data

    a = analyse(LOOP)
    data = report_data(a.graph, a.clustering, a.stats)
    loop = next(n.name for n in a.graph.nodes if n.op_type == "Loop")
    assert data["bodies"] == {loop: body_lines(bodies_of(a.graph, a.clustering, loop))}
    assert data["bodies"][loop][0].startswith(f"Loop {loop!r} body")
    # and its picture, as `render` draws it (an SVG in an <img>: nothing in it runs)
    import base64

    (uri,) = data["body_pictures"][loop]
    assert uri.startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")
    body = next(b for b in bodies_of(a.graph, a.clustering, loop))
    assert svg.lstrip().startswith(("<?xml", "<svg")) and all(n.name in svg for n in body.graph.nodes[:5])
    assert "emb.weight" in svg and "?[?]" not in svg.split("emb.weight", 1)[1][:40]
    plain = analyse(RESNET)
    assert report_data(plain.graph, plain.clustering, plain.stats)["bodies"] == {}
