"""The torch.export loader: inputs and weights, getitem references, symbolic sizes, module paths, and one
clear line for each kind of bad .pt2 file."""
from __future__ import annotations

import dataclasses
import json
import sys
import zipfile

import msgspec
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402
from xcviz.pipeline import AnalysisOptions, analyse  # noqa: E402

from tests.torch.test_models import DataDependent, TwoBranch, build  # noqa: E402
from tests.support.paths import ROOT  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

nn = torch.nn


def _save(ep, tmp_path, name="m.pt2") -> str:
    path = str(tmp_path / name)
    torch.export.save(ep, path)
    return path


def test_weights_are_inputs_with_values_named_by_their_fqn():
    model, _, ep = build("two_branch")
    g = xcviz.from_torch(ep)
    weights = {v.name: v for v in g.inputs if v.data is not None}
    assert set(weights) == set(model.state_dict())
    np.testing.assert_array_equal(weights["a1.weight"].data, model.a1.weight.detach().numpy())
    assert [v.name for v in g.inputs if v.data is None] == ["x"]
    assert g.outputs == ("cat",)


def test_getitem_is_a_reference_to_the_producers_output():
    g = xcviz.from_torch(DataDependent().eval(), (torch.randn(3, 8),))
    names = {n.name for n in g.nodes}
    assert not any(n.startswith("getitem") for n in names)
    topk = g.node("topk")
    assert topk.op == "topk" and len(topk.outputs) == 2
    consumers = [n for n in g.nodes if "topk" in n.inputs]
    assert consumers and all(n.op == "torch_linear" for n in consumers)
    assert g.node("nonzero").op == "torch_nonzero"
    c = analyse(g, AnalysisOptions(min_cluster_size=1)).clustering
    assert c.cluster_of[g.index["nonzero"]] == -1 and "data-dependent" in c.reason[g.index["nonzero"]]


def test_module_path_is_shown_and_is_no_clustering_barrier():
    g = xcviz.from_torch(TwoBranch().eval(), (torch.randn(3, 8),))
    assert "in a1)" in g.node("linear").where
    assert g.node("linear").module == "a1" and g.node("relu").module is None  # (relu is in the root module)
    assert all(n.scope is None for n in g.nodes)
    a = analyse(g, AnalysisOptions(min_cluster_size=1))
    assert a.stats.clusters == 1  # every op compiles: one cluster across the modules


def _partition(g, **options):
    c = analyse(g, AnalysisOptions(**options)).clustering
    return list(c.cluster_of), list(c.reason), [list(m) for m in c.clusters]


@pytest.mark.parametrize("name", ["transformer_encoder", "data_dependent"])
def test_module_paths_change_no_cluster(name):
    """The module path is display only: clearing it gives the same clusters, reasons and members."""
    _, _, ep = build(name)
    g = xcviz.from_torch(ep)
    modules = {n.module for n in g.nodes} - {None}
    assert len(modules) >= 2, modules
    if name == "transformer_encoder":
        assert "enc.layers.0.self_attn" in modules and "enc.layers.1.linear2" in modules
    for size in (1, 4):
        with_modules = _partition(g, min_cluster_size=size)
        g = dataclasses.replace(g, nodes=[msgspec.structs.replace(n, module=None) for n in g.nodes])
        assert _partition(g, min_cluster_size=size) == with_modules
        g = xcviz.from_torch(ep)


def test_module_paths_are_shown_and_kept(tmp_path, run_cli):
    from xcviz.ir.text_parse import read_graph
    from xcviz.ir.text_print import print_graph

    _, _, ep = build("data_dependent")
    g = xcviz.from_torch(ep)
    back = read_graph(print_graph(g))  # the .xcir text form keeps them
    assert [n.module for n in back.nodes] == [n.module for n in g.nodes]
    assert 'module="a1"' in print_graph(g)
    path = _save(ep, tmp_path)
    code, out, err = run_cli("cluster", path, "--json")
    assert code == 0, err
    nodes = json.loads(out)["nodes"]
    assert nodes["linear"]["module"] == "a1" and "module" not in nodes["relu"]
    code, out, err = run_cli("cluster", path, "--min-cluster-size", "1")
    assert code == 0, err
    clusters, fallback = out.split("Fallback", 1)
    assert "modules" in clusters and "b2" in clusters and "module" not in fallback  # (nonzero is in the root module)
    code, out, err = run_cli("explain", path, "linear_1")
    assert code == 0, err
    assert "module: a2" in out
    dot = tmp_path / "g.dot"
    code, out, err = run_cli("render", path, "-o", str(dot))
    assert code == 0, err
    assert "module: b1" in dot.read_text()


def test_dynamic_batch_stays_symbolic_and_binds(tmp_path, run_cli):
    from torch.export import Dim

    batch = Dim("batch")
    model, x = TwoBranch().eval(), torch.randn(3, 8)
    g = xcviz.from_torch(model, (x,), dynamic_shapes={"x": {0: batch}})
    assert g.inputs[0].type.shape == ("batch", 8)
    assert g.node("cat").outputs[0].shape == ("batch", 8)
    feeds = {"x": np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)}
    got = xcviz.run(g, feeds)
    with torch.no_grad():
        want = model(torch.from_numpy(feeds["x"])).numpy()
    np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-5, atol=1e-5)
    # a saved program keeps torch's own symbol, which --dim binds
    ep = torch.export.export(model, (x,), dynamic_shapes={"x": {0: batch}})
    symbol = str(next(iter(ep.range_constraints)))
    path = _save(ep, tmp_path)
    code, out, err = run_cli("cluster", path, "--min-cluster-size", "1", "--json")
    assert code == 0, err
    assert symbol in out
    code, out, err = run_cli("cluster", path, "--min-cluster-size", "1", "--dim", f"{symbol}=8")
    assert code == 0, err
    assert "unknown cross boundaries" not in out and "unknown cross boundaries" in run_cli(
        "cluster", path, "--min-cluster-size", "1")[1]


def test_read_program_is_torch_export_load(tmp_path):
    """read_program remembers torch's type-hint lookups while it loads: the same program, torch left as it was."""
    import typing

    from torch._export.serde import serialize

    from xcviz.loaders.torch_trust import read_program

    _, _, ep = build("gpt")
    path = _save(ep, tmp_path)
    mine, theirs = read_program(path, trust_pickle=True), torch.export.load(path)
    assert serialize.typing is typing
    assert str(mine.graph) == str(theirs.graph) and str(mine.graph_signature) == str(theirs.graph_signature)
    assert mine.state_dict.keys() == theirs.state_dict.keys()
    assert all(torch.equal(mine.state_dict[k], theirs.state_dict[k]) for k in mine.state_dict)
    assert [n.meta.get("val").shape for n in mine.graph.nodes if hasattr(n.meta.get("val"), "shape")] == \
        [n.meta.get("val").shape for n in theirs.graph.nodes if hasattr(n.meta.get("val"), "shape")]


@pytest.mark.parametrize("name", ["data_dependent", "gpt", "resnet_block", "rnn_tagger", "transformer_encoder",
                                  "dynamic"])
def test_archive_reader_gives_torch_export_loads_graph(name, tmp_path):
    """Reading the .pt2's JSON directly gives the very graph (text form, weights) torch.export.load gives."""
    from torch.export import Dim

    from xcviz.ir.text_print import print_graph
    from xcviz.passes.prepare import prepare
    from xcviz.loaders.torch_archive import read_archive
    from xcviz.loaders.torch_export import graph_from_program
    from xcviz.loaders.torch_trust import read_program

    if name == "dynamic":
        ep = torch.export.export(TwoBranch().eval(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: Dim("batch")}})
    else:
        ep = build(name)[2]
    path = _save(ep, tmp_path)
    fast, slow = (prepare(graph_from_program(p, path), onnx=True)
                  for p in (read_archive(path), read_program(path, trust_pickle=True)))
    assert print_graph(fast) == print_graph(slow)
    assert [n.module for n in fast.nodes] == [n.module for n in slow.nodes]
    for a, b in zip(fast.inputs, slow.inputs):
        assert a.name == b.name and (a.data is None) == (b.data is None)
        if a.data is not None:
            assert a.data.dtype == b.data.dtype
            np.testing.assert_array_equal(a.data, b.data)


def test_archive_reader_falls_back_on_torch_only_with_the_opt_in(tmp_path, monkeypatch, run_cli):
    """What xcviz's reader does not cover is refused in one line; trust_pickle=True (--trust-pickle) hands it to
    torch.export.load, which unpickles: the same graph."""
    from xcviz.errors import XcvizError
    from xcviz.loaders import torch_archive

    path = _save(build("two_branch")[2], tmp_path)
    fast = xcviz.load(path)

    def unreadable(path, limits=None):
        raise torch_archive.Unreadable("test")

    monkeypatch.setattr(torch_archive, "read_archive", unreadable)
    with pytest.raises(XcvizError, match="does not cover this program"):
        xcviz.load(path)
    err = _one_line(*run_cli("cluster", path)[::2])
    assert "--trust-pickle" in err and "runs code from the file" in err
    slow = xcviz.load(path, trust_pickle=True)
    assert [n.name for n in fast.nodes] == [n.name for n in slow.nodes] and fast.outputs == slow.outputs
    code, _, err = run_cli("cluster", path, "--trust-pickle")
    assert code == 0, err


def _one_line(code, err):
    assert code == 2
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert 1 <= len(lines) <= 2 and "Traceback" not in err, err  # the message, and its hint
    return err


def test_not_a_torch_export(tmp_path, run_cli):
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip at all\n" * 10)
    assert "not a torch.export program" in _one_line(*run_cli("cluster", str(bad))[::2])
    with zipfile.ZipFile(tmp_path / "other.pt2", "w") as z:
        z.writestr("other/data.txt", "hello")
    assert "not a torch.export program" in _one_line(*run_cli("cluster", str(tmp_path / "other.pt2"))[::2])


def test_newer_schema_version(tmp_path, run_cli):
    _, _, ep = build("two_branch")
    path = _save(ep, tmp_path)
    newer = tmp_path / "newer.pt2"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(newer, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename.endswith("models/model.json"):
                doc = json.loads(data)
                doc["schema_version"]["major"] = 99
                data = json.dumps(doc).encode()
            dst.writestr(item, data)
    err = _one_line(*run_cli("cluster", str(newer))[::2])
    assert "schema 99" in err and "re-export" in err


def test_unknown_aten_op_loads_opaque_with_its_reason(tmp_path, run_cli):
    class Odd(nn.Module):
        def forward(self, x):
            return torch.special.erfinv(torch.tanh(x) * 0.5) + 1

    ep = torch.export.export(Odd(), (torch.randn(4),))
    path = _save(ep, tmp_path)
    g = xcviz.load(path)
    opaque = [n for n in g.nodes if not n.known]
    # special_erfinv is decomposed (to erfinv) on the graph rebuilt from the file's JSON; erfinv torch cannot
    assert [(n.name, n.note) for n in opaque] == [
        ("erfinv", "aten.erfinv is not in xcviz's op table; torch's default decompositions do not cover it")]
    code, out, err = run_cli("cluster", path, "--min-cluster-size", "1")
    assert code == 0, err
    assert "aten.erfinv is not in" in out
    np.savez(tmp_path / "in.npz", x=np.zeros(4, np.float32))
    err = _one_line(*run_cli("run", path, "--inputs", str(tmp_path / "in.npz"))[::2])
    assert "erfinv" in err


def test_without_torch_a_pt2_names_the_extra(tmp_path, run_cli, monkeypatch):
    _, _, ep = build("two_branch")
    path = _save(ep, tmp_path)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now fails as if it were not installed
    err = _one_line(*run_cli("cluster", path)[::2])
    assert "needs torch" in err and "pip install -e '.[torch]'" in err


def test_docs_pytorch_example_runs(tmp_path, monkeypatch, capsys, run_cli):
    import os
    import re

    page = open(os.path.join(ROOT, "docs", "pytorch.md"), encoding="utf-8").read()
    section = page.split("## PyTorch programs", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/pytorch.md", "exec"), {})
    printed = capsys.readouterr().out.split()
    assert printed == ["float32[batch,8]", "1"]
    code, out, err = run_cli("cluster", "net.pt2", "--min-cluster-size", "1")
    assert code == 0, err
    assert re.search(r"^1 cluster · coverage 4/4 ops", out, re.M), out


def test_bitwise_ops_on_integers_and_masks_match_eager():
    """torch's & | ^ ~ are bitwise on integer tensors (they had been mapped to ONNX's logical ops)."""

    class Bits(torch.nn.Module):
        def forward(self, a, b, m, n):
            return (a & b) ^ (a | 3), ~a, (m & n) | ~m

    a = torch.tensor([5, 12, -7, 0], dtype=torch.int32)
    b = torch.tensor([3, 10, 6, -1], dtype=torch.int32)
    m = torch.tensor([True, False, True, False])
    n = torch.tensor([True, True, False, False])
    g = xcviz.from_torch(Bits(), (a, b, m, n))
    want = Bits()(a, b, m, n)
    for mode in ("native", "hybrid"):
        out = xcviz.run(g, {"a": a.numpy(), "b": b.numpy(), "m": m.numpy(), "n": n.numpy()}, mode=mode)
        got = list(out.values()) if isinstance(out, dict) else list(out)
        assert len(got) == len(want)
        for v, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(v), w.numpy())
