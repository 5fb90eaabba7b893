"""LinearAttention (ops/linear_attention.py) on configurations beyond the node tests, against onnxruntime's CPU
provider and onnx's reference: NumPy loop, JAX lax.scan and the loaded graph alike."""
from __future__ import annotations

import numpy as np
import pytest

from xcviz.ops import REGISTRY, Unsupported
from tests.support.single_node import check

pytestmark = pytest.mark.slow  # (the fast tier is `pytest`; this runs with `pytest -m slow`)


@pytest.mark.parametrize("engine", ["onnx", "ort"])
@pytest.mark.parametrize("seed", range(12))
def test_linear_attention_random_configs(seed, engine):
    rng = np.random.default_rng(seed)
    rule = ("linear", "gated", "delta", "gated_delta")[seed % 4]
    hkv = int(rng.integers(1, 4))
    hq = hkv * int(rng.integers(1, 4))
    b, t, dk, dv = int(rng.integers(1, 3)), int(rng.integers(1, 7)), int(rng.integers(1, 6)), int(rng.integers(1, 6))
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)  # noqa: E731
    q, k, v = f(b, t, hq * dk), f(b, t, hkv * dk), f(b, t, hkv * dv)
    past = f(b, hkv, dk, dv) if seed % 3 else None
    decay = -np.abs(f(b, t, hkv * (dk if seed % 2 else 1))) if rule in ("gated", "gated_delta") else None
    beta = rng.random((b, t, hkv if seed % 5 else 1)).astype(np.float32) if "delta" in rule else None
    inputs = [q, k, v, past, decay, beta]
    while inputs[-1] is None:
        inputs.pop()
    attrs = dict(q_num_heads=hq, kv_num_heads=hkv, update_rule=rule)
    if seed % 4 == 3:
        attrs["scale"] = 0.7
    check("LinearAttention", inputs, 2, 27, engine, rtol=1e-4, atol=1e-5, **attrs)


def test_state_carries_the_sequence_across_calls():
    """Prefill of the first tokens, then the rest with present_state fed back: the same outputs as one call."""
    rng = np.random.default_rng(5)
    q, k, v, g = (rng.standard_normal((1, 6, 8)).astype(np.float32) * 0.5 for _ in range(4))
    beta = rng.random((1, 6, 2)).astype(np.float32)
    a = {**REGISTRY.get("LinearAttention").attrs, "q_num_heads": 2, "kv_num_heads": 2}
    fn = REGISTRY.get("LinearAttention").native
    whole, state = fn(a, q, k, v, None, -np.abs(g), beta)
    y1, s1 = fn(a, q[:, :4], k[:, :4], v[:, :4], None, -np.abs(g[:, :4]), beta[:, :4])
    y2, s2 = fn(a, q[:, 4:], k[:, 4:], v[:, 4:], s1, -np.abs(g[:, 4:]), beta[:, 4:])
    np.testing.assert_allclose(np.concatenate([y1, y2], axis=1), whole, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2, state, rtol=1e-5, atol=1e-6)


def test_linear_attention_refuses_inputs_its_rule_does_not_take():
    fn = REGISTRY.get("LinearAttention").native
    x = np.ones((1, 2, 4), np.float32)
    a = {"q_num_heads": 2, "kv_num_heads": 2}
    with pytest.raises(Unsupported, match="'gated_delta' requires decay"):
        fn(a, x, x, x)
    with pytest.raises(Unsupported, match="'linear' forbids beta"):
        fn({**a, "update_rule": "linear"}, x, x, x, None, None, x[..., :2])
    with pytest.raises(Unsupported, match="update_rule 'rwkv'"):
        fn({**a, "update_rule": "rwkv"}, x, x, x)
    with pytest.raises(Unsupported, match="multiple of kv"):
        fn({"q_num_heads": 3, "kv_num_heads": 2, "update_rule": "linear"}, x, x, x)
