"""The newer reductions, normalisations and LpPool (ops/reduce.py, norm.py, pooling.py) beyond ONNX's node tests:
older-opset forms, integer and infinite inputs, opset-18 GroupNormalization and LpPool with p != 2, each run
natively and under jax.jit against onnxruntime (or, for CumProd, which onnxruntime does not run, onnx's reference
evaluator)."""
from __future__ import annotations

import numpy as np
import pytest

ort = pytest.importorskip("onnxruntime", reason="pip install -e '.[dev]' to compare with onnxruntime")
from onnx import helper as h, numpy_helper  # noqa: E402

from xcviz.conformance import Case, run_case  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
XI = RNG.integers(-5, 5, (2, 3, 4)).astype(np.int32)
XINF = X.copy()
XINF[0, 0, :] = -np.inf
XINF[1, 1, 1] = np.inf
XZ = RNG.integers(-3, 3, (3, 5)).astype(np.float32)  # zeros in it: an exclusive product must not divide
XG = RNG.standard_normal((2, 6, 4, 3)).astype(np.float32)
XP = RNG.standard_normal((1, 2, 7, 7)).astype(np.float32)
AX = np.array([0, 2], np.int64)


def _case(op, ins, attrs, opset, const=()):
    """A one-node model; its expected outputs from onnxruntime, else onnx.reference. Inputs in `const` are
    initializers (the shape-deciding ones XLA needs static)."""
    names = [f"i{k}" for k in range(len(ins))]
    ttype = h.np_dtype_to_tensor_dtype
    graph = h.make_graph(
        [h.make_node(op, names, ["y"], **attrs)], "g",
        [h.make_tensor_value_info(names[k], ttype(v.dtype), v.shape) for k, v in enumerate(ins) if k not in const],
        [h.make_tensor_value_info("y", ttype(ins[0].dtype), None)],
        [numpy_helper.from_array(ins[k], names[k]) for k in const])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 21 else 10
    feeds = {names[k]: v for k, v in enumerate(ins) if k not in const}
    try:
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    except Exception:  # noqa: BLE001 - an op onnxruntime does not register: onnx's own reference decides
        from onnx.reference import ReferenceEvaluator

        want = ReferenceEvaluator(model).run(None, feeds)
    return Case("", op, model.SerializeToString(), list(feeds.values()), want, 1e-4, 1e-5, op)


CASES = {
    **{f"{op}-opset13-attr": (op, [X], dict(axes=[1], keepdims=0), 13, ())
       for op in ("ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp")},
    **{f"{op}-opset18-input": (op, [X, AX], dict(keepdims=1), 18, (1,))
       for op in ("ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSumExp")},
    **{f"{op}-int32": (op, [XI], dict(axes=[1], keepdims=0), 13, ()) for op in ("ReduceSumSquare", "ReduceL1", "ReduceL2")},
    "ReduceLogSum-opset13": ("ReduceLogSum", [np.abs(X) + 0.1], dict(axes=[1], keepdims=0), 13, ()),
    "ReduceLogSumExp-inf": ("ReduceLogSumExp", [XINF], dict(axes=[2]), 13, ()),
    "ReduceLogSumExp-large": ("ReduceLogSumExp", [X * 100], dict(axes=[2]), 13, ()),
    **{f"CumProd-ex{ex}-rev{rv}": ("CumProd", [XZ, np.array(1, np.int64)], dict(exclusive=ex, reverse=rv), 24, (1,))
       for ex in (0, 1) for rv in (0, 1)},
    "CumProd-int32-neg-axis": ("CumProd", [XZ.astype(np.int32), np.array(-2, np.int64)], dict(exclusive=1), 24, (1,)),
    "LpNormalization-p1-negatives": ("LpNormalization", [X], dict(axis=1, p=1), 22, ()),
    "MVN-axes": ("MeanVarianceNormalization", [XG], dict(axes=[1, 3]), 13, ()),
    "GroupNorm-21-per-channel": ("GroupNormalization", [XG, X[0, 0, :3].repeat(2), X[1, 1, :3].repeat(2)],
                                 dict(num_groups=3, epsilon=1e-3), 21, ()),
    "GroupNorm-18-per-group": ("GroupNormalization", [XG, X[0, 0, :3], X[1, 1, :3]], dict(num_groups=3), 18, ()),
    "RMS-fp16": ("RMSNormalization", [X.astype(np.float16), np.ones((4,), np.float16)], {}, 23, ()),
    "LpPool-p3-pads": ("LpPool", [XP], dict(kernel_shape=[3, 3], p=3, strides=[2, 2], pads=[1, 1, 1, 1]), 18, ()),
    "LpPool-p1-ceil": ("LpPool", [XP], dict(kernel_shape=[3, 3], p=1, strides=[2, 2], ceil_mode=1), 18, ()),
    "LpPool-opset11": ("LpPool", [XP], dict(kernel_shape=[2, 2], strides=[2, 2]), 11, ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_native_and_jit_match_the_reference(name):
    op, ins, attrs, opset, const = CASES[name]
    case = _case(op, ins, attrs, opset, const)
    assert run_case(case, "native") == ("pass", None)
    assert run_case(case, "jit") == ("pass", None)


def test_log_reductions_refuse_integers_rather_than_guess():
    from xcviz.ops import REGISTRY, Unsupported

    for name in ("reduce_log_sum", "reduce_log_sum_exp"):
        with pytest.raises(Unsupported, match="cast the input|float"):
            REGISTRY.ops[name].native({"axes": [1], "keepdims": 1}, XI)
