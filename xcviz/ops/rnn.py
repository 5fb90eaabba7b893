"""Recurrent layers (ONNX LSTM, GRU, RNN): directions, sequence_lens, initial states, activations, layouts.

One implementation per op over `xp`: the input projection of every step is one matmul up front, then the
recurrence is a Python loop under NumPy and `lax.scan` under JAX (one XLA While loop, as TF compiles a Keras
LSTM). Steps at or past a batch row's sequence length leave its state unchanged and write zeros to Y, as
onnxruntime does; the reverse direction reverses each row's first `sequence_lens[b]` steps only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import TensorType
from .arrays import Unsupported, is_np, lit, present
from .registry import Entries
from .rules import Ctx, ShapeError, fmt

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

# ONNX's activation functions for recurrent cells: name -> (f(xp, x, alpha, beta), default alpha, default beta);
# alpha/beta lists are consumed in order by the activations that take them (onnxruntime's rule)
ACTIVATIONS = {
    "sigmoid": (lambda xp, x, a, b: 1 / (1 + xp.exp(-x)), None, None),
    "tanh": (lambda xp, x, a, b: xp.tanh(x), None, None),
    "relu": (lambda xp, x, a, b: xp.maximum(x, lit(x, 0)), None, None),
    "affine": (lambda xp, x, a, b: x * lit(x, a) + lit(x, b), 1.0, 0.0),
    "leakyrelu": (lambda xp, x, a, b: xp.where(x >= 0, x, x * lit(x, a)), 0.01, None),
    "thresholdedrelu": (lambda xp, x, a, b: xp.where(x > a, x, lit(x, 0)), 1.0, None),
    "scaledtanh": (lambda xp, x, a, b: lit(x, a) * xp.tanh(x * lit(x, b)), 1.0, 1.0),
    "hardsigmoid": (lambda xp, x, a, b: xp.clip(x * lit(x, a) + lit(x, b), lit(x, 0), lit(x, 1)), 0.2, 0.5),
    "elu": (lambda xp, x, a, b: xp.where(x >= 0, x, lit(x, a) * (xp.exp(x) - 1)), 1.0, None),
    "softsign": (lambda xp, x, a, b: x / (1 + xp.abs(x)), None, None),
    "softplus": (lambda xp, x, a, b: xp.log1p(xp.exp(x)), None, None),
}
# gates per kind, default activations per direction, number of outputs
KINDS = {"lstm": (4, ("Sigmoid", "Tanh", "Tanh"), 3), "gru": (3, ("Sigmoid", "Tanh"), 2),
         "rnn": (1, ("Tanh",), 2)}


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _directions(a) -> int:
    d = _text(a.get("direction", "forward"))
    if d not in ("forward", "reverse", "bidirectional"):
        raise Unsupported(f"recurrent direction {d!r} (forward, reverse or bidirectional)")
    return 2 if d == "bidirectional" else 1


def _activations(xp, a, kind: str, dirs: int) -> list[list]:
    """Per direction, the cell's activation functions, bound to their alpha/beta."""
    names = [_text(n) for n in (a.get("activations") or KINDS[kind][1] * dirs)]
    per = len(KINDS[kind][1])
    if len(names) != per * dirs:
        raise Unsupported(f"{len(names)} activations for a {dirs}-direction {kind.upper()} (needs {per * dirs})")
    alphas, betas = list(a.get("activation_alpha") or []), list(a.get("activation_beta") or [])
    fns = []
    for n in names:
        entry = ACTIVATIONS.get(n.lower())
        if entry is None:
            raise Unsupported(f"recurrent activation {n!r}")
        f, da, db = entry
        al = float(alphas.pop(0)) if da is not None and alphas else da
        be = float(betas.pop(0)) if db is not None and betas else db
        fns.append(lambda x, f=f, al=al, be=be: f(xp, x, al, be))
    return [fns[d * per:(d + 1) * per] for d in range(dirs)]


def _scan(xp, step, carry, xs):
    """lax.scan under JAX; the same loop in Python under NumPy (ys stacked on a new leading axis)."""
    if not is_np(xp):
        import jax

        return jax.lax.scan(step, carry, xs)
    ys = []
    for t in range(xs[0].shape[0]):
        carry, y = step(carry, tuple(x[t] for x in xs))
        ys.append(y)
    return carry, np.stack(ys)


def _cell(kind, xp, acts, R, Rb, H, clip, P, lbr):
    """step((h[, c]), (x-projection, mask)) -> (new state, y) for one direction."""
    def cl(v):
        return v if clip is None else xp.clip(v, lit(v, -clip), lit(v, clip))

    def step(carry, inp):
        xw, m = inp
        h = carry[0]
        if kind == "lstm":
            c = carry[1]
            g = xw + h @ R.T + Rb
            i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
            i = acts[0](cl(i + P[0] * c))
            f = 1 - i if lbr else acts[0](cl(f + P[2] * c))  # lbr stands for input_forget here
            c_new = f * c + i * acts[1](cl(cc))
            o = acts[0](cl(o + P[1] * c_new))
            h_new = o * acts[2](c_new)
            new = (h_new, c_new)
        elif kind == "gru":
            hr = h @ R[:2 * H].T + Rb[:2 * H]
            z = acts[0](cl(xw[:, :H] + hr[:, :H]))
            r = acts[0](cl(xw[:, H:2 * H] + hr[:, H:]))
            if lbr:
                hh = acts[1](cl(xw[:, 2 * H:] + r * (h @ R[2 * H:].T + Rb[2 * H:])))
            else:
                hh = acts[1](cl(xw[:, 2 * H:] + (r * h) @ R[2 * H:].T + Rb[2 * H:]))
            h_new = (1 - z) * hh + z * h
            new = (h_new,)
        else:
            h_new = acts[0](cl(xw + h @ R.T + Rb))
            new = (h_new,)
        if m is None:
            return new, new[0]
        kept = tuple(xp.where(m, n, o) for n, o in zip(new, carry))
        return kept, xp.where(m, new[0], lit(new[0], 0))
    return step


def recurrent(kind: str):
    gates, _, n_out = KINDS[kind]

    def impl(xp, a, X, W, R, B=None, lens=None, h0=None, c0=None, P=None):
        layout = int(a.get("layout", 0))
        if layout:
            X = xp.swapaxes(X, 0, 1)
            h0 = xp.swapaxes(h0, 0, 1) if present(h0) else None
            c0 = xp.swapaxes(c0, 0, 1) if present(c0) else None
        T, N, _ = X.shape
        H = int(a.get("hidden_size") or W.shape[1] // gates)
        dirs = _directions(a)
        if W.shape[0] != dirs:
            raise Unsupported(f"{kind.upper()} W has {W.shape[0]} directions, direction attribute says {dirs}")
        acts = _activations(xp, a, kind, dirs)
        clip = float(a["clip"]) if a.get("clip") is not None else None
        lbr = int(a.get("input_forget" if kind == "lstm" else "linear_before_reset", 0) or 0)
        rev = _text(a.get("direction", "forward")) == "reverse"
        mask = idx = None
        if present(lens):
            L = lens.astype(np.int64)
            t = np.arange(T)[:, None]
            mask = (t < L[None, :])[:, :, None]                       # [T, N, 1]
            idx = xp.where(t < L[None, :], L[None, :] - 1 - t, t)     # per-row reversal of the valid steps
        ys, hs, cs = [], [], []
        for d in range(dirs):
            reverse = rev or d == 1
            Xd = X
            if reverse:
                Xd = X[::-1] if idx is None else xp.take_along_axis(X, idx[:, :, None], axis=0)
            bias = B[d] if present(B) else xp.zeros((2 * gates * H,), X.dtype)
            xw = Xd @ W[d].T + bias[:gates * H]
            Pd = P[d].reshape(3, H) if present(P) else xp.zeros((3, H), X.dtype)
            carry = (h0[d] if present(h0) else xp.zeros((N, H), X.dtype),)
            if kind == "lstm":
                carry += (c0[d] if present(c0) else xp.zeros((N, H), X.dtype),)
            step = _cell(kind, xp, acts[d], R[d], bias[gates * H:], H, clip, Pd, lbr)
            xs = (xw,) if mask is None else (xw, mask)  # a row's permuted valid steps are its valid steps
            carry, y = _scan(xp, lambda c, inp: step(c, (inp[0], inp[1] if len(inp) > 1 else None)), carry, xs)
            if reverse:
                y = y[::-1] if idx is None else xp.take_along_axis(y, idx[:, :, None], axis=0)
            ys.append(y)
            hs.append(carry[0])
            if kind == "lstm":
                cs.append(carry[1])
        Y = xp.stack(ys, axis=1)                 # [T, D, N, H]
        outs = [Y, xp.stack(hs)] + ([xp.stack(cs)] if kind == "lstm" else [])
        if layout:
            outs = [xp.transpose(Y, (2, 0, 1, 3))] + [xp.swapaxes(s, 0, 1) for s in outs[1:]]
        n = int(a.get("_num_outputs") or n_out)
        return tuple(outs[:n]) if n > 1 else outs[0]
    return impl


def infer_recurrent(kind: str):
    gates, _, n_out = KINDS[kind]

    def rule(ctx: Ctx) -> list[TensorType]:
        x, w = ctx.shape(0), ctx.shape(1)
        if x is not None and len(x) != 3:
            raise ShapeError(f"{kind.upper()} input X must have rank 3, got {fmt(x)}")
        h = ctx.attrs.get("hidden_size")
        if h is None and w is not None and isinstance(w[1], int):
            h = w[1] // gates
        dirs = 2 if _text(ctx.attrs.get("direction", "forward")) == "bidirectional" else 1
        if w is not None and isinstance(w[0], int) and w[0] != dirs:
            raise ShapeError(f"{kind.upper()} W {fmt(w)} has {w[0]} directions, direction attribute says {dirs}")
        dt = ctx.dtype(0)
        if x is None or h is None:
            return [TensorType(None, dt)] * max(1, ctx.num_outputs)
        layout = int(ctx.attrs.get("layout", 0))
        t, n = (x[1], x[0]) if layout else (x[0], x[1])
        h = int(h)
        y = (n, t, dirs, h) if layout else (t, dirs, n, h)
        state = (n, dirs, h) if layout else (dirs, n, h)
        outs = [TensorType(y, dt)] + [TensorType(state, dt)] * (n_out - 1)
        return outs[:max(1, ctx.num_outputs)]
    return rule


def recurrent_flops(kind: str):
    gates = KINDS[kind][0]

    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        x, w = ctx.shape(0), ctx.shape(1)
        y = out[0].shape if out else None
        if x is None or w is None or y is None or any(isinstance(d, str) for d in (*x, *w, *y)):
            return None
        layout = int(ctx.attrs.get("layout", 0))
        t, n = (x[1], x[0]) if layout else (x[0], x[1])
        dirs, h, i = w[0], w[1] // gates, x[2]
        # two matmuls per gate (input and recurrent weights), then ~4 elementwise ops per gate value
        return dirs * t * n * gates * h * (2 * (i + h) + 4)
    return rule


RNN_ATTRS = {"direction": "forward", "layout": 0}
SCAN = "; the recurrence lowers to lax.scan (tf2xla: While)"
# a recurrence runs step by step: XLA lowers it to a While loop (lax.scan) whose body's kernels launch every
# step, and the native runtime calls its GEMM and gate loops every step; the cost model pays each per step
# (cost.stats: a kernel an elementwise xla_launch, a call a free native_overhead). XLA (jaxlib 0.10.2) runs an
# LSTM step as the recurrent dot, the gate fusion, the output's dynamic-update-slice and the loop's condition and
# counter; a GRU has a second dot (the reset gate applied before its matmul); a plain RNN one gate. onnxruntime
# calls one GEMM and its gate loops per step. Measured on tests/data/exports/tagger_torchscript.onnx
# (bidirectional LSTM + GRU) at sequence 8 and 64, CPU time, one thread: 4.0 µs per step in XLA, 1.7 µs natively
# (about 3.5 launches and 3 calls at the cpu profile's numbers).
@dataclass(frozen=True)
class RecurrenceSteps:
    """The `steps` fact of a recurrence: called as (ctx, outputs) -> (steps, XLA kernels, native calls) run over
    the sequence and directions, at `kernels` XLA kernels and `calls` native calls per step."""
    kernels: int
    calls: int

    def __call__(self, ctx, out) -> tuple[int, int, int] | None:
        x, w = ctx.shape(0), ctx.shape(1)
        if x is None or w is None or any(isinstance(d, str) for d in (*x, *w)):
            return None
        t = x[1] if int(ctx.attrs.get("layout", 0)) else x[0]
        n = int(t) * int(w[0])   # every step of every direction
        return n, n * self.kernels, n * self.calls


op("lstm", "LSTM", infer=infer_recurrent("lstm"), flops=recurrent_flops("lstm"), num_outputs=None, min_inputs=3,
   max_inputs=8, attrs={**RNN_ATTRS, "input_forget": 0}, impl=recurrent("lstm"),
   doc="LSTM (gates i, o, f, c; peepholes, input_forget, clip, sequence_lens, bidirectional, layout)" + SCAN,
   cost_class="dot", steps=RecurrenceSteps(kernels=4, calls=3))
op("gru", "GRU", infer=infer_recurrent("gru"), flops=recurrent_flops("gru"), num_outputs=None, min_inputs=3,
   max_inputs=6, attrs={**RNN_ATTRS, "linear_before_reset": 0}, impl=recurrent("gru"),
   doc="GRU (gates z, r, h; linear_before_reset, clip, sequence_lens, bidirectional, layout)" + SCAN,
   cost_class="dot", steps=RecurrenceSteps(kernels=5, calls=3))
op("rnn", "RNN", infer=infer_recurrent("rnn"), flops=recurrent_flops("rnn"), num_outputs=None, min_inputs=3,
   max_inputs=6, attrs=dict(RNN_ATTRS), impl=recurrent("rnn"),
   doc="simple RNN (clip, sequence_lens, bidirectional, layout)" + SCAN,
   cost_class="dot", steps=RecurrenceSteps(kernels=3, calls=2))
