"""Every check of TF's RecursiveCompilabilityChecker / OperationFilter flag auto-clustering sets, against TF's dumps.

tests/data/tf_rules: one graph per rule (`python3 tools/tf_suite.py --rules --tf-python PY`), run by
TensorFlow 2.21 with --tf_xla_auto_jit=2 --tf_xla_cpu_global_jit, Grappler on and off, minimum cluster size
1 and 4; each holds the graph MarkForCompilationPass received and the partition it formed. xcviz gives the
same partition from the graph alone, and refuses the node the rule is about with TF's words."""
import json
import os

import pytest

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.clustering.tf_filter import AUTO_CLUSTERING, OperationFilter, body_refusal, filter_refusal
from xcviz.pipeline import load_file as load
from tests.support.paths import TESTS

ROOT = os.path.join(TESTS, "data", "tf_rules")
CASES = sorted((c, v) for c in os.listdir(ROOT) for v in os.listdir(os.path.join(ROOT, c)))

# rule case -> (node op the rule refuses, words of TF's reason)
RULES = {
    "rule_resource_in_call": ("StatefulPartitionedCall", "resource variable op in called function"),
    "rule_unique": ("Unique", "Unique op"),
    "rule_slow_inaccurate": ("Svd", "operation with numerical accuracy issues"),
    "rule_variant": ("TensorListReserve", "DT_VARIANT producer/consumer"),
    "rule_stack_tensor_array_v1": ("StackPushV2", "Stack op"),
    "rule_control_trigger": ("ControlTrigger", "not allowed control trigger"),
    "rule_collective": ("CollectiveReduceV2", "Collective op"),
}


def _load(case: str, variant: str):
    d = os.path.join(ROOT, case, variant)
    expected = json.load(open(os.path.join(d, "expected.json"), encoding="utf-8"))
    (entry,) = expected["graphs"]
    return load(os.path.join(d, entry["before_mark_for_compilation"])), expected, entry


def test_every_rule_has_four_dumps():
    assert len(CASES) == 4 * 9
    assert {c for c, _ in CASES} >= set(RULES)


@pytest.mark.parametrize("case", CASES, ids="/".join)
def test_partition_identical_to_tensorflow(case):
    g, expected, entry = _load(*case)
    c = run_clustering(g, ClusterOptions(min_cluster_size=expected["min_cluster_size"]))
    assert sorted(sorted(g.nodes[j].name for j in m) for m in c.clusters) == entry["clusters"]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("case", sorted(RULES))
def test_refused_with_tf_reason(case, device):
    """The same OperationFilter holds on CPU and GPU (both register with every cluster_* flag false)."""
    g, _, _ = _load(case, "grappler_off-min1")
    c = run_clustering(g, ClusterOptions(min_cluster_size=1, device=device))
    op, words = RULES[case]
    hits = [j for j, n in enumerate(g.nodes) if n.op_type == "tf." + op]
    assert hits
    for j in hits:
        assert c.cluster_of[j] == -1
        assert words in c.reason[j], c.reason[j]


def test_slow_operations_refused_resize_kept():
    """TF 2.21's OpIsSlow: Qr, MatrixInverse, MatrixSolve (and Svd, SelfAdjointEigV2, also inaccurate) stay
    out; ResizeBilinear and ResizeNearestNeighbor, slow in older TF, are clustered."""
    g, _, _ = _load("rule_slow_inaccurate", "grappler_off-min1")
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    by_op = {n.op_type[3:]: j for j, n in enumerate(g.nodes)}
    for op in ("Qr", "MatrixInverse", "MatrixSolve"):
        assert "slow operation" in c.reason[by_op[op]]
    assert "numerical accuracy" in c.reason[by_op["SelfAdjointEigV2"]]
    for op in ("ResizeBilinear", "ResizeNearestNeighbor"):
        assert c.cluster_of[by_op[op]] >= 0


def test_where_and_tensor_array_v3():
    """Where is compiled (no filter flag covers it); TensorArrayV3 ops are refused as TensorArray ops."""
    g, _, _ = _load("rule_where", "grappler_off-min1")
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    assert all(c.cluster_of[j] >= 0 for j, n in enumerate(g.nodes) if n.op_type == "tf.Where")
    g, _, _ = _load("rule_stack_tensor_array_v1", "grappler_off-min1")
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    ta = [j for j, n in enumerate(g.nodes) if n.op_type.startswith("tf.TensorArray")]
    assert ta and all("TensorArray op" in c.reason[j] for j in ta)


def test_filter_flags_one_by_one():
    cases = {"RandomUniform": "stateful random op", "Assert": "Assert or CheckNumerics",
             "CheckNumerics": "Assert or CheckNumerics", "TensorArrayReadV3": "TensorArray op",
             "StackV2": "Stack op", "EmptyTensorList": "DT_VARIANT producer/consumer",
             "Qr": "slow operation", "Svd": "operation with numerical accuracy issues"}
    for op, words in cases.items():
        assert filter_refusal(op, {}, False) == words
    assert "DT_STRING" in filter_refusal("Const", {"dtype": "string"}, False)
    assert filter_refusal("Const", {"dtype": "string"}, False, OperationFilter(allow_string_consts=True)) is None
    assert filter_refusal("Unique", {}, False, OperationFilter(allow_unique_op=True)) is None
    assert filter_refusal("AddV2", {}, False) is None and filter_refusal("Where", {}, False) is None
    # inside a called function: a resource input is refused unless the device clusters resource ops unsafely
    attrs = {"_body_ops": ["MatMul", "ReadVariableOp"], "_body_resource_ops": ["ReadVariableOp"]}
    assert body_refusal(attrs) == ("ReadVariableOp", "resource variable op in called function")
    assert body_refusal(attrs, OperationFilter(allow_resource_ops_in_called_functions=True)) is None
    assert AUTO_CLUSTERING.require_always_compilable and not AUTO_CLUSTERING.allow_stateful_rng_ops
