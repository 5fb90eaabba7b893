"""Gradients of forward ops as training graphs hold them (Core ATen's *_backward ops): convolution, layer and
group norm, max and average pooling, adaptive average pooling, embedding. Each is written tap by tap or by its
closed form over `xp`, so the NumPy reference and the JAX lowering are one code."""
from __future__ import annotations

import itertools

import numpy as np

from .. import rules as r
from ..arrays import Unsupported, is_np, lit, present
from ..registry import REDUCTION, Entries

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def _add_at(xp, arr, key, val):
    """arr with val added at key (a basic or advanced index): in place for NumPy, .at[].add for JAX."""
    if is_np(xp):
        np.add.at(arr, key, val)
        return arr
    return xp.asarray(arr).at[key].add(val)


def _taps(ks, dil, st, outs):
    """For each kernel tap, its index and the strided slices of the padded input it reads per output."""
    for tap in itertools.product(*[range(k) for k in ks]):
        yield tap, tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, s, o in zip(tap, dil, st, outs))


# ---- convolution: grad input (a transposed convolution), grad weight (a correlation), grad bias ------------------
def conv_backward(xp, a, g, x, w):
    st, pad, dil = ([int(v) for v in a[n]] for n in ("strides", "pads", "dilations"))
    groups = int(a.get("group", 1))
    n, c = x.shape[:2]
    o = w.shape[0]
    outs, ks = g.shape[2:], w.shape[2:]
    xpad = xp.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    gi = xp.zeros(xpad.shape, x.dtype)
    gw = []
    cg, og = c // groups, o // groups
    for tap, sl in _taps(ks, dil, st, outs):
        patch = xpad[(slice(None), slice(None), *sl)].reshape((n, c, -1))  # [N, C, positions]
        per_group = []
        for j in range(groups):
            gg = g[:, j * og:(j + 1) * og].reshape((n, og, -1))
            per_group.append(xp.einsum("nop,ncp->oc", gg, patch[:, j * cg:(j + 1) * cg]))
            contrib = xp.einsum("nop,oc->ncp", gg, w[(slice(j * og, (j + 1) * og), slice(None), *tap)])
            gi = _add_at(xp, gi, (slice(None), slice(j * cg, (j + 1) * cg), *sl), contrib.reshape((n, cg, *outs)))
        gw.append(xp.concatenate(per_group, axis=0))
    gw = xp.stack(gw, axis=-1).reshape(w.shape)
    gi = gi[(slice(None), slice(None), *[slice(p, p + s) for p, s in zip(pad, x.shape[2:])])]
    gb = xp.sum(g, axis=tuple(i for i in range(g.ndim) if i != 1))
    return gi.astype(x.dtype), gw.astype(w.dtype), gb.astype(g.dtype)


grads = dict(groups=REDUCTION, infer=r.from_file, num_outputs=None)
op("conv_backward", **grads, min_inputs=3, max_inputs=3, flops=r.input_flops(4),
   attrs={"strides": [], "pads": [], "dilations": [], "group": 1}, impl=conv_backward,
   doc="the gradients of a convolution for its input, weight and bias (aten.convolution_backward, not "
       "transposed)")


# ---- normalization ------------------------------------------------------------------------------------------------
def _norm_backward(xp, g, xhat, rstd, axes):
    """dx of y = xhat * (scale) from dxhat = g: rstd * (g - mean(g) - xhat * mean(g * xhat)) over the axes."""
    m1 = xp.mean(g, axis=axes, keepdims=True)
    m2 = xp.mean(g * xhat, axis=axes, keepdims=True)
    return rstd * (g - m1 - xhat * m2)


def layer_norm_backward(xp, a, g, x, mean, rstd, w=None):
    k = int(a["norm_dims"])
    axes = tuple(range(x.ndim - k, x.ndim))
    xhat = (x - mean) * rstd
    gh = g * w if present(w) else g
    gi = _norm_backward(xp, gh, xhat, rstd, axes)
    lead = tuple(range(x.ndim - k))
    return gi.astype(x.dtype), xp.sum(g * xhat, axis=lead).astype(x.dtype), xp.sum(g, axis=lead).astype(x.dtype)


def group_norm_backward(xp, a, g, x, mean, rstd, w=None):
    n, c, grp = x.shape[0], x.shape[1], int(a["groups"])
    chan = (1, c) + (1,) * (x.ndim - 2)
    xs = x.reshape((n, grp, -1))
    xhat = ((xs - mean.reshape((n, grp, 1))) * rstd.reshape((n, grp, 1))).reshape(x.shape)
    gh = g * w.reshape(chan) if present(w) else g
    gi = _norm_backward(xp, gh.reshape((n, grp, -1)), xhat.reshape((n, grp, -1)), rstd.reshape((n, grp, 1)), (2,))
    axes = tuple(i for i in range(x.ndim) if i != 1)
    return (gi.reshape(x.shape).astype(x.dtype), xp.sum(g * xhat, axis=axes).astype(x.dtype),
            xp.sum(g, axis=axes).astype(x.dtype))


op("layer_norm_backward", **grads, min_inputs=4, max_inputs=5, flops=r.input_flops(10), attrs={"norm_dims": 1},
   impl=layer_norm_backward, doc="the gradients of layer norm for its input, weight and bias from the saved mean "
                                 "and 1/std (aten.native_layer_norm_backward)")
op("group_norm_backward", **grads, min_inputs=4, max_inputs=5, flops=r.input_flops(10), attrs={"groups": 1},
   impl=group_norm_backward, doc="the gradients of group norm for its input, weight and bias from the saved mean "
                                 "and 1/std (aten.native_group_norm_backward)")


# ---- pooling and embedding ---------------------------------------------------------------------------------------
def max_pool_backward(xp, a, g, x, idx):
    """The gradient flows to the input position each maximum came from (its flat offset in the plane)."""
    k = idx.ndim - 2
    planes, size = int(np.prod(x.shape[:-k])), int(np.prod(x.shape[-k:]))
    rows = np.repeat(np.arange(planes), int(np.prod(idx.shape[-k:])))
    out = xp.zeros((planes, size), g.dtype)
    out = _add_at(xp, out, (rows, idx.reshape(-1).astype(np.int64)), g.reshape(-1))
    return out.reshape(x.shape)


def avg_pool_backward(xp, a, g, x):
    k = x.ndim - 2 if x.ndim > 2 else 1
    ks, st, pad = ([int(v) for v in a[n]] for n in ("kernel_shape", "strides", "pads"))
    size, outs = x.shape[-k:], g.shape[-k:]
    hi = [max((o - 1) * s + kk - n - p, 0) for o, s, kk, n, p in zip(outs, st, ks, size, pad)]
    # each output's divisor: override, or the window's cells inside the input (+ its padding if included)
    inside = np.pad(np.ones(size), [(p, h) for p, h in zip(pad, hi)])
    if int(a.get("count_include_pad", 1)):
        inside = np.pad(np.ones([n + 2 * p for n, p in zip(size, pad)]), [(0, max(h - p, 0)) for h, p in zip(hi, pad)])
    div = np.zeros(outs)
    for _tap, sl in _taps(ks, [1] * k, st, outs):
        div = div + inside[sl]
    if a.get("divisor_override"):
        div = np.full(outs, float(a["divisor_override"]))
    share = g / lit(g, 1) / div.astype(g.dtype)
    lead = [(0, 0)] * (x.ndim - k)
    gi = xp.zeros(xp.pad(x, lead + [(p, h) for p, h in zip(pad, hi)]).shape, g.dtype)
    for _tap, sl in _taps(ks, [1] * k, st, outs):
        gi = _add_at(xp, gi, (Ellipsis, *sl), share)
    return gi[(Ellipsis, *[slice(p, p + n) for p, n in zip(pad, size)])]


def adaptive_avg_pool_backward(xp, a, g, x):
    k = g.ndim - 2
    gi = g
    for i in range(k):
        axis, n, o = x.ndim - k + i, x.shape[x.ndim - k + i], g.shape[g.ndim - k + i]
        # out[j] averaged input[lo_j:hi_j]: input i receives grad[j] / (hi_j - lo_j) from every bin j covering it
        m = np.zeros((n, o))
        for j in range(o):
            lo, hi = (j * n) // o, -(-((j + 1) * n) // o)
            m[lo:hi, j] = 1.0 / (hi - lo)
        gi = xp.moveaxis(xp.tensordot(gi, m.T.astype(g.dtype), axes=([axis], [0])), -1, axis)
    return gi


def embedding_backward(xp, a, g, idx):
    n = int(a["num_weights"])
    flat = idx.reshape(-1).astype(np.int64)
    rows = g.reshape((flat.shape[0], -1))
    if int(a.get("scale_grad_by_freq", 0)):
        if not is_np(xp):
            raise Unsupported("embedding gradient scaled by frequency under XLA")
        counts = np.bincount(flat, minlength=n)
        rows = rows / counts[flat][:, None].astype(g.dtype)
    pad = a.get("padding_idx")
    if pad is not None and int(pad) >= 0:
        rows = xp.where((flat == int(pad))[:, None], lit(g, 0), rows)
    return _add_at(xp, xp.zeros((n, rows.shape[1]), g.dtype), flat, rows)


pool = dict(groups=REDUCTION, infer=r.from_file, flops=r.input_flops(1))
op("max_pool_backward", **pool, min_inputs=3, max_inputs=3, impl=max_pool_backward,
   doc="the gradient of max pooling: each output's gradient added at its maximum's offset "
       "(aten.max_pool2d_with_indices_backward)")
op("avg_pool_backward", **pool, min_inputs=2, max_inputs=2, impl=avg_pool_backward,
   attrs={"kernel_shape": [], "strides": [], "pads": [], "count_include_pad": 1, "divisor_override": None},
   doc="the gradient of average pooling: each output's gradient shared over its window (aten.avg_pool2d_backward)")
op("adaptive_avg_pool_backward", **pool, min_inputs=2, max_inputs=2, impl=adaptive_avg_pool_backward,
   doc="the gradient of adaptive average pooling over PyTorch's bins (aten._adaptive_avg_pool2d_backward)")
op("embedding_backward", **pool, min_inputs=2, max_inputs=2, impl=embedding_backward,
   attrs={"num_weights": 0, "padding_idx": None, "scale_grad_by_freq": 0},
   doc="the gradient of an embedding lookup: rows summed per index (aten.embedding_dense_backward)")
