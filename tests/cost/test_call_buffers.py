"""What a compiled cluster's call is handed and gives back (cost.boundary.Boundary.arguments), and the
per-buffer cost a calibrated profile may carry (xla_argument_overhead, xla_output_overhead)."""
import math

import numpy as np
import pytest
import yaml

import xcviz

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.cost import compute_stats, load_hardware
from xcviz.cost.boundary import Boundary
from xcviz.cost.view import CostView
from xcviz.pipeline import load_file

from tests.support.paths import ROOT

MODELS = ["graphs/resnet_mini.onnx", "tests/data/exports/bert_dynamo.onnx", "graphs/transformer_encoder.onnx",
          "tests/data/tf_keras/conv1d_frozen.pb", "graphs/seed_demo.yaml", "graphs/detector_mini.onnx"]


@pytest.mark.parametrize("path", MODELS)
def test_arguments_are_what_the_compiled_cluster_takes_and_gives(path):
    """The reference is the compiled call's own signature: each cluster's entries (graph inputs, weights,
    other clusters' and fallbacks' values) and exits, as validate compiles it."""
    from xcviz.runtime.wholemodel import cluster_specs

    g = load_file(f"{ROOT}/{path}")
    clustering = run_clustering(g, ClusterOptions(min_cluster_size=1))
    cluster_of, _, sizes = clustering.arrays()
    nc = len(sizes)
    assert nc >= 1
    into, out = Boundary(g, CostView(g), cluster_of).arguments(nc)
    specs = cluster_specs(g, [np.flatnonzero(cluster_of == c).tolist() for c in range(nc)])
    assert into.tolist() == [len(s.entries) for s in specs]
    assert out.tolist() == [len(s.exits) for s in specs]


def test_a_profiles_buffer_costs_add_to_each_clusters_xla_time(tmp_path):
    """Each cluster's XLA time grows by xla_argument_overhead per argument and xla_output_overhead per output,
    and nothing else moves."""
    g = xcviz.load(f"{ROOT}/graphs/detector_mini.onnx", dims={"K": 8})
    clustering = run_clustering(g, ClusterOptions(min_cluster_size=1))
    data = yaml.safe_load(open(f"{ROOT}/xcviz/hardware/cpu.yaml"))
    data.pop("xla_argument_overhead", None), data.pop("xla_output_overhead", None)
    times = []
    for name, extra in (("without", {}), ("with", {"xla_argument_overhead": 1e-6, "xla_output_overhead": 3e-6})):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump({**data, **extra, "name": name}))
        s = compute_stats(g, clustering, load_hardware(str(path)))
        times.append([(c.time_unfused, c.time_fused) for c in s.clusters_detail])
    cluster_of, _, sizes = clustering.arrays()
    into, out = Boundary(g, CostView(g), cluster_of).arguments(len(sizes))
    assert len(times[0]) == len(sizes) >= 2
    for (nat0, xla0), (nat1, xla1), a, o in zip(*times, into.tolist(), out.tolist()):
        assert nat1 == nat0 is not None and xla0 is not None
        assert xla1 - xla0 == pytest.approx(a * 1e-6 + o * 3e-6, rel=1e-6)


def test_calibrate_measures_the_buffer_costs(tmp_path):
    """A calibrated profile carries them (measured: XLA's call of 33 arguments and of 8 outputs), and they
    load back."""
    text = xcviz.calibrate(name="buffers", matmul_n=32, stream_elements=1024, repeats=2)
    data = yaml.safe_load(text)
    assert math.isfinite(data["xla_argument_overhead"]) and data["xla_argument_overhead"] >= 0
    assert math.isfinite(data["xla_output_overhead"]) and data["xla_output_overhead"] >= 0
    path = tmp_path / "b.yaml"
    path.write_text(text)
    cal = load_hardware(str(path)).calibrated
    assert cal.argument_overhead == pytest.approx(data["xla_argument_overhead"], rel=1e-3)
    assert cal.output_overhead == pytest.approx(data["xla_output_overhead"], rel=1e-3)
