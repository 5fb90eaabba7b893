"""Issue 36, item 1: one estimate per program, everywhere. The hardware profile follows the program's native
runtime (onnxruntime for ONNX and xcviz YAML, torch eager for a torch program, TensorFlow for a TF graph) in
every command, each says which runtime it is against, and --hardware overrides it everywhere."""
from __future__ import annotations

import json
import os
import re

import pytest
from tests.support.paths import GRAPHS, ROOT

import xcviz
from xcviz.cost import hardware_for, hardware_names, load_hardware, program_runtime

TF_PROFILE = "cpu_tf" if "cpu_tf" in hardware_names() else "cpu"   # cpu_tf: measured against TensorFlow
MODELS = {   # one model of each format: (path, runtime it runs on, the profile its estimate uses)
    "onnx": (os.path.join(GRAPHS, "detector_mini.onnx"), "onnxruntime", "cpu"),
    "pt2": (os.path.join(ROOT, "tests", "data", "torch_corpus", "timm_vit.pt2"), "torch", "cpu_torch"),
    "tf": (os.path.join(ROOT, "tests", "data", "tf_keras", "conv1d_frozen.pb"), "tensorflow", TF_PROFILE),
    "yaml": (os.path.join(GRAPHS, "resnet_block.yaml"), "onnxruntime", "cpu"),
}
EST = re.compile(r"est\. speedup ([0-9.,]+×|unknown) \(([\w.]+)(?:, vs ([\w ]+))?\)")


def _stats(run_cli, path, *flags) -> dict:
    code, out, err = run_cli("stats", path, "--json", *flags)
    assert code == 0, err
    return json.loads(out)["stats"]


def _line(text: str) -> tuple[str, str, str]:
    m = EST.search(" ".join(text.split()))
    assert m, text
    return m.groups()


@pytest.mark.parametrize("fmt", sorted(MODELS))
def test_the_profile_follows_the_programs_native_runtime(fmt):
    path, runtime, profile = MODELS[fmt]
    if fmt == "pt2":
        pytest.importorskip("torch", reason="needs the torch extra")
    g = xcviz.load(path)
    assert program_runtime(g) == runtime
    hw = hardware_for(g)
    assert hw.name == profile and hw.native == load_hardware(profile).native
    assert hardware_for(g, "gpu").name == "gpu"                     # --hardware wins
    assert hardware_for(g, native="onnxruntime").name == "cpu"       # validate --native onnxruntime
    if fmt == "pt2":
        assert hw.native == "torch"


@pytest.mark.parametrize("fmt", sorted(MODELS))
def test_every_analysis_command_prints_the_same_estimate(run_cli, tmp_path, fmt):
    path, runtime, profile = MODELS[fmt]
    if fmt == "pt2":
        pytest.importorskip("torch", reason="needs the torch extra")
    s = _stats(run_cli, path)
    assert s["hardware"] == profile and s["estimate_runtime"] == load_hardware(profile).native
    est = s["speedup_estimate"]
    assert est is not None
    code, out, err = run_cli("cluster", path, "--json")
    assert code == 0, err
    assert json.loads(out)["stats"]["speedup_estimate"] == est and json.loads(out)["options"]["hardware"] == profile
    code, out, err = run_cli("diff", path, path, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["a"]["stats"]["speedup_estimate"] == est, d["a"]["stats"]
    code, out, err = run_cli("sweep", path, "--json")
    assert code == 0, err
    assert json.loads(out)["rows"][0]["speedup_estimate"] == pytest.approx(est, abs=1e-4)
    # the text commands: their summary line, with the runtime the estimate is against
    shown = f"{est:.2f}×"
    for cmd in (["stats"], ["cluster"], ["report", "-o", str(tmp_path / "r.html")],
                ["render", "--dot", "-o", str(tmp_path / "r.dot")]):
        code, out, err = run_cli(cmd[0], path, *cmd[1:])
        assert code == 0, (cmd, err)
        text = out + err
        got, hw, vs = _line(text)
        assert (got, hw) == (shown, profile), (cmd, text[-400:])
        assert vs == {"onnxruntime": "onnxruntime", "torch": "torch", "tensorflow": "tensorflow"}.get(
            load_hardware(profile).native), vs
    # explain's analysis is the same one (its story shows no estimate: it must run)
    code, out, err = run_cli("explain", path, xcviz.load(path).nodes[-1].name, "--json")
    assert code == 0, err
    # --hardware overrides it everywhere
    assert _stats(run_cli, path, "--hardware", "gpu")["hardware"] == "gpu"
    code, out, err = run_cli("render", path, "--dot", "-o", str(tmp_path / "g.dot"), "--hardware", "gpu")
    assert code == 0 and _line(out + err)[1] == "gpu", err


def test_the_api_gives_the_commands_estimate():
    pytest.importorskip("torch", reason="needs the torch extra")
    path = MODELS["pt2"][0]
    a = xcviz.analyse(path)
    assert a.hardware.name == "cpu_torch"
    g = xcviz.load(path)
    c = xcviz.cluster(g)
    assert xcviz.stats(g, c).speedup_estimate == pytest.approx(a.stats.speedup_estimate)
    assert xcviz.stats(g, c, hardware="cpu").hardware == "cpu"


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(MODELS))
def test_validate_estimates_as_stats_does(run_cli, fmt):
    """The issue's case: stats said 0.47× (cpu, vs onnxruntime) and validate 11.61× (cpu_torch) on one .pt2."""
    path, runtime, profile = MODELS[fmt]
    if fmt == "pt2":
        pytest.importorskip("torch", reason="needs the torch extra")
    pytest.importorskip("jax", reason="needs the jax extra")
    est = _stats(run_cli, path)["speedup_estimate"]
    code, out, err = run_cli("validate", path, "--json", "--repeats", "1", "--threads", "1")
    assert code == 0, err
    m = json.loads(out)["model"]
    assert m["est_hardware"] == profile and round(m["est_speedup"], 4) == est, m


def test_a_torch_compile_graph_is_estimated_against_torch_as_its_export_is():
    torch = pytest.importorskip("torch", reason="needs the torch extra")

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

        def forward(self, x):
            return torch.softmax(self.b(torch.tanh(self.a(x)) * 2.0 + 1.0), -1)

    torch.manual_seed(0)
    net, x = Net().eval(), torch.randn(4, 16)
    report = xcviz.compile_report(net, x)
    (g,) = report["graphs"] if isinstance(report, dict) else report.data["graphs"]
    assert (g["hardware"], g["estimate_runtime"]) == ("cpu_torch", "torch")
    exported = xcviz.analyse(xcviz.from_torch(net, (x,)))
    assert exported.hardware.name == "cpu_torch"
    assert g["est_speedup"] == pytest.approx(exported.stats.speedup_estimate, rel=1e-3)
    # item 6: weights are resident, not bytes crossing, as `cluster` counts them on the same program
    s = exported.stats
    assert (g["boundary_bytes_activations"], g["parameter_bytes"]) == (s.boundary_bytes_activations, s.parameter_bytes)
    assert g["parameter_bytes"] >= 4 * (16 * 32 + 32 * 8) and g["boundary_bytes_activations"] + g["parameter_bytes"] == g["boundary_bytes"]
    c = g["clusters"][0]
    assert c["activations_in"] + c["parameters_in"] == c["bytes_in"] and c["parameters_in"] > 0
    summary = report["summary"] if isinstance(report, dict) else report.data["summary"]
    assert summary["boundary_bytes_activations"] == g["boundary_bytes_activations"]
    from xcviz.render.compile_html import compile_page
    from xcviz.render.compile_tables import compile_view
    from xcviz.render.units import fmt_bytes, fmt_speedup
    from rich.console import Console

    data = report if isinstance(report, dict) else report.data
    console = Console(width=200, record=True)
    console.print(compile_view(data, "net"))
    text = " ".join(console.export_text().split())
    assert f"{fmt_bytes(g['boundary_bytes_activations'])} cross boundaries (+ {fmt_bytes(g['parameter_bytes'])} resident parameters)" in text
    assert f"est. speedup {fmt_speedup(summary['est_speedup'])} (graphs only)" in text and "{" not in text
    page = compile_page(data)
    assert f"est. speedup {fmt_speedup(g['est_speedup'])}</p>" in page
    assert "resident parameters" in page and fmt_bytes(g["parameter_bytes"]) in page


def test_census_rows_carry_the_commands_estimate(run_cli, tmp_path):
    """census analyses each file in a worker process: the same profile, the same estimate as `stats`."""
    from xcviz.census import census

    pytest.importorskip("torch", reason="needs the torch extra")
    paths = [MODELS[f][0] for f in sorted(MODELS)]
    rows = {os.path.basename(r["source"] if "source" in r else r["model"]): r
            for r in census(paths, str(tmp_path / "c.jsonl"), jobs=1)}
    for fmt in sorted(MODELS):
        path = MODELS[fmt][0]
        row = rows[os.path.basename(path)]
        assert row["status"] == "ok", row
        s = _stats(run_cli, path)
        assert row["est_speedup"] == pytest.approx(s["speedup_estimate"], abs=1e-4), fmt
        assert (row["hardware"], row["estimate_runtime"]) == (s["hardware"], s["estimate_runtime"]) == \
            (MODELS[fmt][2], load_hardware(MODELS[fmt][2]).native)
