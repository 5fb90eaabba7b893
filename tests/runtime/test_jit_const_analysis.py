"""Compile-time constants as TF's backwards constant analysis finds them: an entry from which a must-be-constant
input (a Slice's ends, a Range's bound, a ConstantOfShape's shape) is computed inside the cluster is compiled in
as a value. The cost strategy cuts these exports so that the shape arithmetic's input arrives from another
cluster; before, the hybrid run stopped with 'must be a constant for XLA'."""
import os

import numpy as np
import pytest

from xcviz.pipeline import AnalysisOptions, analyse
from xcviz.runtime.execute import bind_inputs, execute
from xcviz.runtime.jit import CompileCache, baked_entries, cluster_specs
from tests.support.paths import ROOT, TESTS

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

EXPORTS = os.path.join(TESTS, "data", "exports")
PROFILE = os.path.join(ROOT, "benchmarks", "cpu_calibrated.yaml")


@pytest.mark.parametrize("name", ["bert_torchscript", "gpt_torchscript", "tagger_torchscript"])
def test_cost_partition_runs_and_matches_onnxruntime(name):
    path = os.path.join(EXPORTS, name + ".onnx")
    given = dict(np.load(path[:-5] + ".inputs.npz"))
    want = np.load(path[:-5] + ".ort.npz")
    a = analyse(path, AnalysisOptions(strategy="cost", hardware=PROFILE))
    specs = cluster_specs(a.graph, a.clustering.clusters)
    # the partition really cuts shape arithmetic off its input: some entry is baked only by the walk back
    direct = [{r for r in s.entries if any(
        r == a.graph.nodes[i].inputs[k] for i in s.members for k in _static(a.graph.nodes[i])
        if k < len(a.graph.nodes[i].inputs))} for s in specs]
    assert any(baked_entries(a.graph, s) - d - _int_consts(a.graph) for s, d in zip(specs, direct))
    out = execute(a.graph, bind_inputs(a.graph, given, 0, 50_000_000), "hybrid", a.clustering, CompileCache())
    for k in want.files:
        got, ref = np.asarray(out.outputs[k]), want[k]
        scale = max(float(np.abs(ref).max()), 1e-30)
        assert float(np.abs(got - ref).max()) / scale < 1e-4, k


def _static(node):
    from xcviz.ops import REGISTRY

    opdef = REGISTRY.ops.get(node.op) if node.known else None
    return opdef.static_inputs if opdef is not None else ()


def _int_consts(graph):
    return {v.name for v in graph.inputs if v.data is not None and np.asarray(v.data).dtype.kind != "f"}
