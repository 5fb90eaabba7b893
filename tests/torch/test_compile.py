"""The torch.compile backend against Dynamo itself: graph and break counts, reasons and source lines as
torch._dynamo.explain reports them, hybrid outputs equal to eager, recompilations recorded as new entries."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402
from xcviz.pipeline import AnalysisOptions  # noqa: E402
from xcviz.torch_compile.backend import XcvizBackend  # noqa: E402
from tests.support.paths import ROOT, TESTS  # noqa: E402

HERE = os.path.abspath(__file__)
SCRIPT = os.path.join(TESTS, "data", "torch_compile", "breaks_demo.py")


class NoBreak(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x)) * torch.sigmoid(x.sum(-1, keepdim=True))
        return torch.softmax(self.fc2(torch.tanh(h)), dim=-1)


class ExplicitBreak(NoBreak):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        torch._dynamo.graph_break()  # BREAK
        return self.fc2(torch.tanh(h) * 2)


class ItemBranch(NoBreak):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.sum().item() > 0:  # BREAK
            h = h * 2
        return self.fc2(h)


class PrintBuiltin(NoBreak):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("xcviz test: unsupported builtin", file=sys.stderr)  # BREAK
        return self.fc2(h + 1)


class DataDependentShape(NoBreak):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        kept = h[h > 0.1]  # BREAK
        return self.fc2(h) * kept.numel()


BREAKING = [ExplicitBreak, ItemBranch, PrintBuiltin, DataDependentShape]


def _break_lines(cls) -> list[str]:
    lines, first = inspect.getsourcelines(cls.forward)
    return [f"{HERE}:{first + k}" for k, text in enumerate(lines) if "# BREAK" in text]


def _explain(model, *args):
    out = torch._dynamo.explain(model)(*args)
    torch._dynamo.reset()
    return out


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.slow
@pytest.mark.parametrize("cls", [NoBreak] + BREAKING, ids=lambda c: c.__name__)
def test_graphs_and_breaks_are_dynamos(cls):
    torch.manual_seed(0)
    model, x = cls().eval(), torch.randn(4, 8)
    ex = _explain(model, x)
    report = xcviz.compile_report(model, x)
    assert len(report["graphs"]) == ex.graph_count
    assert report["summary"]["graph_break_count"] == ex.graph_break_count
    assert len(report["breaks"]) == len(ex.break_reasons)
    assert sum(g["dynamo_ops"] for g in report["graphs"]) == ex.op_count
    assert [b["reason"] for b in report["breaks"]] == [r.reason for r in ex.break_reasons]
    assert [b["user_frame"] for b in report["breaks"]] == [
        f"{r.user_stack[-1].filename}:{r.user_stack[-1].lineno}" for r in ex.break_reasons]
    # and those are the user's lines, in order: the ones marked in the source
    if cls is NoBreak:
        assert report["breaks"] == [] and len(report["graphs"]) == 1
    else:
        assert [b["user_frame"] for b in report["breaks"]] == _break_lines(cls)
        assert ex.graph_count >= 2
    assert [g["index"] for g in report["graphs"]] == list(range(len(report["graphs"])))
    for b in report["breaks"]:   # a break sits between the graph it ended and the next
        assert 0 <= b["after_graph"] < len(report["graphs"]) - 1
    for g in report["graphs"]:
        assert {"index", "nodes", "clusters", "coverage", "fallback_ops", "est_speedup"} <= set(g)
        assert 0.0 <= g["coverage"] <= 1.0
    s = report["summary"]
    assert s["coverage"] == pytest.approx(s["clustered_ops"] / (s["ops_in_graphs"] + s["breaks"]), abs=1e-6)


@pytest.mark.slow
def test_ops_in_graphs_are_the_aten_calls_and_clusters_name_aten_ops():
    torch.manual_seed(0)
    report = xcviz.compile_report(NoBreak().eval(), torch.randn(4, 8))
    (g,) = report["graphs"]
    ops = sorted(op for c in g["clusters"] for op in c["ops"]) + sorted(f["op"] for f in g["fallback_ops"])
    assert set(ops) == {"aten.linear", "aten.relu", "aten.sum", "aten.sigmoid", "aten.mul", "aten.tanh", "aten.softmax"}
    assert g["coverage"] == 1.0 and len(g["clusters"]) == 1   # every op is XLA-compilable: one cluster
    assert g["est_speedup"] is not None and g["boundary_bytes"] > 0
    names = {v["name"]: v["kind"] for v in g["inputs"]}
    assert names == {"x": "input", "fc1.weight": "weight", "fc1.bias": "weight", "fc2.weight": "weight", "fc2.bias": "weight"}


@pytest.mark.slow
@pytest.mark.parametrize("cls", [NoBreak, ItemBranch, ExplicitBreak], ids=lambda c: c.__name__)
def test_hybrid_runs_clusters_under_jax_equal_to_eager(cls):
    pytest.importorskip("jax", reason="hybrid needs the jax extra")
    torch.manual_seed(0)
    model, x = cls().eval(), torch.randn(4, 8)
    with torch.no_grad():
        want = model(x)
        be = XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1))
        got = torch.compile(model, backend=be)(x)
        again = torch.compile(model, backend=be)(x * 3)   # the same graphs (guards hold), new values
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(again, model(x * 3), rtol=1e-5, atol=1e-5)
    from xcviz.torch_compile.hybrid import HybridRunner

    runners = [r for r in be.runners if isinstance(r, HybridRunner)]
    assert runners and len(runners) == len(be.entries)
    assert all(r.errors == [] for r in runners)             # no cluster fell back to torch
    assert sum(r.cache.misses for r in runners) >= 1        # clusters were compiled by XLA and run
    assert all(e["hybrid"]["ran"] == "hybrid" for e in be.entries)
    # under autograd the forward runs hybrid inside an autograd.Function; the backward recomputes in torch
    from xcviz.torch_compile.autograd import RECOMPUTE

    twin = cls().eval()
    twin.load_state_dict(model.state_dict())
    twin(x).square().sum().backward()
    model.zero_grad(set_to_none=True)
    before = [sum(r.cache.misses + r.cache.hits for r in be.runners if isinstance(r, HybridRunner))]
    out = torch.compile(model, backend=be)(x)
    assert out.requires_grad
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    out.square().sum().backward()
    for (name, p), q in zip(model.named_parameters(), twin.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=name)
    grad_runners = [r for r in be.runners if isinstance(r, HybridRunner) and RECOMPUTE in r.info["notes"]]
    assert grad_runners and all(r.errors == [] for r in grad_runners)
    assert sum(r.cache.misses + r.cache.hits for r in be.runners if isinstance(r, HybridRunner)) > before[0]


@pytest.mark.slow
def test_hybrid_writes_buffer_mutations_back():
    pytest.importorskip("jax", reason="hybrid needs the jax extra")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU()).train()
    twin = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU()).train()
    twin.load_state_dict(model.state_dict())
    x = torch.randn(4, 8)
    with torch.no_grad():
        want = twin(x)
        got = torch.compile(model, backend=XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1)))(x)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for name, buf in twin.named_buffers():
        torch.testing.assert_close(dict(model.named_buffers())[name], buf)
    # under autograd a graph that writes buffers runs in torch (a recomputation would write them twice): says so
    from xcviz.torch_compile.hybrid import HybridRunner

    be = XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1))
    out = torch.compile(model, backend=be)(x)
    torch.testing.assert_close(out, twin(x), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(dict(model.named_buffers())["1.running_mean"], dict(twin.named_buffers())["1.running_mean"])
    (entry,) = be.entries
    assert entry["hybrid"]["ran"] == "torch" and entry["hybrid"]["errors"] == [HybridRunner.AUTOGRAD]


@pytest.mark.slow
def test_recompilation_is_a_new_entry():
    torch.manual_seed(0)
    model = NoBreak().eval()
    be = xcviz.torch_backend()
    compiled = torch.compile(model, backend=be, dynamic=False)
    compiled(torch.randn(4, 8))
    compiled(torch.randn(4, 8))       # guards hold: no new graph
    compiled(torch.randn(7, 8))       # a new batch size: recompiled
    assert len(be.entries) == 2
    first, second = be.entries
    assert (first["recompile"], second["recompile"]) == (False, True)
    assert first["compile_id"] == "0/0" and second["compile_id"] == "0/1"
    assert [v["shape"] for v in first["inputs"] if v["name"] == "x"] == [[4, 8]]
    assert [v["shape"] for v in second["inputs"] if v["name"] == "x"] == [[7, 8]]
    assert second["recompile_reason"] and "size" in second["recompile_reason"]
    assert be.report()["summary"]["recompilations"] == 1


@pytest.mark.slow
def test_html_report_side_by_side_escaped_and_deterministic(tmp_path):
    torch.manual_seed(0)
    model, x = ItemBranch().eval(), torch.randn(4, 8)
    be = XcvizBackend(report=tmp_path / "out")
    torch.compile(model, backend=be)(x)
    page = (tmp_path / "out" / "compile-report.html").read_text(encoding="utf-8")
    data = json.loads((tmp_path / "out" / "compile-report.json").read_text(encoding="utf-8"))
    assert data["summary"]["graphs"] == len(be.entries) and data["summary"]["breaks"] == 1
    assert "Content-Security-Policy" in page and "<script" not in page
    assert page.count('class="graph"') == len(be.entries) and page.count('class="break"') == 1
    assert _break_lines(ItemBranch)[0] in page
    assert "if h.sum().item() &gt; 0:" in page           # the source line, escaped
    assert page.index('id="graph-0"') < page.index('id="break-0"') < page.index('id="graph-1"')
    be.write(str(tmp_path / "again.html"))
    assert (tmp_path / "again.html").read_text(encoding="utf-8") == page


def test_html_escapes_what_dynamo_says():
    from xcviz.render.compile_html import compile_page

    data = {"summary": {"graphs": 1, "breaks": 1, "recompilations": 0, "clusters": 0, "coverage": 0.0,
                        "coverage_in_graphs": 0.0, "boundary_bytes": 0, "est_speedup": None},
            "graphs": [{"index": 0, "compile_id": "0/0", "nodes": 0, "clusters": [], "coverage": 0.0,
                        "fallback_ops": [{"op": "<b>x</b>", "count": 1, "reason": "</td><script>alert(1)</script>"}],
                        "boundary_bytes": 0, "est_speedup": None}],
            "breaks": [{"after_graph": 0, "summary": "<img src=x>", "reason": "<script>", "user_frame": "a.py:1",
                        "line": "if x < y:"}]}
    page = compile_page(data, "<title>")
    assert "<script" not in page and "<img" not in page and "<b>x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "if x &lt; y:" in page


@pytest.mark.slow
def test_openxla_partitioner_is_compared_where_support_differs():
    def f(x):  # erfinv: torch_xla lowers it; xcviz has no row for it and torch cannot decompose it
        return torch.erfinv(torch.relu(x) * 0.5 - 0.2).tanh()

    report = xcviz.compile_report(f, torch.randn(4, 4))
    (g,) = report["graphs"]
    xla = g["openxla"]
    (d,) = xla["support_differs"]
    assert (d["op"], d["openxla"], d["xcviz"]) == ("aten.erfinv", True, False)
    assert "not in xcviz's op table" in d["xcviz_why"]
    # torch_xla lowers every op here: the openxla partitioner makes one partition of all of them
    assert [len(p["nodes"]) for p in xla["partitions"]] == [5]


@pytest.mark.slow
def test_cli_compile_report_json_and_tables(run_cli, tmp_path):
    code, out, err = run_cli("compile-report", f"{SCRIPT}:make", "--json", "--report", str(tmp_path / "r"))
    assert code == 0, err
    data = json.loads(out)                       # the model's print went to stderr, not into the JSON
    assert "gate open" in err
    assert data["schema_version"] == 1 and data["summary"]["graphs"] == 3 and data["summary"]["breaks"] == 2
    assert [b["user_frame"].rsplit(":", 1)[1] for b in data["breaks"]] == ["13", "15"]
    assert (tmp_path / "r" / "compile-report.html").exists()
    code, out, err = run_cli("compile-report", f"{SCRIPT}:make", "--min-cluster-size", "1")
    assert code == 0, err
    assert "Graph breaks (2, in order)" in out and "3 graphs · 2 breaks" in out
    assert "gate open" not in out.splitlines()    # the model's own print: on stderr
    assert "Unsupported Tensor.item() call" in " ".join(out.split())  # (the table may wrap it)


def test_cli_compile_report_bad_targets(run_cli, tmp_path):
    code, _, err = run_cli("compile-report", "no_colon.py")
    assert code == 2 and "SCRIPT.py:FACTORY" in err
    code, _, err = run_cli("compile-report", f"{SCRIPT}:mkae")
    assert code == 2 and "no function 'mkae'" in err and "make" in err
    bad = tmp_path / "bad.py"
    bad.write_text("def make():\n    return 3\n", encoding="utf-8")
    code, _, err = run_cli("compile-report", f"{bad}:make")
    assert code == 2 and "not (model, example_args" in err
    boom = tmp_path / "boom.py"
    boom.write_text("def make():\n    raise ValueError('nope')\n", encoding="utf-8")
    code, _, err = run_cli("compile-report", f"{boom}:make")
    assert code == 2 and "ValueError: nope" in err and "boom.py:2" in err


def test_import_xcviz_stays_torch_free():
    code = "import sys, xcviz; xcviz.torch_backend; xcviz.compile_report; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": ROOT})
    assert out.stdout.strip() == "False"


def test_bad_mode_is_one_clear_error():
    with pytest.raises(xcviz.XcvizError) as e:
        xcviz.torch_backend(mode="jit")
    assert "mode='eager'" in e.value.hint


@pytest.mark.slow
def test_example_kwargs_reach_the_model():
    class Scaled(torch.nn.Module):
        def forward(self, x, *, scale):
            return torch.relu(x) * scale

    x = torch.randn(3, 5)
    report = xcviz.compile_report(Scaled(), x, scale=torch.full((5,), 2.0))
    (g,) = report["graphs"]
    assert {v["name"] for v in g["inputs"]} == {"x", "scale"}
    assert sorted(f["op"] for f in g["fallback_ops"]) == ["aten.mul", "aten.relu"]   # 2 ops < min size 4


@pytest.mark.slow
def test_dynamic_recompilation_is_analysed_at_the_call_and_runs_in_torch():
    torch.manual_seed(0)
    model = NoBreak().eval()
    be = XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1))
    compiled = torch.compile(model, backend=be)       # dynamic=None: the second shape makes the batch symbolic
    with torch.no_grad():
        for n in (4, 7, 9):
            x = torch.randn(n, 8)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert len(be.entries) == 2                        # 9 reuses the symbolic graph
    static, dynamic = be.entries
    assert (static["symbolic"], dynamic["symbolic"]) == (False, True) and "error" not in dynamic
    assert [v["shape"] for v in dynamic["inputs"] if v["name"] == "x"] == [[7, 8]]   # at the recompiling call
    assert dynamic["nodes"] == static["nodes"] and dynamic["hybrid"]["ran"] == "torch"


@pytest.mark.slow
def test_under_aot_autograd_the_backend_reads_the_aten_graph_of_fake_inputs():
    from torch._dynamo.backends.common import aot_autograd

    torch.manual_seed(0)
    model, x = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval(), torch.randn(4, 8)
    be = XcvizBackend()
    with torch.no_grad():
        out = torch.compile(model, backend=aot_autograd(fw_compiler=be))(x)
        torch.testing.assert_close(out, model(x))
    (g,) = be.entries
    assert "error" not in g
    assert [o["op"] for o in g["ops"]] == ["aten.t", "aten.addmm", "aten.relu", "aten.t", "aten.addmm"]
    assert len(g["ops"]) == g["nodes"]
