"""One ONNX op in a one-node model, run through xcviz's conformance path (loader, natively and, where XLA compiles
the op, under jax.jit) against onnxruntime and onnx's reference evaluator: the op tests of tests/ops/ that go beyond
ONNX's node tests. Callers skip first where onnx or onnxruntime is missing (pytest.importorskip)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from xcviz.conformance import Case, run_case
from xcviz.ops import REGISTRY

OPSET = {"BitCast": 26, "Det": 22, "MelWeightMatrix": 17, "TfIdfVectorizer": 9, "StringConcat": 20,
         "RegexFullMatch": 20}


def op_model(op_type: str, inputs: list[np.ndarray], **attrs) -> bytes:
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip(names, inputs)]
    out = {"BitCast": attrs.get("to"), "MelWeightMatrix": TensorProto.FLOAT, "TfIdfVectorizer": TensorProto.FLOAT,
           "StringConcat": TensorProto.STRING, "RegexFullMatch": TensorProto.BOOL}
    out = out.get(op_type, vis[0].type.tensor_type.elem_type)
    graph = helper.make_graph([node], op_type.lower(), vis, [helper.make_tensor_value_info("y", out, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET[op_type])]).SerializeToString()


def ort_output(model: bytes, inputs: list[np.ndarray]):
    opts = ort.SessionOptions()
    opts.log_severity_level = 4
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0]


def check_op(op_type: str, inputs: list[np.ndarray], rtol=1e-5, atol=1e-6, reference=True, use_ort=True, modes=None,
           **attrs):
    """xcviz natively (and under jit where the op is claimed) against onnxruntime; onnx's reference agrees (and
    decides alone where onnxruntime has no kernel: float64 Det)."""
    model = op_model(op_type, inputs, **attrs)
    want = np.asarray(ort_output(model, inputs) if use_ort else
                      ReferenceEvaluator(model).run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0])
    if reference and use_ort:
        ref = ReferenceEvaluator(model).run(None, {f"x{i}": a for i, a in enumerate(inputs)})[0]
        assert np.asarray(ref).tolist() == want.tolist() if want.dtype.kind in "OUb" else \
            np.allclose(ref, want, rtol=rtol, atol=atol, equal_nan=True)
    case = Case(REGISTRY.get(op_type).name, op_type, model, [numpy_helper.from_array(a) for a in inputs],
                [numpy_helper.from_array(want)], rtol, atol, op_type)
    strings = any(a.dtype.kind == "O" for a in inputs)  # XLA has no string type: native only (refused under jit)
    modes = modes or (["native", "jit"] if REGISTRY.get(op_type).devices and not strings else ["native"])
    for mode in modes:
        assert run_case(case, mode) == ("pass", None), (mode, attrs)
    return want


def refused(op_type: str, inputs: list[np.ndarray], run: str = "native", **attrs) -> str:
    case = Case(REGISTRY.get(op_type).name, op_type, op_model(op_type, inputs, **attrs),
                [numpy_helper.from_array(a) for a in inputs], [], 0, 0, op_type)
    status, why = run_case(case, run)
    assert status == "unsupported", (status, why)
    return why
