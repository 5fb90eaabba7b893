"""Differential property test (design habit 7): native == hybrid == jit over random small graphs and shapes.

Graphs are drawn as xcviz YAML mappings (graph_from_mapping + finalize, the loaders' own path): elementwise
ops, matmul, reductions, softmax, layernorm, layout ops (transpose, reshape, concat), ops XLA cannot compile
(Print, CheckNumerics, PyFunc, custom_nms) and `compile: false` nodes, so hybrid runs several clusters with
native nodes between them; the min cluster size is drawn too. Outputs must agree within the dtype-aware
tolerances of `compare` (float32 1e-4, float64 1e-9 relative), with identical shapes and dtypes.

40 derandomized examples by default (CI-stable, ~10 s); XCVIZ_DIFF_EXAMPLES=2000 runs longer and random.
"""
from __future__ import annotations

import os

import numpy as np
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import xcviz
from xcviz.loaders.build import finalize
from xcviz.loaders.schema import graph_from_mapping
from xcviz.runtime.execute import bind_inputs, execute
from xcviz.runtime.jit import CompileCache
from xcviz.runtime.measure import compare

EXAMPLES = int(os.environ.get("XCVIZ_DIFF_EXAMPLES", "40"))
DIFF = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 40, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

UNARY = ["relu", "tanh", "sigmoid", "neg", "abs", "gelu", "sin", "elu", "softplus", "identity", "leaky_relu"]
BINARY = ["add", "sub", "mul", "max", "min"]
REDUCE = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min"]
FALLBACK = ["Print", "CheckNumerics", "PyFunc", "custom_nms"]   # no XLA kernel: always native
KINDS = (["unary"] * 4 + ["binary"] * 3 + ["matmul"] * 3 + ["reduce"] * 2 + ["softmax"] * 2 + ["layernorm", "transpose",
         "reshape", "concat"] + ["fallback"] * 2)


@st.composite
def graph_docs(draw):
    dtype = draw(st.sampled_from(["float32", "float32", "float64"]))
    rank = draw(st.integers(2, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    inputs = [{"name": "x0", "shape": shape, "dtype": dtype}]
    tensors: list[tuple[str, list[int]]] = [("x0", shape)]
    nodes: list[dict] = []

    def new_input(shp):
        name = f"w{len(inputs)}"
        inputs.append({"name": name, "shape": list(shp), "dtype": dtype})
        return name

    for i in range(draw(st.integers(2, 9))):
        # recent tensors are likelier operands: long chains, but also fan-out and reuse
        src, shp = tensors[draw(st.integers(max(0, len(tensors) - 4), len(tensors) - 1))]
        kind = draw(st.sampled_from(KINDS))
        node: dict = {"name": f"n{i}"}
        out = list(shp)
        if kind == "unary":
            node.update(op=draw(st.sampled_from(UNARY)), inputs=[src])
        elif kind == "binary":
            same = [t for t, s in tensors if s == shp]
            other = draw(st.sampled_from(same + [None]))
            node.update(op=draw(st.sampled_from(BINARY)), inputs=[src, other or new_input(shp[-1:])])
        elif kind == "matmul":
            out = shp[:-1] + [draw(st.integers(1, 4))]
            node.update(op="matmul", inputs=[src, new_input([shp[-1], out[-1]])])
        elif kind == "reduce":
            out = shp[:-1] + [1]
            node.update(op=draw(st.sampled_from(REDUCE)), inputs=[src], attrs={"axes": [-1], "keepdims": 1})
        elif kind == "softmax":
            node.update(op=draw(st.sampled_from(["softmax", "log_softmax"])), inputs=[src], attrs={"axis": -1})
        elif kind == "layernorm":
            node.update(op="layernorm", inputs=[src, new_input(shp[-1:]), new_input(shp[-1:])], attrs={"axis": -1})
        elif kind == "transpose":
            perm = list(range(len(shp)))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            out = [shp[p] for p in perm]
            node.update(op="transpose", inputs=[src], attrs={"perm": perm})
        elif kind == "reshape":
            out = shp[:-2] + [shp[-2] * shp[-1]] if len(shp) == 3 else [shp[0], shp[1], 1]
            node.update(op="reshape", inputs=[src], attrs={"shape": out})
        elif kind == "concat":
            same = [t for t, s in tensors if s == shp]
            out = shp[:-1] + [2 * shp[-1]]
            node.update(op="concat", inputs=[src, draw(st.sampled_from(same))], attrs={"axis": -1})
        else:
            op = draw(st.sampled_from(FALLBACK))
            node.update(op=op, inputs=[src])
            if op == "custom_nms":
                node.update(shape=list(shp), dtype=dtype)
        if kind != "fallback" and draw(st.integers(0, 9)) == 0:
            node["compile"] = False
        nodes.append(node)
        tensors.append((node["name"], out))
    used = {r for n in nodes for r in n["inputs"]}
    outputs = [n["name"] for n in nodes if n["name"] not in used]
    extra = draw(st.lists(st.sampled_from([n["name"] for n in nodes]), max_size=2))
    outputs += [o for o in dict.fromkeys(extra) if o not in outputs]
    return {"name": "diff", "inputs": inputs, "nodes": nodes, "outputs": outputs}


def build(doc: dict):
    return finalize(graph_from_mapping(doc, "diff.yaml"))


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
@given(doc=graph_docs(), min_size=st.integers(1, 4), seed=st.integers(0, 2**16))
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
