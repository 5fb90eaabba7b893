"""Control flow is costed from its body (cost.control): Loop = body x constant trip count, Scan = body x
scan length, If = the taken branch (constant condition) or the dearer one; else unknown, with the reason.
The numbers below are worked out by hand: MatMul [1,8]x[8,8] = 2*8*8 = 128 FLOPs and reads 32 + 256 bytes,
writes 32; Add of two f32[8] = 8 FLOPs, 3*32 bytes; Identity of a bool = 0 FLOPs, 1 + 1 bytes. The runs are
(iterations, body ops dispatched): a native runtime pays a fixed cost for each body op on every iteration."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX control flow: pip install -e '.[onnx]'")
from onnx import TensorProto as T, helper, numpy_helper as nh  # noqa: E402

from xcviz.clustering import ClusterOptions, run_clustering  # noqa: E402
from xcviz.cost import compute_stats, load_hardware  # noqa: E402
from xcviz.cost.keys import control_node_cost as control_cost  # noqa: E402
from xcviz.pipeline import load_file as load  # noqa: E402

MATMUL_FLOPS, MATMUL_BYTES = 128, 32 + 256 + 32
ADD_FLOPS, ADD_BYTES = 8, 3 * 32


def _save(tmp_path, nodes, inputs, outputs, inits, opset=13) -> str:
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return str(path)


def _loop_model(tmp_path, trips: str | None, computed: bool = False) -> str:
    """y = x @ W, `trips` times (x: f32[1,8], W: an outer-scope f32[8,8])."""
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_in", "W"], ["x_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", T.INT64, []), helper.make_tensor_value_info("cond_in", T.BOOL, []),
                 helper.make_tensor_value_info("x_in", T.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", T.BOOL, []), helper.make_tensor_value_info("x_out", T.FLOAT, None)])
    nodes = [helper.make_node("Loop", ["M2" if computed else (trips and "M") or "", "c", "x"], ["y"], body=body)]
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [1, 8])]
    inits = [nh.from_array(np.array(True), "c"), nh.from_array(np.ones((8, 8), np.float32), "W")]
    if trips is not None:
        inits.append(nh.from_array(np.array(int(trips), np.int64), "M"))
    if computed:  # a trip count read from an input: known only when it runs
        inputs.append(helper.make_tensor_value_info("n", T.INT64, []))
        nodes.insert(0, helper.make_node("Add", ["n", "M"], ["M2"]))
    return _save(tmp_path, nodes, inputs, [helper.make_tensor_value_info("y", T.FLOAT, [1, 8])], inits)


def _node(g, op):
    return next(n for n in g.nodes if n.op == op)


def test_a_loop_with_a_constant_trip_count_costs_its_body_times_the_trips(tmp_path):
    g = load(_loop_model(tmp_path, "5"))
    flops, nbytes, why, runs = control_cost(g, _node(g, "loop"))
    assert (flops, nbytes, why) == (5 * MATMUL_FLOPS, 5 * (MATMUL_BYTES + 2), None)   # 640 FLOPs, 1610 bytes
    assert runs == (5, 10)   # 5 iterations of MatMul and Identity
    s = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), load_hardware("cpu"))
    assert s.unknown_cost_nodes is None and s.coverage_flops == 1.0


def test_a_loop_costs_a_dispatch_per_body_op_per_iteration(tmp_path):
    """Natively every body op is dispatched on every iteration: raising the dispatch cost by d raises 50 trips
    of a 2-op body by 90 d more than 5 trips."""
    from importlib import resources

    import yaml

    base = yaml.safe_load(resources.files("xcviz.hardware").joinpath("cpu.yaml").read_text("utf-8"))
    d = 1e-3

    def before(trips: str, extra: float) -> float:
        prof = dict(base, classes={**base["classes"], "free": dict(base["classes"]["free"])})
        prof["classes"]["free"]["native_overhead"] += extra
        path = tmp_path / f"p{trips}{extra}.yaml"
        path.write_text(yaml.safe_dump(prof))
        g = load(_loop_model(tmp_path, trips))
        return compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), load_hardware(str(path))).time_before

    grown = (before("50", d) - before("5", d)) - (before("50", 0.0) - before("5", 0.0))
    assert grown == pytest.approx(90 * d, rel=1e-6)


@pytest.mark.parametrize("trips, computed, reason", [("5", True, "its trip count is not a constant"),
                                                     (None, False, "no trip count: its condition ends it"),
                                                     (str(2**63 - 1), False, "no trip count: its condition ends it")])
def test_a_loop_without_a_constant_trip_count_is_unknown_with_the_reason(tmp_path, trips, computed, reason):
    """A computed trip count, none, or INT64_MAX (torch.onnx's while loop, as greedy_decode_torchscript has)."""
    g = load(_loop_model(tmp_path, trips, computed=computed))
    loop = _node(g, "loop")
    flops, nbytes, why, runs = control_cost(g, loop)
    assert flops is None and nbytes is None and runs is None and why.startswith(reason)
    s = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), load_hardware("cpu"))
    assert s.unknown_cost_nodes["why"] == {loop.name: why}
    # the loop may take any share of the time: no whole-model estimate rather than one that leaves it out
    assert s.speedup_estimate is None and s.time_before is None
    from xcviz.cost.coverage import unknown_text

    assert f"({loop.name}: {reason}" in unknown_text(s.unknown_cost_nodes)


def test_a_scan_costs_its_body_times_the_scan_length(tmp_path):
    """A running sum over the 6 rows of f32[6,8]: 6 Adds of f32[8] and the row copied out each step."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "row"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["r_out"])],
        "body", [helper.make_tensor_value_info("s_in", T.FLOAT, [8]), helper.make_tensor_value_info("row", T.FLOAT, [8])],
        [helper.make_tensor_value_info("s_out", T.FLOAT, [8]), helper.make_tensor_value_info("r_out", T.FLOAT, [8])])
    path = _save(tmp_path, [helper.make_node("Scan", ["s0", "xs"], ["s", "rs"], body=body, num_scan_inputs=1)],
                 [helper.make_tensor_value_info("s0", T.FLOAT, [8]), helper.make_tensor_value_info("xs", T.FLOAT, [6, 8])],
                 [helper.make_tensor_value_info("s", T.FLOAT, [8]), helper.make_tensor_value_info("rs", T.FLOAT, [6, 8])], [])
    g = load(path)
    assert control_cost(g, _node(g, "scan")) == (6 * ADD_FLOPS, 6 * (ADD_BYTES + 2 * 32), None, (6, 12))


def _if_model(tmp_path, cond) -> str:
    """then: x @ W (128 FLOPs); else: x + x (8 FLOPs)."""
    then = helper.make_graph([helper.make_node("MatMul", ["x", "W"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", T.FLOAT, [1, 8])])
    other = helper.make_graph([helper.make_node("Add", ["x", "x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", T.FLOAT, [1, 8])])
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [1, 8])]
    inits = [nh.from_array(np.ones((8, 8), np.float32), "W")]
    if cond is None:
        inputs.append(helper.make_tensor_value_info("c", T.BOOL, []))
    else:
        inits.append(nh.from_array(np.array(cond), "c"))
    return _save(tmp_path, [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], inputs,
                 [helper.make_tensor_value_info("y", T.FLOAT, [1, 8])], inits)


@pytest.mark.parametrize("cond, flops, nbytes", [(True, MATMUL_FLOPS, MATMUL_BYTES), (False, ADD_FLOPS, ADD_BYTES),
                                                 (None, MATMUL_FLOPS, MATMUL_BYTES)])
def test_an_if_costs_the_taken_branch_or_the_dearer_one(tmp_path, cond, flops, nbytes):
    g = load(_if_model(tmp_path, cond))
    assert control_cost(g, _node(g, "if")) == (flops, nbytes, None, (0, 1))
