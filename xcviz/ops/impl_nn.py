"""Neural-network and layout implementations over `xp`; convolution has a lax.conv lowering for JAX."""
from __future__ import annotations

import math

import numpy as np

from .impl import Impl, Unsupported, ints, is_np, present, static


def _f(x, v):
    return np.asarray(v, dtype=x.dtype)


# ---- windows: conv and pooling ------------------------------------------------------------------
def _window(a, spatial, kernel, ceil=False):
    """strides, dilations, (begin, end) pads per spatial dim, and output sizes (ONNX rules incl. auto_pad)."""
    n = len(spatial)
    strides = [int(s) for s in (a.get("strides") or [1] * n)]
    dil = [int(d) for d in (a.get("dilations") or [1] * n)]
    pads = [int(p) for p in (a.get("pads") or [0] * (2 * n))]
    auto = str(a.get("auto_pad", "NOTSET")).upper()
    begin, end, out = [], [], []
    for i in range(n):
        eff = dil[i] * (kernel[i] - 1) + 1
        if auto in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-spatial[i] // strides[i])
            total = max((o - 1) * strides[i] + eff - spatial[i], 0)
            b = total // 2 if auto == "SAME_UPPER" else total - total // 2
            begin.append(b)
            end.append(total - b)
        elif auto == "VALID":
            begin.append(0)
            end.append(0)
        else:
            begin.append(pads[i])
            end.append(pads[i + n])
        num = spatial[i] + begin[i] + end[i] - eff
        o = (math.ceil(num / strides[i]) if ceil else num // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= spatial[i] + begin[i]:
            o -= 1  # the last window would start in the padding
        out.append(o)
    return strides, dil, begin, end, out


def _slices(off, strides, dil, out):
    return tuple(slice(off[i] * dil[i], off[i] * dil[i] + strides[i] * (out[i] - 1) + 1, strides[i])
                 for i in range(len(off)))


def conv(xp, a, x, w, b=None):
    """Native conv: one einsum per kernel offset over a padded input (any rank, groups, dilation)."""
    kernel = list(w.shape[2:])
    strides, dil, begin, end, out = _window(a, list(x.shape[2:]), kernel)
    group = int(a.get("group", 1))
    n, c = x.shape[:2]
    m = w.shape[0]
    pad = [(0, 0), (0, 0)] + [(bb, max(ee, 0)) for bb, ee in zip(begin, end)]
    xpad = xp.pad(x, pad)
    need = [(out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 for i in range(len(kernel))]
    xg = xpad.reshape((n, group, c // group) + tuple(xpad.shape[2:]))
    wg = w.reshape((group, m // group, w.shape[1]) + tuple(kernel))
    acc = None
    for off in np.ndindex(*kernel):
        sl = _slices(off, strides, dil, out)
        patch = xg[(slice(None),) * 3 + sl]
        term = xp.einsum("ngc...,gmc->ngm...", patch, wg[(slice(None),) * 3 + off])
        acc = term if acc is None else acc + term
    del need
    y = acc.reshape((n, m) + tuple(out)).astype(x.dtype)
    if present(b):
        y = y + b.reshape((1, -1) + (1,) * len(kernel))
    return y


def conv_jax(xp, a, x, w, b=None):
    from jax import lax

    kernel = list(w.shape[2:])
    strides, dil, begin, end, out = _window(a, list(x.shape[2:]), kernel)
    y = lax.conv_general_dilated(x, w, window_strides=strides, padding=list(zip(begin, end)), rhs_dilation=dil,
                                 feature_group_count=int(a.get("group", 1)), precision=lax.Precision.HIGHEST)
    if present(b):
        y = y + b.reshape((1, -1) + (1,) * len(kernel))
    return y


def _pool_kernel(a, x):
    nsp = x.ndim - 2
    kernel = [int(k) for k in (a.get("kernel_shape") or [2] * nsp)]
    attrs = dict(a)
    if not attrs.get("strides"):
        attrs["strides"] = list(kernel) if a.get("kernel_shape") is None else [1] * nsp
    return kernel, attrs


def maxpool(xp, a, x):
    if int(a.get("storage_order", 0)):
        raise Unsupported("MaxPool storage_order=1")
    kernel, attrs = _pool_kernel(a, x)
    strides, dil, begin, end, out = _window(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(len(kernel))]
    low = -np.inf if np.dtype(x.dtype).kind == "f" else np.iinfo(x.dtype).min
    xpad = xp.pad(x, [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(len(kernel))],
                  constant_values=_f(x, low))
    want_indices = int(a.get("_num_outputs", 1)) > 1
    if want_indices:  # ONNX Indices: flat position in the (unpadded) input, row-major; static, built in NumPy
        flat = np.pad(np.arange(int(np.prod(x.shape)), dtype=np.int64).reshape(x.shape),
                      [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(len(kernel))],
                      constant_values=-1)
    acc = idx = None
    for off in np.ndindex(*kernel):
        sl = (slice(None),) * 2 + _slices(off, strides, dil, out)
        v = xpad[sl]
        if want_indices:
            pos = flat[sl]
            idx = pos if acc is None else xp.where(v > acc, pos, idx)
        acc = v if acc is None else xp.maximum(acc, v)
    return (acc, idx) if want_indices else acc


def avgpool(xp, a, x):
    kernel, attrs = _pool_kernel(a, x)
    strides, dil, begin, end, out = _window(attrs, list(x.shape[2:]), kernel, bool(a.get("ceil_mode")))
    nsp = len(kernel)
    extra = [max((out[i] - 1) * strides[i] + dil[i] * (kernel[i] - 1) + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(nsp)]
    pad = [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(nsp)]
    xpad = xp.pad(x, pad)
    # counts are static: computed in NumPy from the shapes alone
    ones = np.ones(x.shape[2:], dtype=np.float64)
    if int(a.get("count_include_pad", 0)):
        ones = np.pad(ones, [(begin[i], end[i]) for i in range(nsp)], constant_values=1.0)
        cnt_pad = np.pad(ones, [(0, extra[i]) for i in range(nsp)])
    else:
        cnt_pad = np.pad(ones, [(begin[i], end[i] + extra[i]) for i in range(nsp)])
    acc, cnt = None, 0.0
    for off in np.ndindex(*kernel):
        sl = _slices(off, strides, dil, out)
        v = xpad[(slice(None),) * 2 + sl]
        acc = v if acc is None else acc + v
        cnt = cnt + cnt_pad[sl]
    return (acc / np.maximum(cnt, 1.0).astype(x.dtype)).astype(x.dtype)


def global_pool(kind):
    def fn(xp, a, x):
        axes = tuple(range(2, x.ndim))
        return (xp.mean if kind == "avg" else xp.max)(x, axis=axes, keepdims=True).astype(x.dtype)
    fn.__name__ = f"global_{kind}pool"
    return Impl(fn)


# ---- normalization and softmax -------------------------------------------------------------------
def _chan(v, rank):
    return v.reshape((1, -1) + (1,) * (rank - 2))


def batchnorm(xp, a, x, scale, bias, mean, var):
    if int(a.get("training_mode", 0)):
        raise Unsupported("BatchNormalization training_mode=1")
    eps = float(a.get("epsilon", 1e-5))
    inv = _chan(scale, x.ndim) / xp.sqrt(_chan(var, x.ndim) + _f(var, eps))
    y = ((x - _chan(mean, x.ndim)) * inv + _chan(bias, x.ndim)).astype(x.dtype)
    return y, mean, var


def layernorm(xp, a, x, scale=None, bias=None):
    axis = int(a.get("axis", -1)) % x.ndim
    axes = tuple(range(axis, x.ndim))
    eps = float(a.get("epsilon", 1e-5))
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    inv = _f(x, 1) / xp.sqrt(var + _f(x, eps))
    y = d * inv
    if present(scale):
        y = y * scale
    if present(bias):
        y = y + bias
    return y.astype(x.dtype), mean, inv


def instancenorm(xp, a, x, scale, bias):
    axes = tuple(range(2, x.ndim))
    eps = float(a.get("epsilon", 1e-5))
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    return (d / xp.sqrt(var + _f(x, eps)) * _chan(scale, x.ndim) + _chan(bias, x.ndim)).astype(x.dtype)


def softmax(xp, a, x, log=False):
    axis = int(a.get("axis", -1))
    z = x - xp.max(x, axis=axis, keepdims=True)
    e = xp.exp(z)
    s = xp.sum(e, axis=axis, keepdims=True)
    return (z - xp.log(s)) if log else e / s


def dropout(xp, a, x, ratio=None, training=None):
    if present(training) and bool(static(training, "Dropout training_mode").reshape(-1)[0]):
        raise Unsupported("Dropout in training mode (random)")
    return x, xp.ones(x.shape, dtype=bool)


# ---- resize and depth_to_space -------------------------------------------------------------------
def resize(xp, a, x, roi=None, scales=None, sizes=None):
    upsample = a.get("_op_type") in ("Upsample", "upsample")
    if upsample and scales is None and roi is not None:
        scales, roi = roi, None
    mode = str(a.get("mode", "nearest"))
    ctm = str(a.get("coordinate_transformation_mode", "asymmetric" if upsample else "half_pixel"))
    nearest_mode = str(a.get("nearest_mode", "floor" if upsample else "round_prefer_floor"))
    if mode not in ("nearest", "linear", "bilinear"):
        raise Unsupported(f"Resize mode {mode!r} (xcviz implements nearest and linear)")
    if int(a.get("antialias", 0)) or ctm in ("tf_crop_and_resize", "half_pixel_symmetric"):
        raise Unsupported(f"Resize with coordinate_transformation_mode={ctm!r} or antialias")
    if str(a.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        raise Unsupported("Resize keep_aspect_ratio_policy other than stretch")
    axes = a.get("axes")
    axes = list(range(x.ndim)) if axes is None else [int(v) % x.ndim for v in axes]
    sc = a.get("scales")
    sc = [float(v) for v in sc] if sc is not None else (
        [float(v) for v in static(scales, "Resize scales").reshape(-1)] if present(scales) else None)
    sz = [int(v) for v in ints(sizes, "Resize sizes")] if present(sizes) else None
    full_scale, full_size = [1.0] * x.ndim, list(x.shape)
    for j, ax in enumerate(axes):
        if sz is not None:
            full_size[ax] = sz[j]
            full_scale[ax] = sz[j] / x.shape[ax]
        elif sc is not None:
            full_scale[ax] = sc[j]
            full_size[ax] = int(math.floor(x.shape[ax] * sc[j]))
        else:
            raise Unsupported("Resize needs scales or sizes")
    y = x
    for ax in range(x.ndim):
        n_in, n_out, s = x.shape[ax], full_size[ax], full_scale[ax]
        if n_in == n_out and s == 1.0:
            continue
        o = np.arange(n_out, dtype=np.float64)
        if ctm == "half_pixel":
            c = (o + 0.5) / s - 0.5
        elif ctm == "pytorch_half_pixel":
            c = (o + 0.5) / s - 0.5 if n_out > 1 else np.zeros_like(o)
        elif ctm == "align_corners":
            # ONNX uses the unrounded resized length (n_in * scale), not the output size
            c = o * (n_in - 1) / (n_in * s - 1) if n_in * s > 1 else np.zeros_like(o)
        elif ctm == "asymmetric":
            c = o / s
        elif ctm == "tf_half_pixel_for_nn":
            c = (o + 0.5) / s
        else:
            raise Unsupported(f"Resize coordinate_transformation_mode {ctm!r}")
        if mode == "nearest":
            r = {"round_prefer_floor": np.ceil(c - 0.5), "round_prefer_ceil": np.floor(c + 0.5),
                 "floor": np.floor(c), "ceil": np.ceil(c)}.get(nearest_mode)
            if r is None:
                raise Unsupported(f"Resize nearest_mode {nearest_mode!r}")
            y = xp.take(y, np.clip(r, 0, n_in - 1).astype(np.int64), axis=ax)
        else:
            c = np.clip(c, 0, n_in - 1)
            i0 = np.floor(c).astype(np.int64)
            i1 = np.minimum(i0 + 1, n_in - 1)
            w = (c - i0).astype(x.dtype).reshape((-1,) + (1,) * (x.ndim - 1 - ax))
            y = xp.take(y, i0, axis=ax) * (_f(x, 1) - w) + xp.take(y, i1, axis=ax) * w
    return y.astype(x.dtype)


def depth_to_space(xp, a, x):
    b = int(a.get("blocksize", 2))
    n, c, h, w = x.shape
    if str(a.get("mode", "DCR")).upper() == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


IMPLS: dict[str, Impl] = {
    "conv2d": Impl(conv, jax_fn=conv_jax),
    "maxpool": Impl(maxpool),
    "avgpool": Impl(avgpool),
    "global_avgpool": global_pool("avg"),
    "global_maxpool": global_pool("max"),
    "batchnorm": Impl(batchnorm),
    "layernorm": Impl(layernorm),
    "instancenorm": Impl(instancenorm),
    "softmax": Impl(lambda xp, a, x: softmax(xp, a, x)),
    "log_softmax": Impl(lambda xp, a, x: softmax(xp, a, x, log=True)),
    "dropout": Impl(dropout, static=(2,)),
    "resize": Impl(resize, static=(1, 2, 3)),
    "depth_to_space": Impl(depth_to_space),
}


# ---- layout ---------------------------------------------------------------------------------------
def reshape(xp, a, x, shape=None):
    target = a.get("shape")
    target = list(target) if target is not None else ints(shape, "Reshape shape")
    if not int(a.get("allowzero", 0)):
        target = [x.shape[i] if t == 0 and i < x.ndim else t for i, t in enumerate(target)]
    return x.reshape(tuple(int(t) for t in target))


def transpose(xp, a, x, perm=None):
    p = a.get("perm")
    p = list(p) if p is not None else (ints(perm, "Transpose perm") if present(perm) else list(range(x.ndim))[::-1])
    return xp.transpose(x, [int(v) for v in p])


def flatten(xp, a, x):
    axis = int(a.get("axis", 1))
    axis = axis % x.ndim if axis < 0 else axis
    return x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))


def _axes(a, v, what):
    axes = a.get("axes")
    if axes is None and present(v):
        axes = ints(v, what)
    return None if axes is None else [int(t) for t in axes]


def squeeze(xp, a, x, axes=None):
    ax = _axes(a, axes, "Squeeze axes")
    if ax is None:
        return x.reshape(tuple(d for d in x.shape if d != 1))
    ax = {t % x.ndim for t in ax}
    return x.reshape(tuple(d for i, d in enumerate(x.shape) if i not in ax))


def unsqueeze(xp, a, x, axes=None):
    ax = _axes(a, axes, "Unsqueeze axes")
    r = x.ndim + len(ax)
    ax = sorted(t % r for t in ax)
    shape, it = [], iter(x.shape)
    for i in range(r):
        shape.append(1 if i in ax else next(it))
    return x.reshape(tuple(shape))


def gather(xp, a, x, idx):
    axis = int(a.get("axis", 0)) % x.ndim
    n = x.shape[axis]
    if is_np(xp):
        idx = np.asarray(idx)
        if idx.size and (idx.min() < -n or idx.max() >= n):
            raise Unsupported(f"Gather index out of range [-{n}, {n})")
        return np.take(x, np.where(idx < 0, idx + n, idx), axis=axis)
    idx = xp.where(idx < 0, idx + n, idx)
    return xp.take(x, idx, axis=axis, mode="clip")


def slice_(xp, a, x, starts=None, ends=None, axes=None, steps=None):
    if a.get("starts") is not None and starts is None:  # opset < 10: attributes
        starts, ends, axes = np.asarray(a["starts"]), np.asarray(a["ends"]), a.get("axes")
        axes = None if axes is None else np.asarray(axes)
    st, en = ints(starts, "Slice starts"), ints(ends, "Slice ends")
    ax = ints(axes, "Slice axes") if present(axes) else list(range(len(st)))
    sp = ints(steps, "Slice steps") if present(steps) else [1] * len(st)
    idx = [slice(None)] * x.ndim
    for s, e, axis, step in zip(st, en, ax, sp):
        axis %= x.ndim
        rng = range(*slice(s, e, step).indices(x.shape[axis]))
        if len(rng) == 0:
            idx[axis] = slice(0, 0)
        else:
            stop = rng.stop if rng.stop >= 0 else None
            idx[axis] = slice(rng.start, stop, step)
    return x[tuple(idx)]


def split(xp, a, x, sizes=None):
    axis = int(a.get("axis", 0)) % x.ndim
    sz = a.get("split")
    sz = [int(v) for v in sz] if sz is not None else (ints(sizes, "Split sizes") if present(sizes) else None)
    if sz is None:
        k = int(a.get("num_outputs") or a.get("_num_outputs") or 1)
        n = x.shape[axis]
        chunk = -(-n // k)
        sz = [chunk] * (k - 1) + [n - chunk * (k - 1)]
    bounds = np.cumsum([0] + sz)
    return tuple(xp.take(x, np.arange(bounds[i], bounds[i + 1]), axis=axis) for i in range(len(sz)))


def pad(xp, a, x, pads=None, value=None, axes=None):
    mode = str(a.get("mode", "constant"))
    p = a.get("pads")
    p = [int(v) for v in p] if p is not None else ints(pads, "Pad pads")
    ax = ints(axes, "Pad axes") if present(axes) else list(range(x.ndim))
    k = len(ax)
    full = [[0, 0] for _ in range(x.ndim)]
    for j, axis in enumerate(ax):
        full[axis % x.ndim] = [p[j], p[j + k]]
    grow = [(max(b, 0), max(e, 0)) for b, e in full]
    if mode == "constant":
        cv = value if present(value) else a.get("value", 0)
        cv = xp.asarray(cv, dtype=x.dtype).reshape(()) if hasattr(cv, "shape") or is_np(xp) else cv
        y = xp.pad(x, grow, constant_values=cv)
    elif mode in ("reflect", "edge", "wrap"):
        y = xp.pad(x, grow, mode=mode)
    else:
        raise Unsupported(f"Pad mode {mode!r}")
    crop = tuple(slice(-b if b < 0 else 0, (y.shape[i] + e) if e < 0 else None) for i, (b, e) in enumerate(full))
    return y[crop]


def expand(xp, a, x, shape):
    target = tuple(ints(shape, "Expand shape"))
    return xp.broadcast_to(x, np.broadcast_shapes(tuple(x.shape), target))


def tile(xp, a, x, reps):
    return xp.tile(x, tuple(ints(reps, "Tile repeats")))


IMPLS.update({
    "reshape": Impl(reshape, static=(1,)),
    "transpose": Impl(transpose, static=(1,)),
    "concat": Impl(lambda xp, a, *xs: xp.concatenate(xs, axis=int(a.get("axis", 0)))),
    "flatten": Impl(flatten),
    "squeeze": Impl(squeeze, static=(1,)),
    "unsqueeze": Impl(unsqueeze, static=(1,)),
    "gather": Impl(gather),
    "slice": Impl(slice_, static=(1, 2, 3, 4)),
    "split": Impl(split, static=(1,)),
    "pad": Impl(pad, static=(1, 3)),
    "expand": Impl(expand, static=(1,)),
    "tile": Impl(tile, static=(1,)),
    "identity": Impl(lambda xp, a, x: x),
})
