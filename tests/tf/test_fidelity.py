"""xcviz's `mark` partition equals TensorFlow's on 120 graphs that TensorFlow 2.20 itself clustered.

tests/data/tf_mark_cases.json was recorded by `python tools/tf_fidelity.py --tf-python ... --graphs 120
--seed 3 --record tests/data/tf_mark_cases.json`: for each random graph, the exact graph TF's
MarkForCompilationPass saw (its node order, _Arg/_Retval/NoOp nodes, control edges) and the clusters
it formed with min cluster size 1. TensorFlow is not needed to run this test.
"""
import json
import os

import pytest

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.passes.prepare import prepare
from xcviz.loaders.schema import graph_from_mapping
from tests.support.paths import TESTS

CASES = json.load(open(os.path.join(TESTS, "data", "tf_mark_cases.json"), encoding="utf-8"))


def _graph(nodes):
    spec = [{"name": n, "op": op, "inputs": [i for i in ins if not i.startswith("^")],
             "control_inputs": [i[1:] for i in ins if i.startswith("^")]} for n, op, ins in nodes]
    return prepare(graph_from_mapping({"name": "tf", "nodes": spec}, "tf"), allow_unknown=True)


def test_cases_are_nontrivial():
    assert len(CASES) == 120
    assert sum(len(c) - 1 for case in CASES for c in case["clusters"]) > 2000  # TF merges


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_partition_identical_to_tensorflow(case):
    g = _graph(case["nodes"])
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    ours = sorted(sorted(g.nodes[v].name for v in members) for members in c.clusters)
    assert ours == case["clusters"]
