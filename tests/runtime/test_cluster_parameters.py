"""Issue 36, item 2: what is compiled is what runs. Every value a cluster reads from a graph input, a variable
or a fallback op is a parameter of its compiled function, never baked in as a constant; only the graph's own
constants (and values computed from them or from static shapes alone) may fold. A Keras Flatten after an
unknown batch dimension (Reshape(x, Pack(Shape(x)[0], -1))) once baked the image itself into the function."""
from __future__ import annotations

import glob
import os
import re

import numpy as np
import pytest
from tests.support.paths import GRAPHS, ROOT

pytest.importorskip("jax", reason="needs the jax extra")

import xcviz  # noqa: E402
from xcviz.ir import format_ref  # noqa: E402
from xcviz.ops import REGISTRY, SHAPE_CONSUMER, TYPE_VALUE, VOLATILE  # noqa: E402
from xcviz.cost.params import CONSTANT_OPS  # noqa: E402
from xcviz.runtime.execute import bind_inputs, execute  # noqa: E402
from xcviz.runtime.jit import CompileCache, cluster_specs  # noqa: E402
from xcviz.runtime.partial import execute_tolerant  # noqa: E402

TF = os.path.join(ROOT, "tests", "data", "tf_keras")
SHAPE_ONLY = REGISTRY.names(TYPE_VALUE) | REGISTRY.names(SHAPE_CONSUMER)
VOLATILE_OPS = REGISTRY.names(VOLATILE)
CORPUS = sorted(glob.glob(os.path.join(TF, "*_savedmodel"))) + sorted(glob.glob(os.path.join(TF, "*_frozen.pb"))) \
    + [os.path.join(GRAPHS, f) for f in ("detector_mini.onnx", "resnet_block.yaml", "transformer_block.yaml")]
MAIN = re.compile(r"func\.func public @main\((.*?)\) ->")


def known_before_a_call(graph) -> set[str]:
    """The values a compiler may fold: weights and constants, and what is computed from them alone."""
    known = {v.name for v in graph.inputs if v.data is not None}
    for node in graph.nodes:
        refs = [r for r in node.inputs if r]
        if (node.known and node.op in CONSTANT_OPS) or (refs and all(r in known for r in refs)
                                                         and node.op not in VOLATILE_OPS):
            known.update(format_ref(node.name, k) for k in range(len(node.outputs)))
    return known


def runtime_inputs(graph, spec, known: set[str]) -> list[str]:
    """The entries whose values change from call to call and that the cluster reads as values: not one only
    a shape op reads (its static shape is what is read), nor a must-be-constant input itself (a Reshape's
    target, TopK's k: TF compiles those as compile-time constants, keyed by value)."""
    reads: dict[str, list[tuple[str, bool]]] = {}
    for i in spec.members:
        node = graph.nodes[i]
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        static = set(opdef.static_inputs) if opdef is not None else set()
        for slot, r in enumerate(node.inputs):
            if r:
                reads.setdefault(r, []).append((node.op, slot in static))
    return [e for e in spec.entries if e not in known
            and not all(op in SHAPE_ONLY or static for op, static in reads.get(e, []))]


def compiled_parameters(comp, spec) -> set[str]:
    """The entries the compiled function takes as arguments (JAX may still drop one its outputs only forward)."""
    return {spec.entries[p] for p in comp.arg_pos}


@pytest.mark.parametrize("path", CORPUS, ids=os.path.basename)
def test_no_compiled_cluster_takes_fewer_parameters_than_it_has_runtime_inputs(path):
    a = xcviz.analyse(path)
    graph = a.graph
    feeds = bind_inputs(graph, None, 0, None)
    from xcviz.ir import bind_dims

    graph = bind_dims(graph, feeds.dims)
    env = execute_tolerant(graph, feeds).env   # (the parts it can run: the clusters they feed are checked)
    known = known_before_a_call(graph)
    cache = CompileCache()
    checked = 0
    for k, spec in enumerate(cluster_specs(graph, a.clustering.clusters)):
        if not all(e in env and isinstance(env[e], (np.ndarray, np.generic)) for e in spec.entries):
            continue
        try:
            comp, _ = cache.get(graph, spec, env)
        except Exception:  # noqa: BLE001 - a cluster XLA cannot compile runs natively: nothing baked
            continue
        need = runtime_inputs(graph, spec, known)
        params = compiled_parameters(comp, spec)
        assert len(params) >= len(need) and set(need) <= params, (a.clustering.cluster_id(k), set(need) - params)
        checked += 1
    assert checked or not a.clustering.clusters


def test_the_image_after_a_flatten_of_unknown_batch_is_a_parameter():
    """The issue's MobileNetV3Small: `@main() -> tensor<1x1000xf32>`, the image folded in, 14,279× 'measured'."""
    path = os.path.join(TF, "flatten_dynamic_savedmodel")
    a = xcviz.analyse(path)
    (image,) = [v for v in a.graph.inputs if v.data is None]
    assert not isinstance(image.type.shape[0], int)   # saved with an unknown batch
    assert any(n.op == "tf.Shape" for j in a.clustering.clusters[0] for n in [a.graph.nodes[j]])
    feeds = bind_inputs(a.graph, None, 0, None)
    from xcviz.ir import bind_dims

    graph = bind_dims(a.graph, feeds.dims)
    env = execute(graph, feeds, "native", keep_all=True).env
    (spec,) = cluster_specs(graph, a.clustering.clusters)
    comp, _ = CompileCache().get(graph, spec, env)
    assert image.name in spec.entries
    assert image.name in compiled_parameters(comp, spec)
    assert "tensor<1x8x8x3xf32>" in MAIN.search(comp.lowered_text).group(1)   # (once: `@main() -> tensor<1x5xf32>`)
    # and it computes on what it is given: another image, another answer (the NumPy reference's)
    other = dict(env)
    other[image.name] = np.random.default_rng(1).standard_normal(env[image.name].shape).astype(np.float32)
    got = comp(other, spec)
    want = execute(graph, {**dict(feeds), image.name: other[image.name]}, "native", keep_all=True).env
    for r, g in zip(spec.exits, got):
        np.testing.assert_allclose(g, want[r], rtol=1e-4, atol=1e-5)
