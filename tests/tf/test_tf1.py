"""TF1 frozen graphs with control flow v1 (tests/data/tf1, tools/tf1_corpus.py): run natively, hybrid and jit equal
to TensorFlow's own outputs, on both paths of each graph (a branch taken and not, a loop of 0 iterations);
validate compiles and checks the clusters inside loop bodies and branches; the partition equals TensorFlow's
MarkForCompilationPass dumps. No TensorFlow needed: the tests read the committed files."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from xcviz.clustering import ClusterOptions, run_clustering
from xcviz.pipeline import load_file as load
from xcviz.runtime.execute import execute
from tests.support.paths import TESTS

DATA = os.path.join(TESTS, "data", "tf1")
INDEX = json.load(open(os.path.join(DATA, "index.json"), encoding="utf-8"))["cases"]
CASES = sorted(INDEX)
PARTITIONS = json.load(open(os.path.join(DATA, "partitions.json"), encoding="utf-8"))
PATHS = [(c, io) for c in CASES for io in ("io", "alt_io") if os.path.isfile(os.path.join(DATA, f"{c}_{io}.npz"))]
# the partitions xcviz does not form as TensorFlow does (case, min cluster size): before the pass, TF's session
# folds dynamic_rnn's Shape and its zeros (Fill) of static shape into constants and clones the small ones
# (CloneConstantsForBetterClustering: rnn/Shape/clone_0), which the frozen graph xcviz reads does not hold
# (rnn/Shape/clone_0); and in tensor_array_ops it folds the Shape of the forward product tf.gradients reads, so
# that product (read by nothing else) is gone from the graph its pass sees
NOT_IDENTICAL: set[tuple[str, int]] = {("dynamic_rnn_seqlen", 1), ("tensor_array_ops", 1)}


def io(case: str, which: str = "io"):
    with np.load(os.path.join(DATA, f"{case}_{which}.npz")) as z:
        return ({k[3:]: z[k] for k in z.files if k.startswith("in_")},
                {k[4:]: z[k] for k in z.files if k.startswith("out_")})


def assert_equal_to_tf(got: dict, ref: dict) -> None:
    """Every output TF fetched (out0, out1, ...); a graph may end in other nodes too (tensor_array_ops: the forward
    product only tf.gradients' Shape reads, which xcviz folds)."""
    assert set(ref) <= set(got)
    for k, want in ref.items():
        have = np.asarray(got[k])
        assert have.shape == want.shape and have.dtype == want.dtype, (k, have.shape, want.shape, have.dtype)
        np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5, err_msg=k)


def test_corpus_is_complete():
    assert len(CASES) == 9 and len(PATHS) >= 15
    ops = set().union(*(set(INDEX[c]["ops"]) for c in CASES))
    assert {"Enter", "Exit", "Switch", "Merge", "NextIteration", "LoopCond", "TensorArrayV3", "TensorArrayReadV3",
            "TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArrayGatherV3", "TensorArraySplitV3",
            "TensorArrayConcatV3", "TensorArrayGradV3", "TensorArrayCloseV3", "Assert"} <= ops


@pytest.mark.parametrize("case,which", PATHS, ids="/".join)
def test_native_run_equals_tensorflow(case, which):
    feeds, ref = io(case, which)
    assert_equal_to_tf(execute(load(os.path.join(DATA, f"{case}.pb")), feeds, "native").outputs, ref)


@pytest.mark.slow
@pytest.mark.parametrize("case,which", PATHS, ids="/".join)
@pytest.mark.parametrize("mode", ["hybrid", "jit"])
def test_compiled_run_equals_tensorflow(case, which, mode):
    """Clusters inside loop bodies and branches run per iteration on XLA, none falls back."""
    feeds, ref = io(case, which)
    g = load(os.path.join(DATA, f"{case}.pb"))
    r = execute(g, feeds, mode, options=ClusterOptions(min_cluster_size=1) if mode == "hybrid" else None)
    assert not r.fallbacks
    assert_equal_to_tf(r.outputs, ref)


def test_a_cluster_in_a_loop_body_runs_once_per_iteration():
    feeds, ref = io("while_loop")
    g = load(os.path.join(DATA, "while_loop.pb"))
    c = run_clustering(g, ClusterOptions())
    body = [k for k, m in enumerate(c.clusters) if any(g.nodes[i].name == "while/MatMul" for i in m)]
    assert len(body) == 1
    r = execute(g, feeds, "hybrid", clustering=c)
    assert_equal_to_tf(r.outputs, ref)
    assert r.cache["hits"] + r.cache["compiles"] >= int(feeds["n"])  # 5 iterations: the body cluster ran 5 times


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_validate_checks_the_clusters_inside_frames(case):
    from xcviz.runtime.validate import validate_graph

    feeds, _ = io(case)
    g = load(os.path.join(DATA, f"{case}.pb"))
    rep = validate_graph(g, inputs=feeds, model=False, repeats=1, options=ClusterOptions(min_cluster_size=1))
    assert rep.clusters and all(r.status == "ok" for r in rep.clusters), [(r.status, r.message) for r in rep.clusters]
    in_loops = [r for r in rep.clusters if any("while/" in n for n in r.nodes)]
    assert all(r.inputs == "real" for r in in_loops)  # a loop body's cluster is checked on its last iteration's values
    assert in_loops or "while" not in case


@pytest.mark.parametrize("case,size", [(c, k) for c in CASES for k in (1, 4) if (c, k) not in NOT_IDENTICAL],
                         ids=lambda x: str(x))
def test_partition_identical_to_tensorflow(case, size):
    g = load(os.path.join(DATA, f"{case}.pb"))
    c = run_clustering(g, ClusterOptions(min_cluster_size=size))
    assert sorted(sorted(g.nodes[j].name for j in m) for m in c.clusters) == PARTITIONS[case][str(size)]


def test_cli_run_writes_tensorflow_s_outputs(run_cli, tmp_path):
    feeds, ref = io("dynamic_rnn_seqlen")
    np.savez(tmp_path / "in.npz", **feeds)
    code, out, err = run_cli("run", os.path.join(DATA, "dynamic_rnn_seqlen.pb"), "--inputs", str(tmp_path / "in.npz"),
                             "--mode", "native", "--repeats", "1", "-o", str(tmp_path / "out.npz"))
    assert code == 0, err
    with np.load(tmp_path / "out.npz") as z:
        assert_equal_to_tf({k: z[k] for k in z.files}, ref)


def test_assert_passes_or_fails_the_run():
    """dynamic_rnn's Assert (seq_len has the batch's length) runs, and a false condition fails the run in one line
    with its data, as TensorFlow's does."""
    from xcviz.errors import XcvizError
    from xcviz.runtime.node import eval_node

    g = load(os.path.join(DATA, "dynamic_rnn_seqlen.pb"))
    node = next(n for n in g.nodes if n.op == "tf.Assert")
    data = [np.asarray(b"Expected shape for Tensor rnn/sequence_length:0 is "), np.asarray([3]),
            np.asarray(b" but saw shape: "), np.asarray([2])]
    assert eval_node(node, [np.asarray(True), *data]) == []
    with pytest.raises(XcvizError, match="assertion failed: .*Expected shape.*saw shape"):
        eval_node(node, [np.asarray(False), *data])


@pytest.mark.slow
def test_cli_validate_times_the_whole_model_through_frames(run_cli):
    code, out, err = run_cli("validate", os.path.join(DATA, "gru_dynamic_steps.pb"), "--repeats", "1", "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["clusters"] and all(c["status"] == "ok" for c in rep["clusters"])
    assert rep["model"]["native_ms"] and rep["model"]["hybrid_ms"]


def test_hlo_of_a_cluster_in_a_loop_body(run_cli, tmp_path):
    """`xcviz hlo` compiles a loop body's cluster on the values of its last iteration."""
    feeds, _ = io("nested_while")
    np.savez(tmp_path / "in.npz", **feeds)
    g = load(os.path.join(DATA, "nested_while.pb"))
    c = run_clustering(g, ClusterOptions())
    (k,) = [k for k, m in enumerate(c.clusters) if any(g.nodes[i].name == "while/while/MatMul" for i in m)]
    code, out, err = run_cli("hlo", os.path.join(DATA, "nested_while.pb"), "--cluster", str(k),
                             "--inputs", str(tmp_path / "in.npz"))
    assert code == 0, err
    assert "HloModule" in out and "f32[3,3]" in out


def test_the_frame_executor_keeps_only_the_outputs_unless_asked():
    """Values in flight live in the executor's queue until read: the run's env holds the graph's outputs alone
    (equal to TF's), keep_all every live value, as before."""
    from xcviz.runtime import execute as execute_mod

    feeds, ref = io("while_loop")
    g = load(os.path.join(DATA, "while_loop.pb"))
    full = execute(g, feeds, "native", keep_all=True)
    assert_equal_to_tf(full.outputs, ref)
    plan = execute_mod.plan_for(g, "native", None, execute_mod.graph_cache(g))
    lean = execute_mod._run_frames(g, feeds, plan, execute_mod.graph_cache(g), lazy=True)
    assert set(lean) == set(g.outputs) and len(full.env) > 3 * len(lean)
    for r in g.outputs:
        np.testing.assert_array_equal(lean[r], full.env[r])
