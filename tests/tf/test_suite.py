"""xcviz reads TensorFlow's own graph files and gives TF's MarkForCompilationPass partition from them alone.

tests/data/tf_suite (docs/tf-suite.md): 24 graphs x Grappler on/off x min cluster size 0/1/4, each with the
GraphDef the pass received and the partition TensorFlow 2.21 formed (read from its annotated dump). No
--supported-ops: the candidates come from TF's XLA kernel registry and TF's rules (clustering/tf_rules.py).
The table of docs/tf-fidelity.md is this test's result; NOT_IDENTICAL would list the cases where xcviz's
partition differs (none does)."""
import json
import os

import pytest

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.pipeline import load_file as load
from tests.support.paths import TESTS

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)

ROOT = os.path.join(TESTS, "data", "tf_suite")
CASES = sorted((c, v) for c in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, c)) and c != "models"
               for v in os.listdir(os.path.join(ROOT, c)))
NOT_IDENTICAL: set[tuple[str, str]] = set()  # every case x variant is identical (docs/tf-fidelity.md)


def _partition(case, variant):
    d = os.path.join(ROOT, case, variant)
    expected = json.load(open(os.path.join(d, "expected.json"), encoding="utf-8"))
    g = load(os.path.join(d, "before_mark_for_compilation.pbtxt"))
    c = run_clustering(g, ClusterOptions(min_cluster_size=expected["min_cluster_size"]))
    ours = sorted(sorted(g.nodes[j].name for j in members) for members in c.clusters)
    return ours, expected["graphs"][0]["clusters"]


def test_suite_is_complete():
    assert len(CASES) == 144 and NOT_IDENTICAL <= set(CASES)
    clustered = sum(len(json.load(open(os.path.join(ROOT, c, v, "expected.json")))["graphs"][0]["clusters"])
                    for c, v in CASES)
    assert clustered > 400  # TF formed 456 clusters: identity is not about empty partitions


@pytest.mark.parametrize("case", [c for c in CASES if c not in NOT_IDENTICAL], ids="/".join)
def test_partition_identical_to_tensorflow(case):
    ours, theirs = _partition(*case)
    assert ours == theirs


def test_annotated_dump_carries_the_same_partition_as_expected():
    """The reference partition read from _XlaCluster attributes (mark_for_compilation.pbtxt) is TF's."""
    d = os.path.join(ROOT, "lstm", "grappler_off-min4")
    g = load(os.path.join(d, "mark_for_compilation.pbtxt"))
    groups: dict[str, list[str]] = {}
    for n in g.nodes:
        if "_XlaCluster" in n.attrs:
            groups.setdefault(n.attrs["_XlaCluster"], []).append(n.name)
    expected = json.load(open(os.path.join(d, "expected.json"), encoding="utf-8"))
    assert sorted(sorted(m) for m in groups.values()) == expected["graphs"][0]["clusters"]
