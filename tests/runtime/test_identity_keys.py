"""The runtime's caches keyed by an object (a plan by its clustering, a body program by the body's graph) hold
that object itself, compared by identity (runtime.identity.Same), never its id(): a freed object's id, given
to a new one, can never reach the old entry."""
from __future__ import annotations

import gc
import weakref

import numpy as np

import xcviz
from xcviz.clustering import ClusterOptions
from xcviz.ir import Graph
from xcviz.runtime import hybrid_bodies
from xcviz.runtime.execute import execute, plan_for
from xcviz.runtime.hybrid_bodies import BodyPrograms
from xcviz.runtime.identity import Same
from xcviz.runtime.jit import CompileCache


def _one_op(tmp_path, op: str) -> Graph:
    """y = op(x), x f32[2,3], as the YAML loader builds it."""
    path = tmp_path / f"{op}.yaml"
    path.write_text("name: body\ninputs:\n  - {name: x, shape: [2, 3], dtype: float32}\n"
                    f"nodes:\n  - {{name: y, op: {op}, inputs: [x]}}\noutputs: [y]\n")
    return xcviz.load(str(path))


def test_same_is_the_object_itself(tmp_path):
    a, b = _one_op(tmp_path, "Relu"), _one_op(tmp_path, "Relu")
    assert a == b   # equal by value: a value key would take one for the other
    assert Same(a) == Same(a) and hash(Same(a)) == hash(Same(a))
    assert Same(a) != Same(b) and Same(a) != a
    key = Same(a)
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is key.obj   # the key keeps its object: no new object can take its id while the entry lives


class _Native:
    """A body program as wholemodel.Hybrid is called (program(g, clustering, rt, ref, cache) -> feeds -> by ref),
    here the whole body on the NumPy runtime, so that the test needs no XLA."""

    def __init__(self, g, clustering, rt, ref, cache) -> None:
        self.g, self.segments_on, self.why = g, {}, []

    def __call__(self, feeds: dict) -> dict:
        return execute(self.g, feeds, "native").by_ref


def test_a_body_program_is_never_another_body_s_under_a_colliding_id(tmp_path, monkeypatch):
    # every id() in the module the same number: an id()-keyed cache hands the Relu body's program to the Neg body
    monkeypatch.setattr(hybrid_bodies, "id", lambda obj: 7, raising=False)
    programs = BodyPrograms(None, ClusterOptions(), _Native)
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    relu, neg = _one_op(tmp_path, "Relu"), _one_op(tmp_path, "Neg")
    for g, want in ((relu, np.maximum(x, 0)), (neg, -x), (relu, np.maximum(x, 0))):
        got = programs.execute(g, {"x": x}, "hybrid", None, CompileCache()).by_ref["y"]
        np.testing.assert_array_equal(got, want)
    assert len(programs.programs) == 2


def test_a_plan_is_keyed_by_its_clustering_itself(tmp_path):
    g = _one_op(tmp_path, "Relu")
    cache = CompileCache()
    first, second = xcviz.cluster(g), xcviz.cluster(g)
    assert first == second   # equal by value, two objects: two plans
    a, b = plan_for(g, "hybrid", first, cache), plan_for(g, "hybrid", second, cache)
    assert a is not b and a.clustering is first and b.clustering is second
    assert plan_for(g, "hybrid", first, cache) is a
    assert list(cache.plans) == [("hybrid", "clustering", Same(second)), ("hybrid", "clustering", Same(first))]
    assert not any(isinstance(part, int) for key in cache.plans for part in key)
