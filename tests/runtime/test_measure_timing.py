"""Measurements that hold (issue 36): native and XLA runs interleaved, repeated until the medians settle or a
budget ends, reported with their spread, run count and the machine's load."""
from __future__ import annotations

import json
import os
import time

import pytest

from tests.support.paths import ROOT
from xcviz.runtime import measure
from xcviz.runtime.measure import Interleaved, Timing, interleaved, machine_load, timing_note


def test_runs_are_interleaved_and_reversed_every_other_round(monkeypatch):
    seen: list[str] = []
    real = measure.clock

    def clock():   # marks each timed sample's start and end
        seen.append("|")
        return real()
    monkeypatch.setattr(measure, "clock", clock)
    out = interleaved({"a": lambda: seen.append("a"), "b": lambda: seen.append("b")}, repeats=4)
    assert out.rounds == 4 and [len(t.samples) for t in out.values()] == [4, 4]
    assert out["a"].loops == 1   # (--repeats: one call per sample, as asked)
    # two warm-up calls each, then rounds a b | b a | a b | b a: each sample one timed call between its marks,
    # after untimed calls of the same callable (REWARM_S: its steady state, not the other's caches)
    assert seen[:4] == ["a", "a", "b", "b"]
    samples = "".join(seen[4:]).split("|")[1::2]   # what ran between each start and end mark
    assert samples == ["a", "b", "b", "a", "a", "b", "b", "a"]
    before = "".join(seen[4:]).split("|")[0::2][:-1]   # what ran before each sample, since the last one
    assert all(len(w) >= 1 and set(w) == {name} for w, name in zip(before, samples))


def test_fast_calls_are_timed_in_loops_and_a_budget_ends_unsettled_runs(monkeypatch):
    calls = {"n": 0}

    def fast():
        calls["n"] += 1
    out = interleaved({"fast": fast}, budget_s=0.05)
    assert out["fast"].loops > 1 and out.rounds >= measure.MIN_ROUNDS
    # a callable whose time keeps growing never settles: the budget ends it, and says so
    state = {"t": 1e-4}

    def slower():
        state["t"] *= 1.3
        time.sleep(state["t"])
    out = interleaved({"slower": slower}, budget_s=0.3)
    assert out.stable is False and out.budget_s == 0.3


def test_a_settled_median_still_samples_a_share_of_the_budget(monkeypatch):
    # a call of constant time settles within MIN_ROUNDS; the rounds still go on for MIN_SHARE of the budget, so
    # a median spans several of the machine's phases rather than one (the reruns of a fast model otherwise move
    # 2x). The samples' clock is virtual (every sample the same time: settled whatever the machine's load); the
    # share is of wall time.
    ticks = iter(range(10**9))
    monkeypatch.setattr(measure, "clock", lambda: next(ticks) * 1e-3)
    out = interleaved({"a": lambda: None, "b": lambda: None}, budget_s=0.3)
    assert out.stable and out.sampled_s >= measure.MIN_SHARE * 0.3 and out.rounds > measure.MIN_ROUNDS
    assert out.to_json()["sampled_s"] == pytest.approx(out.sampled_s, abs=1e-3)
    assert out.sampled_s < 0.3 + 0.05   # (and it settles before the budget ends)


def test_median_spread_and_ratio_quartiles():
    t = Timing([0.001, 0.002, 0.003, 0.004, 0.005])
    assert t.median_ms == pytest.approx(3.0)
    assert t.spread == pytest.approx((0.004 - 0.002) / 0.003)
    j = t.to_json()
    assert {"median_ms", "runs", "loops", "spread", "p25_ms", "p75_ms", "min_ms", "max_ms"} <= set(j) and j["runs"] == 5
    both = Interleaved({"n": Timing([2.0, 4.0, 6.0]), "x": Timing([1.0, 1.0, 2.0])}, None)
    assert both.ratio("n", "x")["median"] == pytest.approx(3.0)
    assert both.to_json()["interleaved"] is True


def test_load_and_wide_spread_are_said():
    assert "loaded" in timing_note({"load_1m": 9.0, "cores": 2, "loaded": True}, [])
    assert "wide spread" in timing_note({"load_1m": 0.1, "cores": 2, "loaded": False}, [0.3])
    assert timing_note({"load_1m": 0.1, "cores": 2, "loaded": False}, [0.02]) is None
    load = machine_load()
    assert load["cores"] == os.cpu_count() and (load["loaded"] is None or isinstance(load["loaded"], bool))


@pytest.mark.slow
def test_validate_json_has_the_spread_keys(run_cli):
    code, out, _ = run_cli("validate", os.path.join(ROOT, "graphs", "transformer_encoder.onnx"), "--json",
                           "--threads", "1")
    data = json.loads(out)
    assert code == 0 and {"load_1m", "cores", "loaded"} <= set(data["load"]) and "timing_note" in data
    c = data["clusters"][0]["timing"]
    assert c["interleaved"] and c["native"]["runs"] == c["xla"]["runs"] == c["rounds"] >= measure.MIN_ROUNDS
    assert c["native"]["spread"] >= 0 and c["speedup_quartiles"]["p25"] <= c["speedup_quartiles"]["p75"]
    m = data["model"]["timing"]
    assert {"native", "optimized", "hybrid", "rounds", "stable", "speedup_quartiles"} <= set(m)
    assert m["native"]["median_ms"] == pytest.approx(data["model"]["native_ms"])


def test_a_slow_call_gets_one_warm_up_and_a_few_rounds():
    calls = {"n": 0}

    def slow():
        calls["n"] += 1
        time.sleep(0.12)
    out = interleaved({"slow": slow}, budget_s=0.2)
    assert out.rounds == measure.FEW_ROUNDS and calls["n"] == 1 + measure.FEW_ROUNDS and out.stable is False


def test_calibrate_groups_take_turns_until_each_spans_its_share(monkeypatch):
    """calibrate's Timer times its three groups (small native programs, larger ones, compiled ones) in turns of
    SLICE_S, each until it has `repeats` rounds and SHARE_S x repeats seconds: a group timed in one go sat in
    one of the machine's speed phases (the dispatch read 0.49 us in one calibration, 0.75 in the next). The
    clock is virtual: 1 ms a reading."""
    from xcviz.runtime import calibrate_ops

    ticks = iter(range(10**9))
    monkeypatch.setattr(measure, "clock", lambda: next(ticks) * 1e-3)
    seen = []
    t = calibrate_ops.Timer.__new__(calibrate_ops.Timer)
    t.repeats, t.kernels = 4, {"x": 1}
    t.calls = {("a", "small"): lambda: seen.append(0), "mid": lambda: seen.append(1), "x": lambda: seen.append(2)}
    m = t.run()
    assert set(m) == set(t.calls) and all(v > 0 for v in m.values())
    turns = [g for i, g in enumerate(seen) if i == 0 or seen[i - 1] != g]
    assert turns[:3] == [0, 1, 2] and len(turns) > 3            # the groups alternate, not one after another
    share = calibrate_ops.SHARE_S * t.repeats
    # each group sampled at least its share of (virtual) time: a round of one program reads the clock three
    # times (the sample's two, the slice's check), 3 ms; far more rounds than `repeats`
    assert all(seen.count(g) >= share / 3e-3 > 10 * t.repeats for g in (0, 1, 2))
