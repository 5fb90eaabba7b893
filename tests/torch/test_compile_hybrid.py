"""torch.compile's hybrid backend on real architectures built from transformers configs (tiny, random weights,
nothing downloaded) and on modules with the common graph breaks: outputs equal to torch eager, every graph ran
its clusters under JAX (or its entry says precisely why a part did not), in-place ops functionalized before
clustering, gradients through the hybrid forward, and the openxla comparison on torch_xla's lowering list."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
pytest.importorskip("jax", reason="hybrid needs the jax extra")
pytest.importorskip("transformers", reason="the architectures come from transformers' configs")

from xcviz.pipeline import AnalysisOptions  # noqa: E402
from xcviz.torch_compile.autograd import RECOMPUTE  # noqa: E402
from xcviz.torch_compile.backend import XcvizBackend  # noqa: E402
from tests.torch.break_modules import BREAKS, TensorBranch  # noqa: E402
from tests.torch.hf_tiny import ARCHITECTURES, build  # noqa: E402

TOL = dict(rtol=1e-4, atol=1e-4)


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _ran_hybrid(be: XcvizBackend) -> None:
    """Every graph was analysed and ran its clusters under JAX; nothing fell back to torch."""
    assert be.entries
    for e in be.entries:
        assert "error" not in e, e.get("error")
        hy = e["hybrid"]
        assert hy["ran"] == "hybrid" and hy["errors"] == [], hy
        assert not [n for n in hy["notes"] if "runs in torch" in n or "run in torch" in n], hy["notes"]
        assert hy["calls"]["hybrid"] >= 1 and e["clusters"]


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_transformers_architecture_hybrid_equals_eager(name):
    model, args, pick = build(name)
    be = XcvizBackend(mode="hybrid", openxla=False)
    with torch.no_grad():
        want = pick(model(*args))
        got = pick(torch.compile(model, backend=be)(*args))
    torch.testing.assert_close(got, want, **TOL)
    _ran_hybrid(be)
    assert sum(e["coverage"] for e in be.entries) / len(be.entries) > 0.9
    for r in be.runners:   # functionalized before clustering: no in-place aten call is left in the program
        assert not [n for n in r.captured.program.graph.nodes
                    if n.op == "call_function" and getattr(n.target, "_schema", None) is not None
                    and n.target._schema.is_mutable]
    if name == "resnet":   # transformers' ResNet adds its shortcut in place (`hidden_state += residual`): its
        (e,) = be.entries  # only cluster ran in torch for holding aten.add_ before functionalization
        assert e["coverage"] == 1.0 and "aten.add" in {o["op"] for o in e["ops"]}


@pytest.mark.parametrize("cls", BREAKS, ids=lambda c: c.__name__)
def test_common_graph_breaks_run_hybrid_equal_to_eager(cls, capsys):
    torch.manual_seed(0)
    model = cls().eval()
    be = XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1))
    compiled = torch.compile(model, backend=be, dynamic=False)
    inputs = [torch.randn(4, 8), -torch.randn(4, 8).abs()] if cls is TensorBranch else [torch.randn(4, 8)]
    with torch.no_grad():
        for x in inputs + [inputs[0] * 3]:   # (the last: the same graphs again, new values)
            torch.testing.assert_close(compiled(x), model(x), **TOL)
    _ran_hybrid(be)
    if cls is not BREAKS[0] and cls.__name__ != "InPlace":   # NumPy is traced into the graph; the rest break
        assert len(be.entries) >= 2 and be.breaks


@pytest.mark.parametrize("name", ["gpt2", "bert"])
def test_hybrid_forward_under_autograd_gives_eager_gradients(name):
    model, args, pick = build(name)
    twin, _, _ = build(name)
    pick(twin(*args)).square().sum().backward()
    be = XcvizBackend(mode="hybrid")
    out = pick(torch.compile(model, backend=be)(*args))
    torch.testing.assert_close(out, pick(twin(*args)), **TOL)
    out.square().sum().backward()
    for (k, p), q in zip(model.named_parameters(), twin.parameters()):
        assert (p.grad is None) == (q.grad is None), k
        if q.grad is not None:
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-4, msg=k)
    _ran_hybrid(be)
    assert all(RECOMPUTE in e["hybrid"]["notes"] for e in be.entries)


def test_random_ops_under_autograd_run_in_torch_and_say_why():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(16, 4))
    be = XcvizBackend(mode="hybrid", options=AnalysisOptions(min_cluster_size=1))
    out = torch.compile(model.train(), backend=be)(torch.randn(4, 8))
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    (e,) = be.entries
    assert e["hybrid"]["ran"] == "torch"
    assert e["hybrid"]["errors"] == [
        "ran in torch: autograd is on and the graph draws random numbers (aten.dropout): its recomputation for the "
        "backward pass would draw others"]


def test_openxla_reads_views_copies_and_factories():
    from xcviz.torch_compile.openxla import openxla_supported

    aten = torch.ops.aten
    cases = {aten.transpose.int: "transpose_copy.int", aten.unsqueeze.default: "unsqueeze_copy",
             aten.split.Tensor: "split_copy.Tensor", aten.arange.default: "arange.start_out",
             aten.arange.start: "arange.start_out", aten.add_.Tensor: "add.Tensor", aten.zeros.default: "empty + zero_"}
    for op, via in cases.items():
        ok, why = openxla_supported(op)
        assert ok and via in why, (op, why)
    assert openxla_supported(aten.erfinv.default) == (True, "lowered by torch_xla")
    assert openxla_supported(aten.linear.default)[1] == "decomposed before XLA (CompositeImplicitAutograd)"
    ok, why = openxla_supported(aten._native_batch_norm_legit_no_training.default)
    assert ok and "CompositeExplicitAutograd" in why
    ok, why = openxla_supported(aten.tril_indices.default)   # neither lowered nor composite
    assert not ok and "no torch_xla lowering" in why


@pytest.mark.parametrize("name", ["bert", "gpt2", "resnet"])
def test_openxla_partitions_a_transformer_whole(name):
    """torch_xla lowers every aten call of these graphs: one partition, no op where the two support sets differ."""
    model, args, _ = build(name)
    be = XcvizBackend()
    with torch.no_grad():
        torch.compile(model, backend=be)(*args)
    (e,) = be.entries
    assert len(e["openxla"]["partitions"]) == 1 and e["openxla"]["support_differs_ops"] == []


def test_openxla_differing_op_is_listed_once(run_cli, tmp_path):
    script = tmp_path / "twice.py"
    script.write_text("import torch\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
                      "        return torch.erfinv(torch.erfinv(x * 0.5).tanh() * 0.5)\n\n"
                      "def make():\n    return M(), (torch.rand(4, 4),)\n", encoding="utf-8")
    code, out, err = run_cli("compile-report", f"{script}:make", "--min-cluster-size", "1", "--mode", "hybrid")
    assert code == 0, err
    text = " ".join(out.split())
    assert "openxla's support differs on 1 op (2 calls" in text
    assert text.count("aten.erfinv×2 (openxla ✓, xcviz ✗") == 1 and "aten.erfinv (openxla" not in text   # once
    assert "(M, hybrid (called under torch.no_grad()))" in text


def test_cli_label_says_torch_when_nothing_ran_hybrid(run_cli):
    from tests.support.paths import TESTS
    import os

    demo = os.path.join(TESTS, "data", "torch_compile", "breaks_demo.py")
    code, out, err = run_cli("compile-report", f"{demo}:make", "--mode", "hybrid", "--min-cluster-size", "1000")
    assert code == 0, err
    text = " ".join(out.split())
    assert "hybrid requested (called under torch.no_grad()): 0 of 3 graphs ran clusters under JAX" in text
    assert "(Gate, hybrid)" not in text and "(Gate, hybrid (" not in text
    code, out, err = run_cli("compile-report", f"{demo}:make", "--mode", "hybrid", "--min-cluster-size", "1")
    assert code == 0, err
    assert "(Gate, hybrid (called under torch.no_grad()))" in " ".join(out.split())
