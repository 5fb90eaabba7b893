"""The shape-inference walk's first use: compiled only where it pays, and a line on stderr while it compiles."""
from __future__ import annotations

import contextlib

import pytest

pytest.importorskip("numba")

from xcviz import fastpath, progress  # noqa: E402
from xcviz.passes import infer_fast, infer_warm  # noqa: E402

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


def test_cold_small_graphs_take_the_python_loop_and_warm_the_cache(monkeypatch):
    started = []
    monkeypatch.setattr(infer_fast, "cached", lambda: False)
    monkeypatch.setattr(fastpath, "warm_in_background", lambda folder, module: started.append(module) or True)
    assert not infer_fast.worth_compiling(100_000) and started == ["xcviz.passes.infer_warm"]
    assert infer_fast.worth_compiling(infer_fast.COLD_MIN_NODES)
    monkeypatch.setattr(infer_fast, "cached", lambda: True)
    assert infer_fast.worth_compiling(100_000)


def test_a_cold_first_call_is_announced_once(monkeypatch):
    seen = []
    monkeypatch.setattr(progress, "compiling", lambda what, seconds: seen.append(what) or contextlib.nullcontext())
    monkeypatch.setattr(infer_fast, "cached", lambda: False)
    monkeypatch.setattr(infer_fast, "_announced", False)
    monkeypatch.setattr(infer_fast, "_infer", lambda *a: "done")
    assert infer_fast.infer_shapes_fast(None, [], None) == "done" == infer_fast.infer_shapes_fast(None, [], None)
    assert seen == ["shape inference"]


def test_warm_up_compiles_and_removes_its_lock(tmp_path):
    lock = tmp_path / "xcviz-compiling.lock"
    lock.write_text("1")
    infer_warm.main(str(lock))
    assert not lock.exists()
    assert infer_fast.cached()
