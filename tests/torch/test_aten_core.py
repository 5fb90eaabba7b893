"""torch's Core ATen opset (torch.Tag.core) against xcviz's op table: every core op has a row, and every overload
with a sample-input recipe (tests/support/aten_recipes.py) runs natively (NumPy) and under jit (JAX/XLA) as torch eager."""
from __future__ import annotations


import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs the torch extra: pip install -e '.[torch]'")
import xcviz  # noqa: E402
from xcviz.ops import REGISTRY  # noqa: E402
from xcviz.ops.aten.adapters import ADAPTERS, TARGETS  # noqa: E402
from xcviz.ops.aten.core import SIZE_QUERIES  # noqa: E402

from tests.support.aten_recipes import PATTERNS, RANDOM, RECIPES, Fn  # noqa: E402


def core_overloads() -> list[str]:
    out = []
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name)
        if not hasattr(packet, "overloads"):
            continue
        out += [f"{name}.{o}" for o in packet.overloads() if torch.Tag.core in getattr(packet, o).tags]
    return sorted(out)


CORE = core_overloads()
# an out= variant: torch.export functionalizes it into atan2.default
OUT_VARIANTS = {"atan2.out"}


def test_every_core_op_has_a_row_and_a_recipe():
    missing = sorted({o.split(".")[0] for o in CORE} - set(ADAPTERS) - SIZE_QUERIES)
    assert missing == []
    for name, target in TARGETS.items():
        assert REGISTRY.get(target) is not None, (name, target)
    uncovered = [o for o in CORE if o not in RECIPES and o not in RANDOM and o not in OUT_VARIANTS
                 and o.split(".")[0] not in SIZE_QUERIES]
    assert uncovered == []


_GRAPHS: dict = {}


def _graph(name, fn, args):
    if name not in _GRAPHS:
        _GRAPHS[name] = xcviz.from_torch(Fn(fn).eval(), args)
    return _GRAPHS[name]


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [w for x in v for w in _flat(x)]
    return [v]


def _compare(name, got, want):
    assert len(got) == len(want), name
    for k, (a, b) in enumerate(zip(got, want)):
        b = b.detach().numpy()
        assert a.shape == b.shape, (name, k, a.shape, b.shape)
        if b.dtype == np.bool_ or b.dtype.kind in "iu":
            np.testing.assert_array_equal(a, b, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5 * max(1.0, float(np.nanmax(np.abs(b)) if b.size
                                                                                       else 1.0)),
                                       err_msg=f"{name} output {k}")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["native", "jit"])
@pytest.mark.parametrize("name", sorted(RECIPES))
def test_core_op_matches_eager(name, mode):
    fn, args = RECIPES[name]
    graph = _graph(name, fn, args)
    assert [n.note for n in graph.nodes if not n.known] == []
    feeds = {v.name: a.numpy() for v, a in zip([v for v in graph.inputs if v.data is None], args)}
    if mode == "jit" and not all(REGISTRY.get(n.op).devices for n in graph.nodes if n.known):
        mode = "hybrid"  # (nonzero: data-dependent shape, natively)
    got = list(xcviz.run(graph, feeds, mode=mode).values())
    with torch.no_grad():
        want = _flat(fn(*args))
    _compare(name, got, want)


@pytest.mark.parametrize("name", sorted(RANDOM))
def test_random_sources_run_natively(name):
    fn, args = RANDOM[name]
    graph = _graph(name, fn, args)
    row = REGISTRY.get(TARGETS[name.split(".")[0]])
    assert row.devices == frozenset() and "random" in (row.reason or row.source)
    got = list(xcviz.run(graph, {graph.inputs[0].name: args[0].numpy()}, mode="hybrid").values())
    _compare(name, got, [fn(*args)])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["native", "jit"])
@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_real_model_patterns_match_eager(name, mode):
    """The non-core ops real timm and transformers programs keep, each as the model writes it."""
    fn, args = PATTERNS[name]
    graph = _graph(name, fn, args)
    assert [n.note for n in graph.nodes if not n.known] == []
    feeds = {v.name: a.numpy() for v, a in zip([v for v in graph.inputs if v.data is None], args)}
    got = list(xcviz.run(graph, feeds, mode=mode).values())
    with torch.no_grad():
        want = _flat(fn(*args))
    _compare(name, got, want)


@pytest.mark.parametrize("name", ["outside the table, decomposed at load", "in-place writes into views (BART)"])
def test_a_pt2_is_decomposed_and_functionalized_without_unpickling(name, tmp_path, monkeypatch):
    """xcviz's archive reader rebuilds the graph from the file's JSON; in-place writes become scatters and
    torch's default decompositions run on fake tensors of the stated shapes. torch.export.load (which
    unpickles) is never called."""
    fn, args = PATTERNS[name]
    path = str(tmp_path / "m.pt2")
    torch.export.save(torch.export.export(Fn(fn), args), path)
    monkeypatch.setattr(torch.export, "load", lambda *a, **k: pytest.fail("torch.export.load was called"))
    graph = xcviz.load(path)
    assert [n.note for n in graph.nodes if not n.known] == []
    got = list(xcviz.run(graph, {graph.inputs[0].name: args[0].numpy()}, mode="jit").values())
    _compare("decomposed .pt2", got, [fn(*args)])
