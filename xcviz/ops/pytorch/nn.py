"""Neural-network ops in PyTorch's forms: group norm and batch norm with their saved statistics, weight norm,
max pooling with indices, adaptive average pooling to any size, embedding bags, real FFTs, randperm."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import Unsupported, is_np, lit, present
from ..registry import REDUCTION, Entries
from ..rules import Ctx

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- normalization with saved statistics -----------------------------------------------------------------
def group_norm(xp, a, x, w=None, b=None):
    n, c, g = x.shape[0], x.shape[1], int(a["groups"])
    h = x.reshape((n, g, -1))
    mean = xp.mean(h, axis=-1, keepdims=True)
    var = xp.mean((h - mean) * (h - mean), axis=-1, keepdims=True)
    rstd = lit(x, 1) / xp.sqrt(var + lit(x, float(a.get("epsilon", 1e-5))))
    y = ((h - mean) * rstd).reshape(x.shape)
    chan = (1, c) + (1,) * (x.ndim - 2)
    if present(w):
        y = y * w.reshape(chan)
    if present(b):
        y = y + b.reshape(chan)
    return y.astype(x.dtype), mean.reshape((n, g)), rstd.reshape((n, g))


def batch_norm_stats(xp, a, x, w=None, b=None):
    """Training-mode batch norm: normalised by the batch's own statistics, which it returns (mean, 1/std)."""
    axes = tuple(i for i in range(x.ndim) if i != 1)
    chan = (1, -1) + (1,) * (x.ndim - 2)
    mean = xp.mean(x, axis=axes)
    d = x - mean.reshape(chan)
    rstd = lit(x, 1) / xp.sqrt(xp.mean(d * d, axis=axes) + lit(x, float(a.get("epsilon", 1e-5))))
    y = d * rstd.reshape(chan)
    if present(w):
        y = y * w.reshape(chan)
    if present(b):
        y = y + b.reshape(chan)
    return y.astype(x.dtype), mean, rstd


def weight_norm(xp, a, v, g):
    dim = int(a.get("axis", 0))
    axes = tuple(i for i in range(v.ndim) if i != dim % v.ndim) if dim != -1 else None
    norm = xp.sqrt(xp.sum(v * v, axis=axes, keepdims=axes is not None))
    return (v * (g / norm)).astype(v.dtype)


stats = dict(groups=REDUCTION, infer=r.from_file, num_outputs=None, flops=r.input_flops(8))
op("torch_group_norm", **stats, min_inputs=1, max_inputs=3, attrs={"groups": 1, "epsilon": 1e-5}, impl=group_norm,
   doc="group normalization with per-channel weight and bias; outputs y, mean and 1/std per (batch, group) "
       "(aten.native_group_norm, aten.group_norm)")
op("torch_batch_norm_stats", **stats, min_inputs=1, max_inputs=3, attrs={"epsilon": 1e-5}, impl=batch_norm_stats,
   doc="training-mode batch normalization by the batch's statistics; outputs y, mean and 1/std per channel "
       "(aten._native_batch_norm_legit)")
op("weight_norm", infer=r.from_file, min_inputs=2, max_inputs=2, flops=r.input_flops(4), attrs={"axis": 0},
   impl=weight_norm, doc="v * g / ||v|| with the norm over every dim but `axis` (aten._weight_norm)")


# ---- pooling -----------------------------------------------------------------------------------------------
def _pool_windows(a, x):
    """Rank k, kernel, strides, pads, dilations, output sizes, the extra right padding ceil mode needs, and
    the zero pads of the leading dims."""
    k = len(a["kernel_shape"])
    ks, st = [int(v) for v in a["kernel_shape"]], [int(v) for v in a["strides"]]
    pads, dil = [int(v) for v in a["pads"]], [int(v) for v in a.get("dilations") or [1] * k]
    size = x.shape[-k:]
    outs = []
    for i in range(k):
        span = dil[i] * (ks[i] - 1) + 1
        n = (size[i] + 2 * pads[i] - span) / st[i] + 1
        o = math.ceil(n) if int(a.get("ceil_mode", 0)) else math.floor(n)
        if int(a.get("ceil_mode", 0)) and (o - 1) * st[i] >= size[i] + pads[i]:
            o -= 1  # the last window must start inside the input or its left padding (torch's rule)
        outs.append(o)
    hi = [max((outs[i] - 1) * st[i] + dil[i] * (ks[i] - 1) + 1 - size[i] - pads[i], 0) for i in range(k)]
    return k, ks, st, pads, dil, outs, hi, [(0, 0)] * (x.ndim - k)


def maxpool_with_index(xp, a, x):
    k, ks, st, pads, dil, outs, hi, lead = _pool_windows(a, x)
    low = -np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min
    padded = xp.pad(x, lead + [(pads[i], hi[i]) for i in range(k)], constant_values=low)
    size = x.shape[-k:]
    vals, offs = [], []
    for tap in itertools.product(*[range(n) for n in ks]):
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (outs[i] - 1) * st[i] + 1, st[i]) for i in range(k))
        vals.append(padded[(Ellipsis, *sl)])
        # the flat offset (in the unpadded plane) each output position reads at this tap
        coords = [np.arange(outs[i]) * st[i] + tap[i] * dil[i] - pads[i] for i in range(k)]
        grid = np.meshgrid(*coords, indexing="ij")
        offs.append(np.ravel_multi_index(tuple(np.clip(g, 0, s - 1) for g, s in zip(grid, size)), size))
    stack = xp.stack(vals, axis=-1)
    best = xp.argmax(stack, axis=-1)  # the first maximum, as torch's CPU kernel
    flat = np.stack(offs, axis=-1).astype(np.int64)
    idx = xp.take_along_axis(xp.broadcast_to(flat, stack.shape), best[..., None], axis=-1)[..., 0]
    return xp.max(stack, axis=-1), idx


def _pool_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = r.numel(out[0].shape) if out else None
    return None if n is None else n * int(np.prod([int(v) for v in ctx.attrs.get("kernel_shape") or [1]]))


op("maxpool_with_index", groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, num_outputs=2,
   flops=_pool_flops, attrs={"kernel_shape": [], "strides": [], "pads": [], "dilations": None, "ceil_mode": 0},
   impl=maxpool_with_index, doc="max pooling and the flat offset in each input plane of every maximum "
                                "(aten.max_pool2d_with_indices, max_pool3d_with_indices)")


def adaptive_avgpool(xp, a, x):
    size = [int(v) for v in a["output_size"]]
    k = len(size)
    for i, o in enumerate(size):
        axis, n = x.ndim - k + i, x.shape[x.ndim - k + i]
        parts = []
        for j in range(o):  # torch's bins: [floor(j n / o), ceil((j + 1) n / o))
            lo, hi = (j * n) // o, -(-((j + 1) * n) // o)
            parts.append(xp.mean(xp.take(x, np.arange(lo, hi), axis=axis), axis=axis, keepdims=True))
        x = xp.concatenate(parts, axis=axis)
    return x


op("adaptive_avgpool", groups=REDUCTION, infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.input_flops(1),
   attrs={"output_size": []}, impl=adaptive_avgpool,
   doc="average pooling to a given output size over PyTorch's overlapping bins (aten._adaptive_avg_pool2d/3d)")


# ---- embedding bags ------------------------------------------------------------------------------------------
def embedding_bag(xp, a, w, idx, offsets, psw=None):
    """Outputs (bags, offset2bag, bag_size, max_indices) as aten._embedding_bag; mode 0 sum, 1 mean, 2 max."""
    mode, n = int(a.get("mode", 0)), idx.shape[0]
    bags = offsets.shape[0] - (1 if int(a.get("include_last_offset", 0)) else 0)
    pos = np.arange(n)
    if is_np(xp):
        o = np.asarray(offsets, np.int64)[:bags]
        seg = np.searchsorted(o, pos, side="right") - 1
    else:
        seg = xp.searchsorted(offsets[:bags].astype(np.int64), pos, side="right") - 1
    rows = xp.take(w, idx, axis=0)
    if present(psw):
        rows = rows * psw[:, None].astype(w.dtype)
    pad = a.get("padding_idx")
    keep = (idx != int(pad)) if pad is not None and int(pad) >= 0 else xp.ones(idx.shape, bool)
    onehot = ((seg[None, :] == np.arange(bags)[:, None]) & keep[None, :]).astype(w.dtype)
    count = xp.sum(onehot, axis=1)
    if mode == 2:
        big = xp.where(onehot[:, :, None] > 0, rows[None], lit(w, -np.inf))
        out = xp.where(count[:, None] > 0, xp.max(big, axis=1), lit(w, 0))
        maxi = xp.where(count[:, None] > 0, xp.take(idx, xp.argmax(big, axis=1)), 0).astype(np.int64)
    else:
        out = onehot @ rows
        if mode == 1:
            out = out / xp.maximum(count, lit(w, 1))[:, None]
        maxi = xp.zeros((bags,), np.int64)
    return out.astype(w.dtype), seg.astype(np.int64), count.astype(np.int64), maxi


op("embedding_bag", infer=r.from_file, min_inputs=3, max_inputs=4, num_outputs=4, flops=r.input_flops(1),
   attrs={"mode": 0, "include_last_offset": 0, "padding_idx": None}, impl=embedding_bag,
   doc="sums, means or maxima of the embedding rows of each bag (aten._embedding_bag)")


# ---- real FFTs over given dims, torch's norm modes ------------------------------------------------------------
_NORMS = {0: None, 1: "ortho", 2: "forward"}  # torch's fft_norm_mode: 0 none, 1 1/sqrt(n), 2 1/n


def fft_r2c(xp, a, x):
    dims, norm = [int(d) for d in a["dims"]], int(a.get("normalization", 0))
    inv = "backward" if norm == 0 else _NORMS[norm]
    if int(a.get("onesided", 1)):
        return xp.fft.rfftn(x, axes=dims, norm=inv).astype(np.complex64 if x.dtype == np.float32 else np.complex128)
    return xp.fft.fftn(x, axes=dims, norm=inv).astype(np.complex64 if x.dtype == np.float32 else np.complex128)


def fft_c2r(xp, a, x):
    dims, norm = [int(d) for d in a["dims"]], int(a.get("normalization", 0))
    # torch's c2r mode 2 divides by n (its "forward" norm applied inversely is "backward" for irfft)
    mode = {0: "forward", 1: "ortho", 2: "backward"}[norm]
    sizes = [x.shape[d] for d in dims[:-1]] + [int(a["last_dim_size"])]
    out = xp.fft.irfftn(x, s=sizes, axes=dims, norm=mode)
    return out.astype(np.float32 if x.dtype == np.complex64 else np.float64)


op("fft_r2c", infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.input_flops(10),
   attrs={"dims": [], "normalization": 0, "onesided": 1}, impl=fft_r2c,
   doc="FFT of a real tensor over dims, one-sided or full (aten._fft_r2c)")
op("fft_c2r", infer=r.from_file, min_inputs=1, max_inputs=1, flops=r.input_flops(10),
   attrs={"dims": [], "normalization": 0, "last_dim_size": 0}, impl=fft_c2r,
   doc="inverse FFT of a one-sided spectrum to a real tensor over dims (aten._fft_c2r)")


def randperm(xp, a):
    if not is_np(xp):
        raise Unsupported("randperm is a stateful random op")
    return np.random.default_rng().permutation(int(a["n"])).astype(np.dtype(a.get("dtype") or "int64"))


op("randperm", devices=frozenset(), infer=r.from_file, max_inputs=0, attrs={"n": 0, "dtype": "int64"},
   impl=randperm, doc="a random permutation of 0..n-1 (aten.randperm)")
