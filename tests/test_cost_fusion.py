"""The fusion model against XLA: predicted kernels vs the kernels in XLA's optimized HLO, on small graphs."""
import pytest

from xcviz.cost import compute_stats, load_hardware
from xcviz.clustering import ClusterOptions, run_clustering

jax = pytest.importorskip("jax", reason="the comparison compiles with JAX: pip install -e '.[jax]'")

X = "{name: x, shape: [64, 64], dtype: float32}"
W = "{name: w, shape: [64, 64], dtype: float32, param: true}"
IMG = "{name: x, shape: [1, 8, 16, 16], dtype: float32}"
CASES = {
    # elementwise chain: one loop fusion
    "chain": ([X], ["{name: a, op: relu, inputs: [x]}", "{name: b, op: exp, inputs: [a]}",
                    "{name: c, op: add, inputs: [a, b]}"], 1),
    # a dot reads its operands from memory: the producer's fusion, the dot, its epilogue
    "matmul": ([X, W], ["{name: a, op: tanh, inputs: [x]}", "{name: m, op: matmul, inputs: [a, w]}",
                        "{name: r, op: sigmoid, inputs: [m]}"], 3),
    # bitcasts are free
    "reshape": (["{name: x, shape: [8, 8], dtype: float32}"],
                ["{name: a, op: neg, inputs: [x]}", "{name: r, op: reshape, inputs: [a], attrs: {shape: [64]}}"], 1),
    # a reduction takes its elementwise producers in
    "reduce": ([X], ["{name: a, op: mul, inputs: [x, x]}",
                     "{name: r, op: reduce_sum, inputs: [a], attrs: {axes: [1]}}"], 1),
    # softmax: four kernels on CPU (max, sum, the divisor, the scaling)
    "softmax": ([X], ["{name: s, op: softmax, inputs: [x]}"], 4),
    # a 3x3 convolution: the image and the weight copied to the library's layout, the convolution, its
    # result copied back
    "conv": ([IMG, "{name: w, shape: [8, 8, 3, 3], dtype: float32, param: true}"],
             ["{name: c, op: conv2d, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}"], 4),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_predicted_kernels_equal_xla(case, tmp_path):
    from xcviz.runtime.validate import validate_graph
    from xcviz.loaders import load

    inputs, nodes, expected = CASES[case]
    p = tmp_path / "g.yaml"
    p.write_text("name: g\ninputs:\n" + "".join(f"  - {i}\n" for i in inputs) + "nodes:\n"
                 + "".join(f"  - {n}\n" for n in nodes) + f"outputs: [{nodes[-1].split(',')[0][7:]}]\n")
    g = load(str(p))
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    s = compute_stats(g, c, load_hardware("cpu"))
    report = validate_graph(g, c, repeats=1)
    assert [r.kernels_after for r in report.clusters] == [expected]
    assert [d.kernels for d in s.clusters_detail] == [expected]
