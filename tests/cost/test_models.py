"""The two time models behind cost.model's interface (issue 39, item 4): the profile chooses one, and each
puts seconds on an op by its documented formula (docs/cost-model.md)."""
from __future__ import annotations

import os

import pytest
from tests.support.paths import ROOT

import xcviz
from xcviz.cost import load_hardware
from xcviz.cost.calibrated import CalibratedModel
from xcviz.cost.classes import native_time
from xcviz.cost.roofline import RooflineModel
from xcviz.cost.stats import cost_model

RELU = """
name: one_relu
inputs:
  - {name: x, shape: [1024, 1024], dtype: float32}
nodes:
  - {name: r, op: Relu, inputs: [x]}
outputs: [r]
"""
N = 1024 * 1024


@pytest.mark.parametrize("profile, model", [("gpu", RooflineModel), ("tpu", RooflineModel), ("h100", RooflineModel),
                                            ("cpu", CalibratedModel), ("cpu_torch", CalibratedModel)])
def test_the_profile_chooses_the_model(profile, model):
    a = xcviz.analyse(os.path.join(ROOT, "graphs", "resnet_block.yaml"))
    assert type(cost_model(load_hardware(profile), a.graph, a.graph.nodes, [0])) is model


def _one_relu(write_graph, profile: str):
    a = xcviz.analyse(write_graph(RELU), hardware=profile, deny=["Relu"])   # natively, op by op
    assert a.stats.fallback_nodes == 1
    return a.stats, load_hardware(profile)


def test_the_roofline_model_times_an_op_by_its_flops_or_its_bytes_plus_a_launch(write_graph):
    stats, hw = _one_relu(write_graph, "gpu")
    flops, nbytes = N, 2 * 4 * N    # one compare per element; reads x and writes r
    expected = max(flops / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead
    assert stats.time_before == expected and stats.time_after == expected


def test_the_calibrated_model_times_an_op_by_its_class_and_adds_a_session(write_graph):
    stats, hw = _one_relu(write_graph, "cpu")
    cal = hw.calibrated
    op = native_time(cal.classes["elementwise"], cal, N, 2 * 4 * N)
    assert cal.session_overhead > 0
    assert stats.time_before == op + cal.session_overhead and stats.time_after == op + cal.session_overhead
