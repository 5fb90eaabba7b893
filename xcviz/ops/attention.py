"""Attention: ONNX Attention (opsets 23-25: masks, windows, GQA, KV caches, softcap) and RotaryEmbedding."""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, lit, np_dtype, present
from .registry import REDUCTION, Entries
from .rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _heads(xp, x, n):
    """(B, S, n*D) -> (B, n, S, D)."""
    b, s, h = x.shape
    if h % n:
        raise Unsupported(f"Attention hidden size {h} is not a multiple of {n} heads")
    return xp.transpose(x.reshape((b, s, n, h // n)), (0, 2, 1, 3))


def _mm(xp, a, b):
    # onnx's reference multiplies bfloat16 in float32 and casts back: so do we (both namespaces)
    if a.dtype.name == "bfloat16":
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return xp.matmul(a, b)


def _allowed(xp, a, mask, nonpad, L, T, past):
    """(bool mask to keep or None, float mask to add or None) from attn_mask, is_causal, the window and
    nonpad_kv_seqlen, all broadcastable to (B, H, L, T). Causal and window frontiers are bottom-right aligned:
    offset = past length (internal cache) or nonpad_kv_seqlen[b] - L (external cache)."""
    keep, add = None, None
    if present(mask):
        if mask.shape[-1] < T:  # a shorter mask covers the first keys; the rest are masked out
            pad = [(0, 0)] * (mask.ndim - 1) + [(0, T - mask.shape[-1])]
            mask = xp.pad(mask, pad, constant_values=False if mask.dtype == bool else -np.inf)
        if mask.dtype == bool:
            keep = mask
        else:
            add = mask
    i, j = np.arange(L).reshape(L, 1), np.arange(T).reshape(1, T)
    offset = (nonpad.reshape(-1, 1, 1, 1).astype(np.int64) - L) if present(nonpad) else past
    diff = i + offset - j  # query position minus key position
    left, right = int(a.get("left_window_size", -1)), int(a.get("right_window_size", -1))
    rules = []
    if int(a.get("is_causal", 0)):
        rules.append(diff >= 0)
    if left >= 0:
        rules.append(diff <= left)
    if right >= 0:
        rules.append(-diff <= right)
    if present(nonpad):
        rules.append(j < nonpad.reshape(-1, 1, 1, 1))
    for rule in rules:
        keep = rule if keep is None else xp.logical_and(keep, rule)
    return keep, add


def _bf16_emulation(xp, dt):
    """(round, sum) for the computation. NumPy's bfloat16 rounds after every operation and sums a row one
    element at a time; XLA keeps excess float32 precision between bfloat16 ops. So the JAX lowering of a
    bfloat16 attention runs in float32 and rounds explicitly (reduce_precision) where NumPy does, to give
    the reference's very bits."""
    if xp is np or dt.name != "bfloat16":
        return (lambda x: x), (lambda x: xp.sum(x, axis=-1, keepdims=True))
    from jax import lax

    def rnd(x):
        return lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7)

    def ssum(x):
        t = x[..., 0:1]
        for i in range(1, x.shape[-1]):
            t = rnd(t + x[..., i:i + 1])
        return t
    return rnd, ssum


def attention(xp, a, q, k, v, mask=None, past_k=None, past_v=None, nonpad=None):
    dt = q.dtype
    rank3 = q.ndim == 3
    if rank3:
        hq, hkv = a.get("q_num_heads"), a.get("kv_num_heads")
        if not hq or not hkv:
            raise Unsupported("Attention with 3-D inputs needs q_num_heads and kv_num_heads")
        q, k, v = _heads(xp, q, int(hq)), _heads(xp, k, int(hkv)), _heads(xp, v, int(hkv))
    elif q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise Unsupported(f"Attention of rank-{q.ndim} inputs (ONNX has 3-D and 4-D)")
    if present(nonpad) and present(past_k):
        raise Unsupported("Attention with both nonpad_kv_seqlen and a past KV cache (ONNX forbids it)")
    if present(past_k) != present(past_v):
        raise Unsupported("Attention with only one of past_key and past_value")
    rnd, ssum = _bf16_emulation(xp, dt)
    cd = dt if xp is np or dt.name != "bfloat16" else np.dtype(np.float32)  # the dtype the lowering computes in
    q, k, v = q.astype(cd), k.astype(cd), v.astype(cd)
    if present(past_k):
        past_k, past_v = past_k.astype(cd), past_v.astype(cd)
    if present(mask) and mask.dtype == dt:
        mask = mask.astype(cd)
    scale = a.get("scale")
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else float(scale)
    s = np.asarray(np.sqrt(scale)).astype(dt).astype(cd)  # sqrt(scale) on q and on k, as ONNX's function body
    past = past_k.shape[2] if present(past_k) else 0
    if present(past_k):
        k, v = xp.concatenate([past_k, k], axis=2), xp.concatenate([past_v, v], axis=2)
    present_k, present_v = k, v
    L, T = q.shape[2], k.shape[2]
    hq, hkv = q.shape[1], k.shape[1]
    if hq != hkv:
        if hq % hkv or v.shape[1] != hkv:
            raise Unsupported(f"Attention with {hq} query heads and {hkv} key/value heads (GQA needs a multiple)")
        k, v = xp.repeat(k, hq // hkv, axis=1), xp.repeat(v, hq // hkv, axis=1)
    qk = rnd(_mm(xp, rnd(q * s), rnd(xp.swapaxes(k, -1, -2) * s)))
    cap = float(a.get("softcap") or 0.0)
    if cap > 0:  # before the mask, so masked scores stay -inf
        qk = rnd(rnd(xp.tanh(rnd(qk / lit(qk, cap)))) * lit(qk, cap)).astype(cd)
    keep, add = _allowed(xp, a, mask, nonpad, L, T, past)
    bias = xp.zeros((L, T), cd) if add is None else rnd(xp.zeros((L, T), cd) + add)
    if keep is not None:
        bias = xp.where(keep, bias, lit(bias, -np.inf))
    scores = rnd(qk + bias)
    mode = int(a.get("qk_matmul_output_mode", 0))
    qk_out = scores if mode == 2 else qk
    prec = a.get("softmax_precision")
    if prec is not None:
        scores = scores.astype(np_dtype(int(prec)))
        if np_dtype(int(prec)).name != "bfloat16":
            rnd, ssum = (lambda x: x), (lambda x: xp.sum(x, axis=-1, keepdims=True))
    # a row with every key masked softmaxes to zeros (decided on the bias, as onnx's reference does)
    m = xp.max(scores, axis=-1, keepdims=True)
    e = rnd(xp.exp(rnd(scores - xp.where(xp.isneginf(m), lit(m, 0), m))))
    tot = ssum(e)
    p = rnd(e / xp.where(tot == 0, lit(tot, 1), tot))
    dead = xp.isneginf(xp.max(bias, axis=-1, keepdims=True))
    p = xp.where(dead, lit(p, 0), p)
    if mode == 3:
        qk_out = p
    y = rnd(_mm(xp, rnd(p.astype(dt).astype(cd)), v))
    if rank3:
        y = xp.transpose(y, (0, 2, 1, 3))
        y = y.reshape((y.shape[0], y.shape[1], -1))
    outs = tuple(o.astype(dt) for o in (y, present_k, present_v, qk_out))
    return outs[:max(int(a.get("_num_outputs", 1)), 1)]


def infer_attention(ctx: Ctx) -> list[TensorType]:
    q, k, v, pk = ctx.shape(0), ctx.shape(1), ctx.shape(2), ctx.shape(4)
    dt = ctx.dtype(0)
    outs = [TensorType(None, dt)] * 4
    if q is not None and k is not None and v is not None and len(q) == len(k) == len(v) and len(q) in (3, 4):
        if len(q) == 4:
            b, hq, L = q[0], q[1], q[2]
            hkv, dk, dv, S = k[1], k[3], v[3], k[2]
        else:
            nq, nkv = ctx.attrs.get("q_num_heads"), ctx.attrs.get("kv_num_heads")
            ints = all(isinstance(d, int) for d in (*q, *k, *v)) and nq and nkv
            b, hq, L, S = q[0], nq, q[1], k[1]
            hkv, dk, dv = (nkv, k[2] // nkv, v[2] // nkv) if ints else (nkv, None, None)
        P = pk[2] if pk is not None and len(pk) == 4 else 0
        T = S if P == 0 else (S + P if isinstance(S, int) and isinstance(P, int) else None)
        y = (b, hq, L, dv) if len(q) == 4 else (b, L, hq * dv if dv else None)
        known = lambda s: s if all(d is not None for d in s) else None  # noqa: E731
        outs = [TensorType(known(y), dt), TensorType(known((b, hkv, T, dk)), dt),
                TensorType(known((b, hkv, T, dv)), dt), TensorType(known((b, hq, L, T)), dt)]
    return outs[:max(ctx.num_outputs, 1)]


def attention_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    qk = infer_attention(Ctx(ctx.inputs, ctx.attrs, num_outputs=4))
    n, y = numel(qk[3].shape), qk[0].shape
    if n is None or y is None or numel(qk[1].shape) is None:
        return None
    dk, dv = qk[1].shape[3], qk[2].shape[3]
    return 2 * n * (dk + dv) + 5 * n  # q @ k^T, p @ v (a multiply-add is 2 FLOPs), about 5 per score for softmax


op("attention", "Attention", infer=infer_attention, flops=attention_flops, min_inputs=3, max_inputs=7,
   num_outputs=None, groups=REDUCTION, impl=attention,
   attrs={"scale": None, "is_causal": 0, "q_num_heads": None, "kv_num_heads": None, "softmax_precision": None,
          "softcap": 0.0, "qk_matmul_output_mode": 0, "left_window_size": -1, "right_window_size": -1},
   doc="ONNX Attention: softmax(softcap(q k^T * scale) + masks) v, with 3-D/4-D inputs, GQA, past/present KV, "
       "nonpad_kv_seqlen, causal/sliding windows and the qk_matmul_output modes")


# ---- rotary embedding ---------------------------------------------------------------------------
def rotary_embedding(xp, a, x, cos, sin, pos=None):
    """ONNX RotaryEmbedding: x as (B, H, S, D) or (B, S, H*D) with num_heads; the first rotary_embedding_dim
    features rotate by the (position-indexed) caches, in halves or interleaved pairs."""
    shape = x.shape
    if x.ndim == 4:
        x = xp.transpose(x, (0, 2, 1, 3))
    elif x.ndim == 3:
        heads = int(a.get("num_heads", 0))
        if heads <= 0:
            raise Unsupported("RotaryEmbedding with a 3-D input needs num_heads")
        x = x.reshape((shape[0], shape[1], heads, shape[2] // heads))
    else:
        raise Unsupported(f"RotaryEmbedding of a rank-{x.ndim} input")
    dim = int(a.get("rotary_embedding_dim", 0)) or x.shape[3]
    if present(pos):
        cos, sin = cos[pos], sin[pos]
    if cos.shape[-1] != dim // 2 or sin.shape[-1] != dim // 2:
        raise Unsupported(f"RotaryEmbedding caches of width {cos.shape[-1]} for rotary_embedding_dim {dim}")
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    rot, rest = x[..., :dim], x[..., dim:]
    if int(a.get("interleaved", 0)):
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
    else:
        x1, x2 = rot[..., :dim // 2], rot[..., dim // 2:]
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if int(a.get("interleaved", 0)):
        rot = xp.stack([real, imag], axis=-1).reshape(rot.shape)
    else:
        rot = xp.concatenate([real, imag], axis=-1)
    y = xp.concatenate([rot, rest], axis=-1).astype(x.dtype)
    return y.reshape(shape) if len(shape) == 3 else xp.transpose(y, (0, 2, 1, 3))


op("rotary_embedding", "RotaryEmbedding", infer=r.same, flops=r.input_flops(3), min_inputs=3, max_inputs=4,
   attrs={"interleaved": 0, "rotary_embedding_dim": 0, "num_heads": 0}, impl=rotary_embedding,
   doc="rotary position embedding (RoPE) from cos/sin caches, optionally indexed by position_ids")
