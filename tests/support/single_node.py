"""One ONNX node run by an outside reference (onnx's ReferenceEvaluator or onnxruntime) and by xcviz: the NumPy
implementation, the JAX lowering under jax.jit, and the whole path (ONNX loader, shape inference, execute)."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY


def model(op_type: str, inputs: list, n_out: int, opset: int, consts: tuple[int, ...] = (), **attrs):
    """A one-node model; the inputs in slots `consts` are initializers (constants), the others graph inputs."""
    from onnx import helper, numpy_helper

    names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, (n, v) in enumerate(zip(names, inputs)) if v is not None and k not in consts],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        [numpy_helper.from_array(np.asarray(v), n) for k, (n, v) in enumerate(zip(names, inputs))
         if v is not None and k in consts])
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

    from xcviz.ops.arrays import jnp

    jnp()  # 64-bit types on before tracing, as xcviz's runtime does
    opdef = REGISTRY.get(op_type)
    a = {**opdef.attrs, **attrs, "_num_outputs": n_out}
    runs = {"native": opdef.native(a, *inputs)}
    if opdef.jax is not None:  # static inputs (lengths, axes) are compile-time constants, as XLA requires
        traced = [k for k, v in enumerate(inputs) if v is not None and k not in opdef.static_inputs]

        def fn(*xs):
            args = list(inputs)
            for k, x in zip(traced, xs):
                args[k] = x
            return opdef.jax(a, *args)

        runs["jax"] = jax.jit(fn)(*[inputs[k] for k in traced])
    return {k: [np.asarray(x) for x in (v if isinstance(v, (tuple, list)) else [v])][:n_out] for k, v in runs.items()}


def check(op_type: str, inputs: list, n_out: int, opset: int, engine: str = "onnx", rtol: float = 1e-4,
          atol: float = 1e-5, **attrs) -> None:
    """xcviz's implementations, and the loaded graph's inferred output types, agree with the reference."""
    from xcviz.passes.prepare import prepare
    from xcviz.loaders.onnx_model import graph_from_model
    from xcviz.ir import canonical_dtype
    from xcviz.runtime.execute import execute

    want = reference(op_type, inputs, n_out, opset, engine, **attrs)
    got = xcviz_outputs(op_type, inputs, n_out, **attrs)
    static = REGISTRY.get(op_type).static_inputs  # shape-deciding inputs are constants in real exports
    g = prepare(graph_from_model(model(op_type, inputs, n_out, opset, static, **attrs), "single_node"), onnx=True)
    weights = {v.name: np.asarray(v.data) for v in g.inputs if v.data is not None}
    got["graph"] = list(execute(g, {**feeds(inputs), **weights}, "native").outputs.values())
    inferred = [(t.shape, t.dtype) for t in g.nodes[0].outputs]
    assert inferred == [(tuple(w.shape), canonical_dtype(str(w.dtype))) for w in want], inferred
    for mode, outs in got.items():
        assert len(outs) == len(want), mode
        for k, (x, w) in enumerate(zip(outs, want)):
            assert x.shape == w.shape and x.dtype == w.dtype, (mode, k, x.shape, w.shape, x.dtype, w.dtype)
            np.testing.assert_allclose(x.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"{mode} output {k}")
