"""Attention, RotaryEmbedding and the losses on random configurations beyond the node tests, against onnx's
reference evaluator: the NumPy implementation and the JAX lowering (under jax.jit) alike."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from xcviz.ops import REGISTRY, Unsupported

_F = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
      np.dtype(bool): TensorProto.BOOL}


def _reference(op_type, inputs, n_out, opset, **attrs):
    names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    outs = [f"o{k}" for k in range(n_out)]
    node = helper.make_node(op_type, names, outs, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, _F[v.dtype], v.shape)
                                            for n, v in zip(names, inputs) if v is not None],
                              [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return ReferenceEvaluator(model).run(None, {n: v for n, v in zip(names, inputs) if v is not None})


def _check(op_type, inputs, n_out, opset=25, **attrs):
    import jax

    from xcviz.ops.arrays import jnp

    jnp()  # 64-bit types on before jit reads the int64 inputs, as xcviz's runtime has them (else order-dependent)
    want = _reference(op_type, inputs, n_out, opset, **attrs)
    opdef = REGISTRY.get(op_type)
    a = {**opdef.attrs, **attrs, "_num_outputs": n_out}
    native = opdef.native(a, *inputs)
    native = list(native) if isinstance(native, tuple) else [native]
    jitted = jax.jit(lambda *xs: opdef.jax(a, *xs))(*inputs)
    jitted = list(jitted) if isinstance(jitted, (tuple, list)) else [jitted]
    for got in (native, jitted):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(24))
def test_attention_random_configs_match_onnx_reference(seed):
    rng = np.random.default_rng(seed)
    b, hkv, d, dv = int(rng.integers(1, 3)), int(rng.integers(1, 3)), 4, int(rng.choice([4, 6]))
    hq, lq, lk = hkv * int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    q, k, v = f(b, hq, lq, d), f(b, hkv, lk, d), f(b, hkv, lk, dv)
    past = int(rng.integers(0, 3)) if seed % 3 == 0 else 0
    pk, pv = (f(b, hkv, past, d), f(b, hkv, past, dv)) if past else (None, None)
    total = lk + past
    attrs = {"is_causal": int(rng.integers(0, 2)), "qk_matmul_output_mode": int(rng.integers(0, 4))}
    if seed % 4 == 1:
        attrs["softcap"] = 1.5
    if seed % 5 == 2:
        attrs["left_window_size"] = int(rng.integers(0, 3))
    if seed % 2:
        attrs["scale"] = 0.3
    mask = None
    if seed % 3 == 1:  # shorter than the keys: the rest are masked out
        mask = rng.random((lq, max(total - 1, 1))) > 0.3
    elif seed % 3 == 2:
        mask = f(1, hq, lq, total)
    inputs = [q, k, v, mask, pk, pv]
    if seed % 2 == 0:  # 3-D form
        attrs.update(q_num_heads=hq, kv_num_heads=hkv)
        inputs[:3] = [x.transpose(0, 2, 1, 3).reshape(b, x.shape[2], -1) for x in (q, k, v)]
    while inputs[-1] is None:
        inputs.pop()
    _check("Attention", inputs, 4 if past or attrs["qk_matmul_output_mode"] else 1, **attrs)


@pytest.mark.parametrize("seed", range(6))
def test_attention_nonpad_kv_seqlen_matches_onnx_reference(seed):
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((2, 2, 3, 4), (2, 1, 6, 4), (2, 1, 6, 4)))
    nonpad = rng.integers(3, 7, size=2).astype(np.int64)
    _check("Attention", [q, k, v, None, None, None, nonpad], 1, opset=24, is_causal=seed % 2)


@pytest.mark.parametrize("seed", range(8))
def test_rotary_embedding_matches_onnx_reference(seed):
    rng = np.random.default_rng(seed)
    b, s, h, d = 2, 5, 2, 8
    dim = d if seed % 2 else 4
    x = rng.standard_normal((b, h, s, d)).astype(np.float32)
    attrs = {"interleaved": seed % 3 == 0, "rotary_embedding_dim": dim if dim != d else 0}
    if seed % 4 >= 2:  # 3-D form
        x = x.transpose(0, 2, 1, 3).reshape(b, s, h * d)
        attrs["num_heads"] = h
    cache = rng.standard_normal((9, dim // 2)).astype(np.float32), rng.standard_normal((9, dim // 2)).astype(np.float32)
    pos = rng.integers(0, 9, size=(b, s)).astype(np.int64)
    _check("RotaryEmbedding", [x, *cache, pos], 1, opset=23, **{k: int(v) for k, v in attrs.items()})


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("op_type", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
def test_losses_with_weight_and_ignore_index_match_onnx_reference(op_type, reduction):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5, 2, 4)).astype(np.float32)
    target = rng.integers(0, 5, size=(3, 2, 4)).astype(np.int64)
    target[0, 1, 2] = target[2, 0, 0] = -3
    w = rng.random(5).astype(np.float32)
    n_out = 2 if op_type == "SoftmaxCrossEntropyLoss" else 1
    _check(op_type, [x, target, w], n_out, opset=13, reduction=reduction, ignore_index=-3)


def test_loss_target_out_of_range_is_a_clear_error():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(Unsupported, match="outside"):
        REGISTRY.get("NegativeLogLikelihoodLoss").native({"reduction": "mean", "ignore_index": None}, x,
                                                         np.array([0, 3]))
