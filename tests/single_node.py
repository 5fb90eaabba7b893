"""One ONNX node run by an outside reference (onnx's ReferenceEvaluator or onnxruntime) and by xcviz: the NumPy
implementation, the JAX lowering under jax.jit, and the whole path (ONNX loader, shape inference, execute)."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY


def model(op_type: str, inputs: list, n_out: int, opset: int, **attrs):
    from onnx import helper

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in zip(names, inputs) if v is not None],
        [helper.make_empty_tensor_value_info(o) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def feeds(inputs: list) -> dict:
    return {f"i{k}": v for k, v in enumerate(inputs) if v is not None}


def reference(op_type: str, inputs: list, n_out: int, opset: int, engine: str = "onnx", **attrs) -> list:
    m = model(op_type, inputs, n_out, opset, **attrs)
    if engine == "ort":
        ort = pytest.importorskip("onnxruntime", reason="pip install onnxruntime to compare with it")
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return sess.run(None, feeds(inputs))
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(m).run(None, feeds(inputs))


def xcviz_outputs(op_type: str, inputs: list, n_out: int, **attrs) -> dict[str, list]:
    """{"native": [...], "jax": [...]} (jax only for an op XLA compiles), each output as a NumPy array."""
    import jax

    opdef = REGISTRY.get(op_type)
    a = {**opdef.attrs, **attrs, "_num_outputs": n_out}
    runs = {"native": opdef.native(a, *inputs)}
    if opdef.jax is not None:
        runs["jax"] = jax.jit(lambda *xs: opdef.jax(a, *xs))(*inputs)
    return {k: [np.asarray(x) for x in (v if isinstance(v, (tuple, list)) else [v])][:n_out] for k, v in runs.items()}


def check(op_type: str, inputs: list, n_out: int, opset: int, engine: str = "onnx", rtol: float = 1e-4,
          atol: float = 1e-5, **attrs) -> None:
    """xcviz's implementations, and the loaded graph's inferred output types, agree with the reference."""
    from xcviz.loaders.build import finalize
    from xcviz.loaders.onnx_model import graph_from_model
    from xcviz.runtime.execute import execute

    want = reference(op_type, inputs, n_out, opset, engine, **attrs)
    got = xcviz_outputs(op_type, inputs, n_out, **attrs)
    g = finalize(graph_from_model(model(op_type, inputs, n_out, opset, **attrs), "single_node"), onnx=True)
    got["graph"] = list(execute(g, feeds(inputs), "native").outputs.values())
    from xcviz.ir import canonical_dtype

    inferred = [(t.shape, t.dtype) for t in g.nodes[0].outputs]
    assert inferred == [(tuple(w.shape), canonical_dtype(str(w.dtype))) for w in want], inferred
    for mode, outs in got.items():
        assert len(outs) == len(want), mode
        for k, (x, w) in enumerate(zip(outs, want)):
            assert x.shape == w.shape and x.dtype == w.dtype, (mode, k, x.shape, w.shape, x.dtype, w.dtype)
            np.testing.assert_allclose(x.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"{mode} output {k}")
