"""The bitwise ops, Celu/Mish/Shrink/PRelu, CastLike, EyeLike and SpaceToDepth beyond ONNX's fixed node-test inputs:
seeded random inputs and attributes the node tests leave out (shift counts past the bit width, negative k, blocksize
3, a per-channel PRelu slope), each run native and jit and compared with onnx's reference evaluator; what xcviz
cannot run is refused, never wrong."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.conformance import Case, run_case

onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

RNG = np.random.default_rng(12)


def _case(op_type: str, inputs: list[np.ndarray], rtol: float = 1e-5, atol: float = 1e-6, **attrs) -> Case:
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attrs)
    vis = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for n, a in zip(names, inputs)]
    out = helper.make_tensor_value_info("y", 0, None)
    model = helper.make_model(helper.make_graph([node], op_type, vis, [out]),
                              opset_imports=[helper.make_opsetid("", 21)])
    expected = ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))
    return Case(op_type, op_type, model.SerializeToString(), [numpy_helper.from_array(a) for a in inputs],
                [numpy_helper.from_array(np.asarray(e)) for e in expected], rtol, atol, op_type)


def _ints(dtype, shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


CASES = [
    *[_case("BitShift", [_ints(dt, (3, 5)), RNG.integers(0, np.dtype(dt).itemsize * 8 + 3, (5,)).astype(dt)],
            direction=d)
      for dt in (np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int32, np.int64) for d in ("LEFT", "RIGHT")],
    _case("BitShift", [_ints(np.int16, (4, 4)), RNG.integers(-20, 20, (4, 4)).astype(np.int16)], direction="RIGHT"),
    _case("BitwiseAnd", [_ints(np.int64, (2, 3, 4)), _ints(np.int64, (3, 1))]),
    _case("BitwiseOr", [_ints(np.uint32, (2, 3)), _ints(np.uint32, ())]),
    _case("BitwiseXor", [_ints(np.int8, (6,)), _ints(np.int8, (6,))]),
    _case("BitwiseNot", [_ints(np.uint64, (2, 5))]),
    _case("Celu", [RNG.normal(0, 3, (3, 4)).astype(np.float32)], alpha=2.5),
    _case("Mish", [np.concatenate([RNG.normal(0, 4, 20), [-100, 100, 0]]).astype(np.float32)]),
    _case("Mish", [RNG.normal(0, 2, (2, 6))]),
    _case("Shrink", [RNG.normal(0, 2, (5, 5)).astype(np.float32)], lambd=1.5, bias=0.25),
    _case("Shrink", [RNG.integers(-10, 10, (12,)).astype(np.int32)], lambd=2.0, bias=1.0),
    _case("PRelu", [RNG.normal(0, 1, (2, 3, 4, 4)).astype(np.float32), RNG.random((3, 1, 1)).astype(np.float32)]),
    _case("PRelu", [RNG.normal(0, 1, (2, 5)), np.array(0.2)]),
    *[_case("EyeLike", [np.zeros(s, np.float32)], k=k) for s in ((3, 5), (5, 3)) for k in (-2, 0, 1, 4, 7)],
    _case("EyeLike", [np.zeros((4, 4), np.int32)], dtype=onnx.TensorProto.DOUBLE, k=-1),
    *[_case("SpaceToDepth", [RNG.normal(0, 1, (2, 2, 6, 9)).astype(np.float32)], blocksize=3, mode=m)
      for m in ("DCR", "CRD")],
    _case("CastLike", [RNG.normal(0, 50, (7,)).astype(np.float32), np.zeros((2,), np.int32)]),
    _case("CastLike", [RNG.normal(0, 50, (7,)).astype(np.float64), np.zeros((), np.float16)], rtol=1e-3),
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.onnx_op}-{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("mode", ["native", "jit"])
def test_matches_onnx_reference(case, mode):
    assert run_case(case, mode) == ("pass", None)


def _prelu_model(slope_shape) -> bytes:
    return helper.make_model(helper.make_graph(
        [helper.make_node("PRelu", ["x", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, (2, 3)),
         helper.make_tensor_value_info("s", onnx.TensorProto.FLOAT, slope_shape)],
        [helper.make_tensor_value_info("y", 0, None)]), opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def test_a_slope_that_does_not_broadcast_to_x_is_refused_not_guessed():
    """ONNX broadcasts PRelu's slope one way only: a slope that would grow X (or cannot broadcast) is refused."""
    x = np.ones((2, 3), np.float32)
    for bad in ((2, 3, 1), (3, 1), (2, 3, 3)):
        s = np.ones(bad, np.float32)
        model = _prelu_model(bad)
        for mode in ("native", "jit"):
            status, why = run_case(Case("prelu", "bad", model, [x, s], [x], 0.0, 0.0, "PRelu"), mode)
            assert status == "unsupported" and "does not broadcast" in why, (bad, mode, why)


def test_swish_alpha_elu_near_zero_and_bfloat16_matmul_match_onnx_reference():
    """Wrong numbers the whole node suite found through the command line: Swish's alpha (opset 24) ignored, Elu
    as exp(x) - 1 (no precision left near 0), a bfloat16 MatMul on NumPy handing float32 back."""
    onnx = pytest.importorskip("onnx")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from xcviz.conformance import Case, run_case

    def check(op, opset, inputs, **attrs):
        names = [f"x{i}" for i in range(len(inputs))]
        tp = [helper.np_dtype_to_tensor_dtype(v.dtype) for v in inputs]
        g = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info(n, t, v.shape) for n, t, v in zip(names, tp, inputs)],
                              [helper.make_tensor_value_info("y", tp[0], None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 10
        exp = ReferenceEvaluator(m).run(None, dict(zip(names, inputs)))[0]
        case = Case(op.lower(), op, m.SerializeToString(), list(inputs), [exp], 1e-6, 0.0, op)
        assert run_case(case, "native") == ("pass", None), op
        assert run_case(case, "jit") == ("pass", None), op

    x = np.array([[1.0, -2.0, 3.0, 1e-6], [-1e-7, 2.0, -3.0, 0.5]], np.float32)
    check("Swish", 24, [x], alpha=0.5)
    check("Elu", 22, [x], alpha=1.0)
    a = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], dtype=ml_dtypes.bfloat16)
    check("MatMul", 13, [a, a.T.copy()])
