"""A recurrence (LSTM, GRU, RNN) pays per step: XLA's While loop launches its body's kernels every step and the
native runtime calls its GEMM and gate loops every step (the `steps` fact of each entry, ops/rnn.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

import xcviz
from tests.support.paths import ROOT
from xcviz.cost import compute_stats, load_hardware
from xcviz.ir import bind_dims
from xcviz.ops import REGISTRY
from xcviz.ops.rnn import RecurrenceSteps

TAGGER = os.path.join(ROOT, "tests", "data", "exports", "tagger_torchscript.onnx")   # bidirectional LSTM, then a GRU


def _stats(seq: int):
    g = bind_dims(xcviz.load(TAGGER), {"batch": 2, "seq": seq})
    return compute_stats(g, xcviz.cluster(g), load_hardware("cpu", "cpu"))


def test_every_recurrence_has_a_step_rule():
    for op in ("lstm", "gru", "rnn"):
        assert isinstance(REGISTRY.ops[op].steps, RecurrenceSteps)


def test_each_step_costs_its_kernels_and_calls():
    cal = load_hardware("cpu", "cpu").calibrated
    a, b = _stats(8), _stats(64)
    steps = 56 * 2, 56   # 56 more steps: the LSTM's two directions, the GRU's one
    lstm, gru = REGISTRY.ops["lstm"].steps, REGISTRY.ops["gru"].steps
    launches = steps[0] * lstm.kernels + steps[1] * gru.kernels
    calls = steps[0] * lstm.calls + steps[1] * gru.calls
    grew = b.clusters_detail[0].time_fused - a.clusters_detail[0].time_fused
    assert grew >= launches * cal.classes["elementwise"].xla_launch
    grew_native = b.time_before - a.time_before
    assert grew_native >= calls * cal.classes["free"].native_overhead


@pytest.mark.parametrize("seq", [8, 64])
def test_the_tagger_is_estimated_slower_under_xla_at_any_length(seq):
    """Measured (CPU time, one thread, 2026-12-07): 0.25-0.31x at sequence 8 and 0.33-0.39x at 64; before the
    per-step costs the estimate rose with the length (0.68x at 64), as if the steps were free."""
    est = _stats(seq).speedup_estimate
    assert 0.2 < est < 0.5, est
    assert np.isfinite(est)
