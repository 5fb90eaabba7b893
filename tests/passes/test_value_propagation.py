"""Value propagation in shape inference: exported models keep their shapes (checked against onnxruntime)."""
from __future__ import annotations

import glob
import os

import numpy as np
import pytest

from xcviz.ir import TensorType
from xcviz.ir.symbolic import Sym, eval_dim, parse
from xcviz.pipeline import load_graph
from tests.support.paths import TESTS

EXPORTS = sorted(glob.glob(os.path.join(TESTS, "data", "exports", "*.onnx")))
# Loop bodies are not kept by the loader, and NonMaxSuppression's row count depends on the data
DATA_DEPENDENT = {"NonMaxSuppression", "Loop"}


def _dims(graph, inputs) -> dict[str, int]:
    dims = {}
    for v in graph.inputs:
        if v.name in inputs and v.type.shape:
            for d, n in zip(v.type.shape, inputs[v.name].shape):
                if isinstance(d, str):
                    dims[d] = int(n)
    return dims


@pytest.mark.parametrize("path", EXPORTS, ids=lambda p: os.path.basename(p)[:-5])
def test_every_intermediate_shape_equals_onnxruntime(path):
    """Every node output's inferred shape, its symbolic dims bound from the example inputs, equals the
    shape onnxruntime computes for that tensor (all of them made graph outputs)."""
    onnx = pytest.importorskip("onnx", reason="pip install -e '.[onnx]'")
    ort = pytest.importorskip("onnxruntime", reason="pip install onnxruntime")
    graph = load_graph(path)
    inputs = dict(np.load(path.replace(".onnx", ".inputs.npz")))
    dims = _dims(graph, inputs)
    model = onnx.load(path)
    data_dependent = sum(len(n.output) for n in model.graph.node if n.op_type in DATA_DEPENDENT)
    have = {o.name for o in model.graph.output}
    for n in model.graph.node:
        for o in n.output:
            if o and o not in have:
                model.graph.output.append(onnx.helper.make_empty_tensor_value_info(o))
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    got = dict(zip(names, sess.run(None, inputs)))
    by_tensor = {}
    for n, node in zip(model.graph.node, graph.nodes):
        for k, o in enumerate(n.output):
            if o and k < len(node.outputs):
                by_tensor[o] = node.outputs[k]
    checked, unknown = 0, []
    for name, t in by_tensor.items():
        bound = None if t.shape is None else tuple(eval_dim(d, dims) for d in t.shape)
        if bound is None or not all(isinstance(d, int) for d in bound):
            unknown.append(name)  # only a data-dependent size may stay unknown (checked below)
            continue
        assert bound == got[name].shape, f"{name}: inferred {t.shape} -> {bound}, onnxruntime {got[name].shape}"
        checked += 1
    # the data-dependent ops' own outputs and what follows them; nothing else
    assert len(unknown) <= 2 * data_dependent, unknown
    assert checked >= len(by_tensor) - 2 * data_dependent


def test_shape_slices_and_arithmetic_stay_symbolic(tmp_path):
    """Shape(x)[1] + 1 as a Reshape target, Range(0, seq) and ConstantOfShape(Shape(x)) keep expressions."""
    from xcviz.pipeline import load_file as load

    p = tmp_path / "g.yaml"
    p.write_text("""
inputs:
  - {name: x, shape: [batch, seq, 8], dtype: float32}
nodes:
  - {name: s, op: Shape, inputs: [x], attrs: {start: 1, end: 2}}
  - {name: one, op: Const, attrs: {value: [1], dtype: int64}}
  - {name: s1, op: Add, inputs: [s, one]}
  - {name: two, op: Const, attrs: {value: [2], dtype: int64}}
  - {name: s2, op: Mul, inputs: [s1, two]}
  - {name: b, op: Shape, inputs: [x], attrs: {start: 0, end: 1}}
  - {name: m1, op: Const, attrs: {value: [-1], dtype: int64}}
  - {name: tgt, op: Concat, inputs: [b, m1], attrs: {axis: 0}}
  - {name: r, op: Reshape, inputs: [x, tgt]}
  - {name: z, op: ConstantOfShape, inputs: [s2]}
  - {name: zero, op: Const, attrs: {value: 0, dtype: int64}}
  - {name: step, op: Const, attrs: {value: 1, dtype: int64}}
  - {name: seq, op: Squeeze, inputs: [s]}
  - {name: rg, op: Range, inputs: [zero, seq, step]}
outputs: [r, z, rg]
""")
    g = load(str(p))
    out = {n.name: n.outputs[0] for n in g.nodes}
    assert out["r"].shape == ("batch", "8*seq")
    assert out["z"].shape == ("2*seq+2",)
    assert out["rg"].shape == ("seq",)
    assert out["z"].nbytes({"seq": 5}) == 12 * 4


def test_sym_algebra_round_trips():
    a = Sym.of("batch") * Sym.of("seq") * 3 + 12 - Sym.of("seq")
    assert parse(str(a)) == a
    assert a.evaluate({"batch": 2, "seq": 5}) == 2 * 5 * 3 + 12 - 5
    assert (Sym.of("seq") * 96).exact_div(Sym.of("seq") * 2) == 48
    assert (Sym.of("seq") + 1).exact_div(2) is None
    assert parse("N?") == Sym.name("N?")  # a file's odd name stays one name
    assert TensorType(("seq+1", 4), "float32").nbytes({"seq": 3}) == 64


def test_compiled_walk_propagates_the_same_values(monkeypatch):
    """The compiled walk works values out lazily; on the exports it gives the reference loop's shapes
    node for node."""
    from tests.support.infer_spec import inferred
    from xcviz.pipeline import load_file as load

    for path in EXPORTS:
        ref = [tuple(n.outputs) for n in inferred(lambda: load(path).nodes, True)]
        assert [tuple(n.outputs) for n in load(path).nodes] == ref, os.path.basename(path)
