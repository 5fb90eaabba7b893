"""Ops XLA cannot compile, each with its reason: they load, explain themselves, fall back and run natively.

`custom_nms` (the seed article's custom post-processing op) has no defined semantics in the article; xcviz
gives it a simple deterministic one so the demo runs end to end: heatmap peak suppression, as in
CenterNet-style decoders. Over the last two axes, a value is kept where it is the maximum of its 3x3
neighbourhood (edges padded with -inf) and set to 0 elsewhere; the output has the input's shape and dtype.
Inputs of rank < 2 pass through unchanged.

PyFunc / EagerPyFunc never run (xcviz executes nothing a file names): they execute as an identity stand-in
(output k = input k), so graphs with them still run end to end; values downstream are placeholders.
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from . import rules as r
from .arrays import Unsupported, ints, np_dtype, present
from .registry import CUSTOM, VOLATILE, Entries, plus_groups
from .rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

NONE = frozenset()
native_only = dict(devices=NONE, jax_ok=False)


def infer_nms(ctx: Ctx) -> list[TensorType]:
    given = ctx.outputs[0] if ctx.outputs else TensorType()
    return [given if given.shape is not None else TensorType(("num_selected", 3), "int64")]


def infer_nonzero(ctx: Ctx) -> list[TensorType]:
    rank = ctx.rank(0)
    return [TensorType((rank, "num_nonzero") if rank is not None else None, "int64")]


def passthrough(ctx: Ctx) -> list[TensorType]:
    """Ops that forward their inputs (Assert/CheckNumerics, Print): output k has input k's type."""
    outs = [ctx.outputs[k] if k < len(ctx.outputs) and ctx.outputs[k].shape is not None else
            (ctx.inputs[k] if k < len(ctx.inputs) else TensorType()) for k in range(ctx.num_outputs)]
    return outs


def nms(xp, a, boxes, scores, max_out=None, iou=None, score_thr=None):
    """ONNX NonMaxSuppression: per batch and class, greedy by score; returns [n, 3] int64 indices."""
    max_out = int(ints(max_out)[0]) if present(max_out) else 0
    iou = float(np.asarray(iou).reshape(-1)[0]) if present(iou) else 0.0
    thr = float(np.asarray(score_thr).reshape(-1)[0]) if present(score_thr) else None
    center = int(a.get("center_point_box", 0))
    b = np.asarray(boxes, dtype=np.float64)
    if center:
        cx, cy, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
        y1, x1, y2, x2 = cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2
    else:
        y1 = np.minimum(b[..., 0], b[..., 2])
        y2 = np.maximum(b[..., 0], b[..., 2])
        x1 = np.minimum(b[..., 1], b[..., 3])
        x2 = np.maximum(b[..., 1], b[..., 3])
    area = (y2 - y1) * (x2 - x1)
    out = []
    for n in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            if max_out <= 0:
                continue
            s = np.asarray(scores[n, c], dtype=np.float64)
            order = np.argsort(-s, kind="stable")
            if thr is not None:
                order = order[s[order] > thr]
            kept: list[int] = []
            for i in order:
                if len(kept) >= max_out:
                    break
                ok = True
                for j in kept:
                    ih = max(0.0, min(y2[n, i], y2[n, j]) - max(y1[n, i], y1[n, j]))
                    iw = max(0.0, min(x2[n, i], x2[n, j]) - max(x1[n, i], x1[n, j]))
                    inter = ih * iw
                    union = area[n, i] + area[n, j] - inter
                    if union > 0 and inter / union > iou:
                        ok = False
                        break
                if ok:
                    kept.append(int(i))
            out.extend([n, c, i] for i in kept)
    return np.asarray(out, dtype=np.int64).reshape(-1, 3)


def custom_nms(xp, a, *xs):
    """Peak suppression (see the module docstring); extra inputs are ignored, one output per input."""
    outs = []
    for x in xs:
        x = np.asarray(x)
        if x.ndim < 2:
            outs.append(x)
            continue
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        p = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(1, 1), (1, 1)], constant_values=low)
        h, w = x.shape[-2:]
        m = np.max(np.stack([p[..., i:i + h, j:j + w] for i in range(3) for j in range(3)]), axis=0)
        outs.append(np.where(x == m, x, np.zeros_like(x)))
    return tuple(outs)


def unique(xp, a, x):
    axis = a.get("axis")
    x = np.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    elif not -x.ndim <= int(axis) < x.ndim:
        raise Unsupported(f"Unique axis {axis} is out of range for rank {x.ndim}")
    axis = int(axis) % x.ndim
    y, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis)
    if not int(a.get("sorted", 1)):
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        first, counts, inverse = first[order], counts[order], rank[inverse.reshape(-1)]
        y = np.take(x, first, axis=axis)  # slices in order of first occurrence
    return y, first.astype(np.int64), inverse.astype(np.int64).reshape(-1), counts.astype(np.int64)


def string_split(xp, a, x, *tf_inputs):
    """ONNX StringSplit (one input, str.split semantics). TensorFlow's StringSplit/V2 take the separator as an
    input and return a sparse tensor: not implemented, refused rather than run with ONNX's meaning."""
    if tf_inputs or int(a.get("_num_outputs", 2)) > 2:
        raise Unsupported("TensorFlow's StringSplit (sparse output) has no native implementation in xcviz")
    x = np.asarray(x)
    sep = a.get("delimiter") or None
    limit = -1 if a.get("maxsplit") is None else int(a["maxsplit"])
    parts = [(s.decode() if isinstance(s, bytes) else str(s)).split(sep, limit) for s in x.reshape(-1)]
    width = max((len(p) for p in parts), default=0)
    y = np.empty((len(parts), width), dtype=object)
    for i, p in enumerate(parts):
        y[i] = p + [""] * (width - len(p))
    return y.reshape(x.shape + (width,)), np.array([len(p) for p in parts], np.int64).reshape(x.shape)


def _rng(a):
    seed = a.get("seed")
    return np.random.default_rng(int(seed) if seed is not None else 0)


def random(kind, like=False):
    def fn(xp, a, *xs):
        shape = tuple(xs[0].shape) if like else tuple(int(d) for d in (a.get("shape") or ()))
        dt = np_dtype(a.get("dtype", 1) if a.get("dtype") is not None else "float32")
        if like and a.get("dtype") is None:
            dt = xs[0].dtype
        rng = _rng(a)
        if kind == "normal":
            v = rng.normal(float(a.get("mean", 0.0)), float(a.get("scale", 1.0)), shape)
        else:
            v = rng.uniform(float(a.get("low", 0.0)), float(a.get("high", 1.0)), shape)
        return v.astype(dt)
    fn.__name__ = f"random_{kind}"
    return fn


def multinomial(xp, a, logits):
    rng = _rng(a)
    n = int(a.get("sample_size", 1))
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    out = np.stack([rng.choice(p.shape[1], size=n, p=row) for row in p])
    return out.astype(np_dtype(a.get("dtype", 6)))


def string_normalizer(xp, a, x):
    action = str(a.get("case_change_action", "NONE")).upper()
    sensitive = bool(int(a.get("is_case_sensitive", 0)))
    stop = {w if sensitive else w.lower() for w in (a.get("stopwords") or [])}
    flat = [s for s in np.asarray(x, dtype=object).reshape(-1).tolist() if (s if sensitive else s.lower()) not in stop]
    if action == "LOWER":
        flat = [s.lower() for s in flat]
    elif action == "UPPER":
        flat = [s.upper() for s in flat]
    return np.asarray(flat or [""], dtype=object).reshape((1, -1) if np.ndim(x) == 2 else (-1,))


def py_func_stand_in(xp, a, *xs):
    """xcviz never runs code named by a file: a PyFunc executes as an identity stand-in (output k = input k)."""
    n = int(a.get("_num_outputs") or 1)
    if n > len(xs):
        raise Unsupported(f"PyFunc stand-in needs an input per output ({n} outputs, {len(xs)} inputs); "
                          "xcviz never runs the Python callback itself")
    return tuple(xs[:n]) if n > 1 else xs[0]


def checked_passthrough(xp, a, *xs):
    for x in xs:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and not np.all(np.isfinite(x)):
            raise Unsupported(f"CheckNumerics: {a.get('message', 'tensor has Inf or NaN values')}")
    return tuple(xs) if len(xs) != 1 else xs[0]



# ---- the entries ---------------------------------------------------------------------------------
op("nms", "NonMaxSuppression", "NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
   **native_only, reason="data-dependent output shape (number of kept boxes)", infer=infer_nms, min_inputs=2,
   max_inputs=5, attrs={"center_point_box": 0}, impl=nms)
op("custom_nms", **native_only, groups=CUSTOM, reason="custom op (the seed's post-processing, no XLA kernel)",
   num_outputs=None, doc="the seed article's custom post-processing op", impl=custom_nms)
op("nonzero", "NonZero", **native_only, reason="data-dependent output shape", infer=infer_nonzero, min_inputs=1,
   max_inputs=1, impl=lambda xp, a, x: np.asarray(np.nonzero(np.asarray(x)), dtype=np.int64))
op("unique", "Unique", **native_only, num_outputs=None, min_inputs=1, max_inputs=1, impl=unique,
   reason="data-dependent output shape (excluded from auto-clustering, as in TF)")

stateful = dict(native_only, reason="stateful random op")
op("random_normal", "RandomNormal", "RandomStandardNormal", **plus_groups(stateful, VOLATILE), max_inputs=0,
   attrs={"shape": None, "dtype": "float32"}, impl=random("normal"))
op("random_uniform", "RandomUniform", **plus_groups(stateful, VOLATILE), max_inputs=0,
   attrs={"shape": None, "dtype": "float32"},
   impl=random("uniform"))
op("random_normal_like", "RandomNormalLike", **plus_groups(stateful, VOLATILE), infer=r.same, min_inputs=1,
   max_inputs=1,
   impl=random("normal", like=True))
op("multinomial", "Multinomial", **plus_groups(stateful, VOLATILE), min_inputs=1, max_inputs=1, impl=multinomial)

strings = dict(native_only, reason="string op (XLA has no string type)")
op("string_normalizer", "StringNormalizer", **strings, min_inputs=1, max_inputs=1, impl=string_normalizer,
   doc="output length depends on the data (stopwords are removed)")
op("string_split", "StringSplit", "StringSplitV2", **strings, num_outputs=None, min_inputs=1, max_inputs=2,
   impl=string_split,
   doc="ONNX StringSplit: each string split by `delimiter` (whitespace by default), padded with ''; the counts")
op("py_func", "PyFunc", "EagerPyFunc", "python_callback", **plus_groups(native_only, VOLATILE), num_outputs=None,
   impl=py_func_stand_in,
   reason="Python callback: runs in the host interpreter, opaque to XLA")
op("assert", "Assert", "CheckNumerics", **native_only, num_outputs=None, infer=passthrough,
   reason="Assert/CheckNumerics are not auto-clustered (as in TF)", impl=checked_passthrough,
   doc="passes its inputs through after checking them")
op("print", "Print", "PrintV2", **plus_groups(native_only, VOLATILE), reason="host side effect", num_outputs=None,
   infer=passthrough,
   impl=checked_passthrough)
