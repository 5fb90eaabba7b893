"""ONNX LinearAttention (opset 27): the linear, gated, delta and gated-delta recurrences over a (d_k, d_v) state,
with grouped KV heads; a Python loop natively, one lax.scan over the tokens under JAX."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from .arrays import Unsupported, is_np, present
from .registry import Entries
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

RULES = ("linear", "gated", "delta", "gated_delta")


def _heads(x, n: int, what: str):
    """(B, T, n*D) -> (T, B, n, D) in float32: tokens first, the axis the recurrence walks."""
    b, t, hd = x.shape
    if hd % n:
        raise Unsupported(f"LinearAttention {what} last dim {hd} is not a multiple of {n} heads")
    return x.reshape((b, t, n, hd // n)).transpose((1, 0, 2, 3)).astype(np.float32)


def _rule(a) -> tuple[str, bool, bool]:
    rule = a.get("update_rule")
    rule = "gated_delta" if rule is None else rule.decode() if isinstance(rule, bytes) else str(rule)
    if rule not in RULES:
        raise Unsupported(f"LinearAttention update_rule {rule!r}", hint=f"one of {', '.join(RULES)}")
    return rule, rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")


def _num_heads(a) -> tuple[int, int]:
    hq, hkv = a.get("q_num_heads"), a.get("kv_num_heads")
    if hq is None or hkv is None or int(hq) <= 0 or int(hkv) <= 0 or int(hq) % int(hkv):
        raise Unsupported(f"LinearAttention q_num_heads {hq} / kv_num_heads {hkv}: both required, q a positive "
                          "multiple of kv")
    return int(hq), int(hkv)


def linear_attention(xp, a, q, k, v, past=None, decay=None, beta=None):
    rule, gated, delta = _rule(a)
    hq, hkv = _num_heads(a)
    decay, beta, past = (x if present(x) else None for x in (decay, beta, past))
    for name, needed, x in (("decay", gated, decay), ("beta", delta, beta)):
        if needed != (x is not None):
            raise Unsupported(f"LinearAttention update_rule {rule!r} {'requires' if needed else 'forbids'} {name}")
    if any(x.ndim != 3 for x in (q, k, v)):
        raise Unsupported(f"LinearAttention query/key/value {q.shape}/{k.shape}/{v.shape}: want (B, T, H*D)")
    b, t, _ = q.shape
    q4, k4, v4 = _heads(q, hq, "query"), _heads(k, hkv, "key"), _heads(v, hkv, "value")
    dk, dv, group = q4.shape[-1], v4.shape[-1], hq // hkv
    xs = {"q": q4.reshape((t, b, hkv, group, dk)), "k": k4, "v": v4}
    if gated:  # per head (B, T, Hkv) or per key dim (B, T, Hkv*dk), both as (T, B, Hkv, dk or 1)
        if decay.ndim != 3 or decay.shape[-1] not in (hkv, hkv * dk):
            raise Unsupported(f"LinearAttention decay {decay.shape}: last dim {hkv} or {hkv * dk}")
        xs["g"] = _heads(decay, hkv, "decay")
    if delta:
        if beta.ndim != 3 or beta.shape[-1] not in (hkv, 1):
            raise Unsupported(f"LinearAttention beta {beta.shape}: last dim {hkv} or 1")
        xs["beta"] = _heads(beta, beta.shape[-1], "beta")  # (T, B, Hkv or 1, 1)
    if past is not None:
        if tuple(past.shape) != (b, hkv, dk, dv):
            raise Unsupported(f"LinearAttention past_state {past.shape}: want {(b, hkv, dk, dv)}")
        state = past.astype(np.float32)
    else:
        state = xp.zeros((b, hkv, dk, dv), np.float32)
    scale = float(a.get("scale") or 0.0) or 1.0 / np.sqrt(dk)

    def step(s, x):
        if gated:  # decay the state by exp(g) per key dim (or per head), over every value dim
            s = s * xp.exp(x["g"])[..., None]
        val = x["v"]
        if delta:  # write only what the state does not already recall for this key
            val = x["beta"] * (val - xp.einsum("bhdm,bhd->bhm", s, x["k"]))
        s = s + x["k"][..., :, None] * val[..., None, :]
        # grouped heads: query head h reads the state of KV head h // group
        return s, np.float32(scale) * xp.einsum("bhgd,bhdm->bhgm", x["q"], s)

    if is_np(xp):
        outs = []
        for i in range(t):
            state, o = step(state, {key: x[i] for key, x in xs.items()})
            outs.append(o)
        out = np.stack(outs) if outs else np.zeros((0, b, hkv, group, dv), np.float32)
    else:
        from jax import lax

        state, out = lax.scan(step, state, xs)
    y = out.reshape((t, b, hq * dv)).transpose((1, 0, 2)).astype(q.dtype)
    return y, state.astype(q.dtype if past is None else past.dtype)


def infer_linear_attention(ctx: Ctx) -> list[TensorType]:
    q, v, dt = ctx.shape(0), ctx.shape(2), ctx.dtype(0)
    hq, hkv = ctx.attrs.get("q_num_heads"), ctx.attrs.get("kv_num_heads")
    y = state = None
    if q is not None and v is not None and len(q) == 3 and len(v) == 3 and hq and hkv \
            and isinstance(q[2], int) and isinstance(v[2], int):
        dk, dv = q[2] // int(hq), v[2] // int(hkv)
        y, state = (q[0], q[1], int(hq) * dv), (q[0], int(hkv), dk, dv)
    past_dt = ctx.dtype(3) if len(ctx.inputs) > 3 else None  # None when past_state is absent
    return [TensorType(y, dt), TensorType(state, past_dt or dt)][:max(ctx.num_outputs, 1)]


def linear_attention_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    q, v = ctx.shape(0), ctx.shape(2)
    hq, hkv = ctx.attrs.get("q_num_heads"), ctx.attrs.get("kv_num_heads")
    if q is None or v is None or len(q) != 3 or len(v) != 3 or not hq or not hkv \
            or not all(isinstance(d, int) for d in (*q, *v)):
        return None
    dk, dv = q[2] // int(hq), v[2] // int(hkv)
    # per token: decay, recall and write on each KV state (about 6 dk*dv), the read per query head (2 dk*dv)
    return q[0] * q[1] * dk * dv * (6 * int(hkv) + 2 * int(hq))


op("linear_attention", "LinearAttention", infer=infer_linear_attention, flops=linear_attention_flops,
   num_outputs=None, min_inputs=3, max_inputs=6, impl=linear_attention,
   attrs={"chunk_size": 64, "kv_num_heads": None, "q_num_heads": None, "scale": 0.0, "update_rule": "gated_delta"},
   doc="linear attention recurrences (linear, gated, delta, gated_delta) with GQA and a carried state")
