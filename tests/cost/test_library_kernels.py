"""Library calls that XLA lowers to several kernels (OpDef.cpu_kernels): predicted as XLA compiles them."""
import pytest

from xcviz import parse_graph


@pytest.mark.parametrize("shape", ["2,2,7,8", "1,4,16,32"])
def test_an_attention_is_predicted_at_the_kernels_xla_makes_of_it(shape):
    """sdpa is a library call of OpDef.cpu_kernels kernels (two dots and the softmax's loops): within one of
    what XLA's optimized HLO has for it compiled alone (6 or 7 by shape; 8 inside a T5 encoder, its key's
    transpose too)."""
    pytest.importorskip("jax", reason="compiling needs JAX: pip install -e '.[jax]'")
    from xcviz.clustering import ClusterOptions, run_clustering
    from xcviz.cost import compute_stats, load_hardware
    from xcviz.runtime.calibrate_ops import Timer
    from xcviz.runtime.jit import CompileCache, cluster_spec

    g = parse_graph(f"graph s(%q: f32[{shape}], %k: f32[{shape}], %v: f32[{shape}]) {{\n"
                    f"  %y: f32[{shape}] = sdpa(%q, %k, %v)\n  return %y\n}}")
    compiled, _ = CompileCache().get(g, cluster_spec(g, [0]), Timer(1).inputs(g))
    stats = compute_stats(g, run_clustering(g, ClusterOptions(min_cluster_size=1)), load_hardware("cpu"))
    assert compiled.kernels >= 6 and abs(stats.clusters_detail[0].kernels - compiled.kernels) <= 1
