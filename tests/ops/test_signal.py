"""DFT and STFT (ops/signal.py) on configurations beyond the node tests, against onnx's reference (onnxruntime
fails their node tests): NumPy implementation, JAX lowering (XLA's FFTs) and the loaded graph alike."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY, Unsupported
from tests.support.single_node import check, feeds, model, reference


@pytest.mark.parametrize("seed", range(16))
def test_dft_random_configs(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(2, 5))  # signal axes, then the real/imaginary axis
    shape = [int(v) for v in rng.integers(1, 9, rank - 1)]
    inverse, onesided = seed % 2, (seed // 2) % 2
    pairs = 2 if inverse and onesided else int(rng.choice([1, 2]))
    dtype = np.float64 if seed % 5 == 0 else np.float32
    x = rng.standard_normal((*shape, pairs)).astype(dtype)
    axis = int(rng.integers(0, rank - 1)) - (rank if seed % 3 == 0 else 0)
    length = np.array(int(rng.integers(1, 12)), np.int64) if seed % 4 else None
    if inverse and onesided and length is None:
        x = np.repeat(x, 2, axis=axis)[(slice(None),) * (axis % rank) + (slice(0, max(x.shape[axis], 2)),)]
    attrs = {"inverse": inverse, "onesided": onesided}
    if seed % 2:  # opset 20: length and axis are inputs
        check("DFT", [x, length, np.array(axis, np.int64)], 1, 20, "onnx", rtol=1e-4, atol=1e-4, **attrs)
    else:  # opset 17: the axis is an attribute
        check("DFT", [x, length], 1, 17, "onnx", rtol=1e-4, atol=1e-4, axis=axis, **attrs)


@pytest.mark.parametrize("opset", [17, 20])
def test_dft_default_axis_follows_the_file_s_opset(opset):
    """Opsets 17-19 default to axis 1, opset 20 to -2: the loader spells out the older default."""
    from xcviz.passes.prepare import prepare
    from xcviz.loaders.onnx_model import graph_from_model
    from xcviz.runtime.execute import execute

    x = np.random.default_rng(0).standard_normal((2, 3, 4, 1)).astype(np.float32)
    (want,) = reference("DFT", [x], 1, opset, onesided=1)
    assert want.shape == ((2, 2, 4, 2) if opset == 17 else (2, 3, 3, 2))  # the one-sided axis shows which
    g = prepare(graph_from_model(model("DFT", [x], 1, opset, onesided=1), "dft"), onnx=True)
    assert g.nodes[0].outputs[0].shape == want.shape
    for mode in ("native", "jit"):
        (got,) = execute(g, feeds([x]), mode).outputs.values()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_dft_inverse_undoes_forward():
    x = np.random.default_rng(1).standard_normal((3, 8, 1))
    dft = REGISTRY.get("DFT")
    spec = dft.native({"axis": 1}, x)
    back = dft.native({"axis": 1, "inverse": 1}, spec)
    np.testing.assert_allclose(back[..., 0], x[..., 0], atol=1e-12)
    np.testing.assert_allclose(back[..., 1], 0, atol=1e-12)
    half = dft.native({"axis": 1, "onesided": 1}, x)
    np.testing.assert_allclose(dft.native({"axis": 1, "inverse": 1, "onesided": 1}, half, np.array(8)), x, atol=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_stft_random_configs(seed):
    rng = np.random.default_rng(seed)
    b, n, pairs = int(rng.integers(1, 3)), int(rng.integers(8, 40)), 1 if seed % 3 else 2
    length, step = int(rng.integers(2, 9)), int(rng.integers(1, 6))
    x = rng.standard_normal((b, n, pairs)).astype(np.float32)
    window = np.hanning(length).astype(np.float32) if seed % 2 else None
    inputs = [x, np.array(step, np.int64), window, np.array(length, np.int64) if seed % 4 != 1 else None]
    if window is None and inputs[3] is None:
        inputs[3] = np.array(length, np.int64)
    while inputs[-1] is None:
        inputs.pop()
    onesided = 0 if pairs == 2 else int(seed % 4 != 2)
    check("STFT", inputs, 1, 17, "onnx", rtol=1e-4, atol=1e-4, onesided=onesided)


def test_signal_ops_refuse_what_they_do_not_define():
    dft, stft = REGISTRY.get("DFT").native, REGISTRY.get("STFT").native
    with pytest.raises(Unsupported, match="last axis must be 1"):
        dft({"axis": 1}, np.ones((2, 4, 3), np.float32))
    with pytest.raises(Unsupported, match="axis 2"):
        dft({"axis": 2}, np.ones((2, 4, 1), np.float32))
    with pytest.raises(Unsupported, match="window"):
        stft({}, np.ones((1, 16, 1), np.float32), np.array(4), np.ones(5, np.float32), np.array(8))


def test_stft_loads_with_its_one_sided_default_where_onnx_s_inference_reads_zero():
    """onnx 1.23's shape inference takes a missing onesided as 0 (onnx/onnx#7731); the loader writes out the
    schema's 1, so the undeclared output has the op's shape and the graph loads."""
    import onnx

    from xcviz.passes.prepare import prepare
    from xcviz.loaders.onnx_model import graph_from_model

    x, step, length = np.zeros((1, 64, 1), np.float32), np.array(8, np.int64), np.array(16, np.int64)
    m = model("STFT", [x, step, None, length], 1, 17, consts=(1, 3))
    before = onnx.shape_inference.infer_shapes(m).graph.output[0].type.tensor_type.shape
    g = prepare(graph_from_model(m, "stft"), onnx=True)
    assert g.nodes[0].outputs[0].shape == (1, 7, 9, 2)
    assert [d.dim_value for d in before.dim] in ([1, 7, 16, 2], [1, 7, 9, 2])  # the former until onnx has the fix
    assert not any(a.name == "onesided" for a in m.graph.node[0].attribute)  # the caller's model is untouched


def test_shape_rules_say_unknown_for_lengths_known_only_at_run_time():
    from xcviz.ir import TensorType
    from xcviz.ops.rules import Ctx

    x, i64 = TensorType((2, 8, 1), "float32"), TensorType((), "int64")
    dft, stft = REGISTRY.get("DFT"), REGISTRY.get("STFT")
    assert dft.infer(Ctx([x, i64], dict(dft.attrs), [None, None]))[0].shape is None
    assert dft.infer(Ctx([x, TensorType(), i64], dict(dft.attrs), [None, None, None]))[0].shape is None
    assert dft.infer(Ctx([x, i64], {**dft.attrs, "onesided": 1}, [None, np.array(6)]))[0].shape == (2, 4, 2)
    assert stft.infer(Ctx([x, i64, TensorType(), i64], dict(stft.attrs), [None, np.array(2), None, None]))[0].shape \
        is None
    assert stft.infer(Ctx([x, i64], dict(stft.attrs), [None, np.array(2)]))[0].shape == (2, 1, 5, 2)


def _against_reference(op: str, opset: int, inputs: list, names: list[str], attrs: dict):
    """xcviz's native run of a one-node model vs onnx.reference on the same inputs (an absent input: name '')."""
    onnx = pytest.importorskip("onnx")
    from onnx import helper
    from onnx.reference import ReferenceEvaluator

    from xcviz.conformance import Case, run_case

    given = [(n, v) for n, v in zip(names, inputs) if n]
    g = helper.make_graph([helper.make_node(op, names, ["y"], **attrs)], "g",
                          [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                           for n, v in given],
                          [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    exp = ReferenceEvaluator(m).run(None, dict(given))[0]
    return run_case(Case(op.lower(), op, m.SerializeToString(), [v for _, v in given], [exp], 1e-4, 1e-4, op), "native")


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("inverse,onesided", [(0, 0), (0, 1), (1, 0), (1, 1)])
@pytest.mark.parametrize("parts", [1, 2])
def test_dft_matches_onnx_reference_in_both_signatures(opset, inverse, onesided, parts):
    """Opset 17-19 take the axis as an attribute, opset 20 as an input: forward, inverse, one-sided (rfft / irfft),
    real and complex signals, the length given or not, each against onnx.reference."""
    rng = np.random.default_rng(opset + 2 * inverse + onesided + 7 * parts)
    for axis in (1, 2):
        for length in (None, 12, 5):
            x = rng.standard_normal((2, 7, 6, parts)).astype(np.float32)
            names, inputs, attrs = ["x"], [x], {"inverse": inverse, "onesided": onesided}
            n = np.array(length or 0, np.int64)
            if opset == 17:
                attrs["axis"] = axis
                if length is not None:
                    names, inputs = ["x", "n"], [x, n]
            else:
                names, inputs = ["x", "n" if length is not None else "", "a"], [x, n, np.array(axis, np.int64)]
            assert _against_reference("DFT", opset, inputs, names, attrs) == ("pass", None), (axis, length)


@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("parts", [1, 2])
def test_stft_matches_onnx_reference_with_and_without_window(onesided, parts):
    rng = np.random.default_rng(3 * onesided + parts)
    x = rng.standard_normal((2, 30, parts)).astype(np.float32)
    step = np.array(3, np.int64)
    window = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(8) / 8)).astype(np.float32)
    for names, inputs in ((["x", "s", "w"], [x, step, window]), (["x", "s", "w", "l"], [x, step, window, np.array(8, np.int64)]),
                          (["x", "s", "", "l"], [x, step, None, np.array(6, np.int64)])):
        assert _against_reference("STFT", 17, inputs, names, {"onesided": onesided}) == ("pass", None), names
