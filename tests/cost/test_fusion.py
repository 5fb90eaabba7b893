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
    # the CPU rules of cost.fusion_cpu, one case each:
    # a reduced dimension longer than 32: the tree reduction rewriter's reduce-window, then the reduce
    "tree_reduce": (["{name: x, shape: [16, 64], dtype: float32}"],
                    ["{name: r, op: reduce_sum, inputs: [x], attrs: {axes: [1]}}"], 2),
    # a mean's last step fuses into its reader: one kernel
    "mean_short": (["{name: x, shape: [16, 16], dtype: float32}"],
                   ["{name: r, op: reduce_mean, inputs: [x], attrs: {axes: [1]}}"], 1),
    # from 4096 elements a YNNPACK reduction, and the mean's scaling a fusion after it
    "mean_ynn": ([X], ["{name: r, op: reduce_mean, inputs: [x], attrs: {axes: [1]}}"], 2),
    # layer norm over short rows: mean, variance with rsqrt, the output
    "layernorm_short": (["{name: x, shape: [16, 16], dtype: float32}", "{name: g, shape: [16], dtype: float32, param: true}",
                         "{name: b, shape: [16], dtype: float32, param: true}"],
                        ["{name: n, op: layernorm, inputs: [x, g, b], attrs: {axis: -1}}"], 3),
    # softmax over rows longer than 32: two tree-split reductions
    "softmax_long": (["{name: x, shape: [16, 64], dtype: float32}"],
                     ["{name: s, op: softmax, inputs: [x], attrs: {axis: -1}}"], 6),
    # a Gemm's transposed weight is copied; a row vector's bias add fuses into the dot (output fusion)
    "gemm_transb": (["{name: x, shape: [1, 64], dtype: float32}", "{name: w, shape: [10, 64], dtype: float32, param: true}",
                     "{name: b, shape: [10], dtype: float32, param: true}"],
                    ["{name: g, op: gemm, inputs: [x, w, b], attrs: {transB: 1}}"], 2),
    # several rows: the bias add is a fusion of its own
    "gemm_bias": (["{name: x, shape: [4, 64], dtype: float32}", "{name: w, shape: [64, 10], dtype: float32, param: true}",
                   "{name: b, shape: [10], dtype: float32, param: true}"],
                  ["{name: g, op: gemm, inputs: [x, w, b]}"], 2),
    # a padded max pool (slices of a pad: a loop fusion) writes its padded input first
    "maxpool_pads": ([IMG], ["{name: p, op: maxpool, inputs: [x], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}}"], 2),
    # convolution, bias and relu: the weight copied (1x1 too), the bias add and relu fused into the output's
    # transposing fusion
    "conv_bias_relu": ([IMG, "{name: w, shape: [8, 8, 1, 1], dtype: float32, param: true}",
                        "{name: b, shape: [8], dtype: float32, param: true}"],
                       ["{name: c, op: conv2d, inputs: [x, w, b]}", "{name: r, op: relu, inputs: [c]}"], 4),
    # a reduce-window (the first step of a tree split) reads memory: the product it reduces is written first
    "tree_reads_memory": (["{name: x, shape: [16, 64], dtype: float32}"],
                          ["{name: a, op: mul, inputs: [x, x]}", "{name: s, op: softmax, inputs: [a], attrs: {axis: -1}}"], 7),
    # a local response normalisation: the padded squares, then the result (the relu recomputed in both) ...
    "lrn": ([IMG], ["{name: a, op: relu, inputs: [x]}", "{name: l, op: lrn, inputs: [a], attrs: {size: 5}}"], 2),
    # ... but between a convolution and a pooling the channels-last relu is first transposed into memory
    # (image and weight copies, the convolution, the relu, the padded squares, the pooled result)
    "lrn_after_conv": ([IMG, "{name: w, shape: [32, 8, 3, 3], dtype: float32, param: true}"],
                       ["{name: c, op: conv2d, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}",
                        "{name: a, op: relu, inputs: [c]}", "{name: l, op: lrn, inputs: [a], attrs: {size: 5}}",
                        "{name: m, op: maxpool, inputs: [l], attrs: {kernel_shape: [3, 3], strides: [2, 2]}}"], 6),
    # a pooling read only by a padded pooling fuses into its pad (the pad, the second pooling) ...
    "pool_of_pool": ([IMG], ["{name: p, op: maxpool, inputs: [x], attrs: {kernel_shape: [3, 3], strides: [2, 2]}}",
                             "{name: q, op: maxpool, inputs: [p], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}}"], 2),
    # an image reshaped in the cluster is copied to the library's layout like one from outside
    "reshaped_image": (["{name: x, shape: [1, 8, 256], dtype: float32}",
                        "{name: w, shape: [8, 8, 3, 3], dtype: float32, param: true}"],
                       ["{name: r, op: reshape, inputs: [x], attrs: {shape: [1, 8, 16, 16]}}",
                        "{name: c, op: conv2d, inputs: [r, w], attrs: {pads: [1, 1, 1, 1]}}"], 4),
    # a YNNPACK reduction (4096 elements or more) takes in a YNNPACK convolution (32 channels or more) that
    # only it reads, with its bias and relu; the operand copies stay, and the mean's scaling follows it
    "ynn_takes_conv": ([IMG, "{name: w, shape: [32, 8, 3, 3], dtype: float32, param: true}",
                        "{name: b, shape: [32], dtype: float32, param: true}"],
                       ["{name: c, op: conv2d, inputs: [x, w, b], attrs: {pads: [1, 1, 1, 1]}}",
                        "{name: r, op: relu, inputs: [c]}", "{name: g, op: global_avgpool, inputs: [r]}"], 4),
    # an Eigen convolution (16 channels) stays a kernel of its own
    "ynn_leaves_eigen_conv": ([IMG, "{name: w, shape: [16, 8, 3, 3], dtype: float32, param: true}",
                               "{name: b, shape: [16], dtype: float32, param: true}"],
                              ["{name: c, op: conv2d, inputs: [x, w, b], attrs: {pads: [1, 1, 1, 1]}}",
                               "{name: r, op: relu, inputs: [c]}", "{name: g, op: global_avgpool, inputs: [r]}"], 5),
}
# clusters with two outputs: a channels-last value leaving them is written, then copied to the graph's layout
# (conv_two_exits: image, 2 weights, 2 convolutions, r for the second convolution, r and r2 written and copied)
MULTI = {
    "conv_two_exits": ([IMG, "{name: w, shape: [8, 8, 3, 3], dtype: float32, param: true}",
                        "{name: w2, shape: [8, 8, 3, 3], dtype: float32, param: true}"],
                       ["{name: c, op: conv2d, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}",
                        "{name: r, op: relu, inputs: [c]}", "{name: c2, op: conv2d, inputs: [r, w2], attrs: {pads: [1, 1, 1, 1]}}",
                        "{name: r2, op: relu, inputs: [c2]}"], ["r", "r2"], 10),
    # a channels-last value leaving through a reshape is written in the reshaped layout directly: no copy
    # (image and weight copies, the convolution, the sigmoid written and copied, the reshaped relu)
    "reshaped_exit": ([IMG, "{name: w, shape: [8, 8, 3, 3], dtype: float32, param: true}"],
                      ["{name: c, op: conv2d, inputs: [x, w], attrs: {pads: [1, 1, 1, 1]}}",
                       "{name: g, op: sigmoid, inputs: [c]}", "{name: r, op: relu, inputs: [c]}",
                       "{name: z, op: reshape, inputs: [r], attrs: {shape: [1, 8, 4, 64]}}"], ["g", "z"], 6),
    # ... but one read by something else too is written once for both (the first pooling, the pad, the
    # second pooling)
    "pool_twice_read": ([IMG], ["{name: p, op: maxpool, inputs: [x], attrs: {kernel_shape: [3, 3], strides: [2, 2]}}",
                                "{name: q, op: maxpool, inputs: [p], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1]}}"],
                        ["p", "q"], 3),
    # a cheap value a dot reads through a reshape and that leaves the cluster is computed twice (XLA
    # duplicates it into both fusions) ...
    "duplicate": (["{name: x, shape: [1, 64, 64], dtype: float32}", W],
                  ["{name: a, op: relu, inputs: [x]}", "{name: m, op: matmul, inputs: [a, w]}"], ["a", "m"], 3),
    # ... but one buffer serves both where the dot reads the matrix as it is
    "shared": ([X, W], ["{name: a, op: relu, inputs: [x]}", "{name: m, op: matmul, inputs: [a, w]}"], ["a", "m"], 2),
    # and an expensive value is never computed twice
    "no_duplicate": (["{name: x, shape: [1, 64, 64], dtype: float32}", W],
                     ["{name: a, op: exp, inputs: [x]}", "{name: m, op: matmul, inputs: [a, w]}"], ["a", "m"], 2),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES) + sorted(MULTI))
def test_predicted_kernels_equal_xla(case, tmp_path):
    from xcviz.runtime.validate import validate_graph
    from xcviz.pipeline import load_file as load

    if case in MULTI:
        inputs, nodes, outputs, expected = MULTI[case]
    else:
        (inputs, nodes, expected), outputs = CASES[case], [CASES[case][1][-1].split(',')[0][7:]]
    p = tmp_path / "g.yaml"
    p.write_text("name: g\ninputs:\n" + "".join(f"  - {i}\n" for i in inputs) + "nodes:\n"
                 + "".join(f"  - {n}\n" for n in nodes) + f"outputs: [{', '.join(outputs)}]\n")
    g = load(str(p))
    c = run_clustering(g, ClusterOptions(min_cluster_size=1))
    s = compute_stats(g, c, load_hardware("cpu"))
    report = validate_graph(g, c, repeats=1)
    assert [r.kernels_after for r in report.clusters] == [expected]
    assert [d.kernels for d in s.clusters_detail] == [expected]
