"""Differential property test (design habit 7): native == hybrid == jit over random small graphs and shapes.

Graphs are drawn as xcviz YAML mappings (graph_from_mapping + passes.prepare, the loaders' own path): elementwise
ops, matmul, reductions, softmax, layernorm, layout ops (transpose, reshape, concat), ops XLA cannot compile
(Print, CheckNumerics, PyFunc, custom_nms) and `compile: false` nodes, so hybrid runs several clusters with
native nodes between them; the min cluster size is drawn too. Outputs must agree within the dtype-aware
tolerances of `compare` (float32 1e-4, float64 1e-9 relative), with identical shapes and dtypes.

40 derandomized examples by default (CI-stable, ~10 s); XCVIZ_DIFF_EXAMPLES=2000 runs longer and random.
"""
from __future__ import annotations

import pytest
import os

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import xcviz
from tests.support.strategies import mapping_to_graph, typed_mappings
from xcviz.runtime.execute import bind_inputs, execute
from xcviz.runtime.jit import CompileCache
from xcviz.runtime.measure import compare

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

EXAMPLES = int(os.environ.get("XCVIZ_DIFF_EXAMPLES", "40"))
DIFF = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 40, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def build(doc: dict):
    return mapping_to_graph(doc, "diff.yaml")


def assert_modes_agree(g, min_size, seed: int = 0) -> int:
    feeds = bind_inputs(g, seed=seed)
    ref = execute(g, feeds, "native", cache=CompileCache()).outputs
    clustering = xcviz.cluster(g, min_cluster_size=min_size)
    runs = {"hybrid": execute(g, feeds, "hybrid", clustering, CompileCache()).outputs,
            "jit": execute(g, feeds, "jit", cache=CompileCache()).outputs}
    for mode, outs in runs.items():
        assert list(outs) == list(ref), mode
        for name, arr in outs.items():
            assert arr.shape == ref[name].shape and arr.dtype == ref[name].dtype, (mode, name, arr.shape, arr.dtype)
            cmp = compare(arr, ref[name])
            assert cmp["ok"], (mode, name, cmp)
    return len(clustering.clusters)


@DIFF
@given(doc=typed_mappings(), min_size=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_native_hybrid_jit_agree_on_random_graphs(doc, min_size, seed):
    note(f"graph: {doc}")
    assert_modes_agree(build(doc), min_size, seed)


def test_fallbacks_and_compile_false_split_hybrid_into_several_clusters():
    # x -> matmul -> tanh -> Print (native) -> softmax -> add(compile: false) -> matmul -> reduce_sum
    doc = {"name": "split", "inputs": [{"name": "x", "shape": [2, 3, 4], "dtype": "float32"},
                                       {"name": "w", "shape": [4, 4], "dtype": "float32"}],
           "nodes": [{"name": "a", "op": "matmul", "inputs": ["x", "w"]}, {"name": "b", "op": "tanh", "inputs": ["a"]},
                     {"name": "p", "op": "Print", "inputs": ["b"]},
                     {"name": "s", "op": "softmax", "inputs": ["p"], "attrs": {"axis": -1}},
                     {"name": "c", "op": "add", "inputs": ["s", "b"], "compile": False},
                     {"name": "d", "op": "matmul", "inputs": ["c", "w"]},
                     {"name": "r", "op": "reduce_sum", "inputs": ["d"], "attrs": {"axes": [-1], "keepdims": 1}}],
           "outputs": ["r", "s"]}
    g = build(doc)
    assert assert_modes_agree(g, 1) == 3
