"""The aten op table's rows for the rest of torch's Core ATen opset (torch.Tag.core) and the non-core ops
real timm and transformers programs keep: math and comparison overloads, reductions with indices, sorting,
normalization with statistics, pooling with indices, resampling, padding modes, scatters and random sources."""
from __future__ import annotations

import numpy as np

from . import Adapters, Call, Const, NotMapped, Ref, Spec, i64_const, target_shape, static_ints
from .layout import filled_spec, pad_spec
from .table import binary_spec

ADAPTED = Adapters()  # this module's aten adapters, in order (aten.adapters.build_adapters puts them in the table)
aten = ADAPTED.aten

# sizes and scalars read out of tensors: not tensor ops, the loader keeps them as symbolic sizes
SIZE_QUERIES = frozenset({"sym_size", "sym_numel", "sym_stride", "sym_storage_offset", "_local_scalar_dense"})

# ---- elementwise -------------------------------------------------------------------------------------------
for _name, _target in {"expm1": "expm1", "log1p": "log1p", "log2": "log2", "log10": "log10", "trunc": "trunc",
                       "fix": "trunc", "isinf": "is_inf"}.items():
    aten(_name, f"{_name}_", target=_target)(lambda c, _t=_target: Spec(_t, (c.args[0],)))
aten("atan2", "arctan2", target="atan2")(binary_spec("atan2"))
aten("ne", "not_equal", target="not_equal")(binary_spec("not_equal", compare=True))


@aten("add", "add_", "sub", "sub_", target="add")
def _add(c: Call) -> Spec:
    alpha = c.args[2] if len(c.args) > 2 else 1
    if alpha in (1, 1.0):
        return binary_spec(c.name.rstrip("_"))(Call(c.name.rstrip("_"), c.args[:2], c.out, c.types))
    alpha = -alpha if c.name.startswith("sub") else alpha
    return Spec("add_scaled", (c.scalar(c.args[0]), c.scalar(c.args[1])), {"alpha": float(alpha)})


@aten("div", "div_", target="div")
def _div(c: Call) -> Spec:
    mode = c.args[2] if len(c.args) > 2 else None
    x, y = c.scalar(c.args[0]), c.scalar(c.args[1])
    ints = [v for v in (x, y) if isinstance(v, Ref) and (c.types.get(v) and c.types[v].dtype or "").startswith(
        ("int", "uint", "bool"))]
    if mode is None and not ints:
        return Spec("div", (x, y))
    # true division of integers gives floats in torch; rounding modes floor or trunc
    return Spec("div_rounding", (x, y), {"rounding_mode": str(mode), "to": c.dtype()})


@aten("elu", "elu_", target="elu")
def _elu(c: Call) -> Spec:
    alpha, scale, input_scale = (float(v) for v in c.args[1:4])
    if input_scale != 1:
        raise NotMapped("aten.elu with input_scale other than 1")
    if scale != 1:  # selu is elu with a scale (torch decomposes selu so)
        return Spec("selu", (c.args[0],), {"alpha": alpha, "gamma": scale})
    return Spec("elu", (c.args[0],), {"alpha": alpha})


@aten("maximum", "max", "minimum", "min", target="max")
def _max_min(c: Call) -> Spec:
    kind = "max" if c.name.startswith("max") else "min"
    if len(c.args) == 1:                                   # max.default: over every element
        return Spec(f"reduce_{kind}", (c.args[0],), {"keepdims": 0})
    if isinstance(c.args[1], Ref):                         # max.other / maximum: elementwise
        return Spec(kind, (c.args[0], c.args[1]))
    keep = bool(c.args[2]) if len(c.args) > 2 else False  # max.dim: values and indices
    return Spec(f"{kind}_with_index", (c.args[0],), {"axis": int(c.args[1]), "keepdims": int(keep)})


# ---- reductions and sorting ----------------------------------------------------------------------------------
def _dims(v) -> list[int] | None:
    if v is None:
        return None
    return [int(v)] if isinstance(v, (int, np.integer)) else [int(d) for d in v] or None


@aten("any", target="reduce_any")
def _any(c: Call) -> Spec:
    dims, keep = (_dims(c.args[1]), bool(c.args[2])) if len(c.args) > 1 else (None, False)
    return Spec("reduce_any", (c.args[0],), {"axes": dims, "keepdims": int(keep)})


@aten("var", target="variance")
def _var(c: Call) -> Spec:
    x, dims, corr, keep = (c.args + [None, None, None])[:4]
    corr = 1 if corr is None or corr is True else 0 if corr is False else corr  # var.dim: unbiased as a bool
    return Spec("variance", (x,), {"axes": _dims(dims), "keepdims": int(bool(keep)), "correction": float(corr)})


@aten("sort", target="sort")
def _sort(c: Call) -> Spec:
    return Spec("sort", (c.args[0],), {"axis": int(c.args[1]), "descending": int(bool(c.args[2]))})


@aten("diff", target="diff")
def _diff(c: Call) -> Spec:
    x, n, dim, prepend, append = c.args[:5]
    return Spec("diff", (x, prepend, append), {"n": int(n), "axis": int(dim)})


@aten("_cdist_forward", target="cdist")
def _cdist(c: Call) -> Spec:
    return Spec("cdist", (c.args[0], c.args[1]), {"p": float(c.args[2])})


aten("_pdist_forward", target="pdist")(lambda c: Spec("pdist", (c.args[0],), {"p": float(c.args[1])}))


# ---- normalization -------------------------------------------------------------------------------------------
@aten("native_group_norm", target="torch_group_norm")
def _native_group_norm(c: Call) -> Spec:
    x, w, b, _n, _c, _hw, groups, eps = c.args[:8]
    return Spec("torch_group_norm", (x, w, b), {"groups": int(groups), "epsilon": float(eps)})


@aten("group_norm", target="torch_group_norm")
def _group_norm(c: Call) -> Spec:
    x, groups, w, b, eps = c.args[:5]
    return Spec("torch_group_norm", (x, w, b), {"groups": int(groups), "epsilon": float(eps)})


@aten("_native_batch_norm_legit", target="torch_batch_norm_stats")
def _bn_legit(c: Call) -> Spec:
    if len(c.args) == 6:                                     # .no_stats: (input, weight, bias, training, momentum, eps)
        x, w, b, training, _m, eps = c.args
        mean = var = None
    else:
        x, w, b, mean, var, training, _m, eps = c.args[:8]
    if training or mean is None:
        return Spec("torch_batch_norm_stats", (x, w, b), {"epsilon": float(eps)})
    shape = c.t(0).shape
    if (w is None or b is None) and (shape is None or not isinstance(shape[1], int)):
        raise NotMapped("batch norm without weight or bias over a symbolic channel count")
    dt = c.t(0).dtype or "float32"
    w = w if w is not None else Const(np.ones(shape[1], dt))
    b = b if b is not None else Const(np.zeros(shape[1], dt))
    return Spec("batchnorm", (x, w, b, mean, var), {"epsilon": float(eps)})


@aten("_weight_norm", "_weight_norm_interface", target="weight_norm")
def _weight_norm(c: Call) -> Spec:
    return Spec("weight_norm", (c.args[0], c.args[1]), {"axis": int(c.args[2])})


@aten("native_dropout", target="dropout")
def _native_dropout(c: Call) -> Spec:
    if c.args[2] and float(c.args[1]) != 0:
        raise NotMapped("native_dropout in training mode (random)")
    return Spec("dropout", (c.args[0],))


# ---- pooling, resampling, padding ------------------------------------------------------------------------------
@aten("max_pool2d_with_indices", "max_pool3d_with_indices", "max_pool1d_with_indices", target="maxpool_with_index")
def _max_pool_idx(c: Call) -> Spec:
    x, kernel, stride, padding, dilation, ceil = c.args[:6]
    n = len(kernel)

    def full(v, default):
        v = [int(k) for k in (v or default)]
        return v * (n // len(v))
    return Spec("maxpool_with_index", (x,), {"kernel_shape": full(kernel, kernel), "strides": full(stride, kernel),
                                              "pads": full(padding, [0]), "dilations": full(dilation, [1]),
                                              "ceil_mode": int(bool(ceil))})


@aten("adaptive_avg_pool2d", "adaptive_avg_pool1d", "_adaptive_avg_pool2d", "adaptive_avg_pool3d",
      "_adaptive_avg_pool3d", target="adaptive_avgpool")
def _adaptive(c: Call) -> Spec:
    size = c.args[1]
    if all(int(s) == 1 for s in size):
        return Spec("global_avgpool", (c.args[0],))
    return Spec("adaptive_avgpool", (c.args[0],), {"output_size": static_ints(size, "output_size")})


@aten("upsample_nearest2d", "upsample_nearest1d", "upsample_nearest3d", "upsample_bilinear2d", "upsample_linear1d",
      "upsample_trilinear3d", "upsample_bicubic2d", target="resize")
def _upsample(c: Call) -> Spec:
    shape = c.out[0].shape
    if shape is None or any(not isinstance(d, int) for d in shape):
        raise NotMapped(f"aten.{c.name} to a symbolic size")
    if "nearest" in c.name:
        attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
    else:
        align = bool(c.args[2])
        attrs = {"mode": "cubic" if "bicubic" in c.name else "linear",
                 "coordinate_transformation_mode": "align_corners" if align else "pytorch_half_pixel"}
        if "bicubic" in c.name:
            attrs["cubic_coeff_a"] = -0.75
    return Spec("resize", (c.args[0], None, None, i64_const(list(shape))), attrs)


@aten("grid_sampler_2d", "grid_sampler", target="grid_sample")
def _grid_sampler(c: Call) -> Spec:
    x, grid, interp, padding, align = c.args[:5]
    mode = {0: "linear", 1: "nearest", 2: "cubic"}[int(interp)]
    pad = {0: "zeros", 1: "border", 2: "reflection"}[int(padding)]
    return Spec("grid_sample", (x, grid), {"mode": mode, "padding_mode": pad, "align_corners": int(bool(align))})


@aten("col2im", target="col2im")
def _col2im(c: Call) -> Spec:
    x, size, kernel, dilation, padding, stride = c.args[:6]
    pads = [int(p) for p in padding]
    return Spec("col2im", (x, i64_const(static_ints(size, "output_size")), i64_const([int(k) for k in kernel])),
                {"dilations": [int(d) for d in dilation], "pads": pads + pads, "strides": [int(s) for s in stride]})


def _mode_pad(mode: str):
    def fn(c: Call) -> Spec:
        return pad_spec(Call("pad", [c.args[0], c.args[1], mode, None], c.out, c.types))
    return fn


for _n in (1, 2, 3):
    aten(f"reflection_pad{_n}d", target="pad")(_mode_pad("reflect"))
    aten(f"replication_pad{_n}d", target="pad")(_mode_pad("replicate"))


# ---- scatters and indexing -----------------------------------------------------------------------------------
_REDUCE = {"sum": "add", "add": "add", "prod": "mul", "multiply": "mul", "amax": "max", "amin": "min"}


@aten("scatter", "scatter_add", "scatter_reduce", target="scatter_elements")
def _scatter(c: Call) -> Spec:
    x, dim, idx, src = c.args[:4]
    reduction = "add" if c.name == "scatter_add" else "none"
    if c.name == "scatter_reduce":
        include_self = c.args[5] if len(c.args) > 5 else True
        if c.args[4] not in _REDUCE or not include_self:
            raise NotMapped(f"scatter_reduce {c.args[4]!r} with include_self={include_self}")
        reduction = _REDUCE[c.args[4]]
    elif len(c.args) > 4 and isinstance(c.args[4], str):    # scatter.reduce / scatter.value_reduce
        reduction = _REDUCE.get(c.args[4], "")
        if not reduction:
            raise NotMapped(f"scatter with reduce={c.args[4]!r}")
    if not isinstance(src, Ref):                             # scatter.value: the scalar at every index
        shape = c.t(2).shape
        if shape is None or any(not isinstance(d, int) for d in shape):
            raise NotMapped("scatter of a scalar at an index of symbolic shape")
        src = Const(np.full(shape, src, dtype=np.dtype(c.dtype() if c.dtype() != "bfloat16" else "float32")))
    return Spec("scatter_elements", (x, idx, src), {"axis": int(dim), "reduction": reduction})


@aten("select_scatter", target="select_scatter")
def _select_scatter(c: Call) -> Spec:
    return Spec("select_scatter", (c.args[0], c.args[1]), {"axis": int(c.args[2]),
                                                           "index": static_ints([c.args[3]], "index")[0]})


@aten("slice_scatter", target="slice_scatter")
def _slice_scatter(c: Call) -> Spec:
    x, src, dim, start, end, step = c.args[:6]
    bounds = [v for v in (start, end, step) if v is not None]
    static_ints(bounds, "slice bounds")
    end = None if end is not None and end >= 2**62 else end
    return Spec("slice_scatter", (x, src), {"axis": int(dim), "start": start, "end": end, "step": int(step)})


aten("masked_scatter", target="masked_scatter")(lambda c: Spec("masked_scatter", tuple(c.args[:3])))


def _index_tensors(c: Call, indices) -> tuple[list, list[int]]:
    given = [(k, t) for k, t in enumerate(indices) if t is not None]
    for _k, t in given:
        if not isinstance(t, Ref):
            raise NotMapped("aten.index with a non-tensor index")
        if (c.types.get(t) and c.types[t].dtype) == "bool":
            raise NotMapped("aten.index with a boolean mask (data-dependent shape)")
    return [t for _k, t in given], [k for k, _t in given]


@aten("index", "_unsafe_index", target="torch_index")
def _index(c: Call) -> Spec:
    refs, dims = _index_tensors(c, c.args[1])
    return Spec("torch_index", (c.args[0], *refs), {"dims": dims})


@aten("index_put", "index_put_", "_unsafe_index_put", target="torch_index_put")
def _index_put(c: Call) -> Spec:
    refs, dims = _index_tensors(c, c.args[1])
    accumulate = bool(c.args[3]) if len(c.args) > 3 else False
    return Spec("torch_index_put", (c.args[0], c.scalar(c.args[2]), *refs), {"dims": dims,
                                                                            "accumulate": int(accumulate)})


@aten("flip", target="slice")
def _flip(c: Call) -> Spec:
    dims = [int(d) for d in c.args[1]]
    return Spec("slice", (c.args[0], i64_const([-1] * len(dims)), i64_const([-2**62] * len(dims)), i64_const(dims),
                          i64_const([-1] * len(dims))))


@aten("diagonal", "diagonal_copy", target="diagonal")
def _diagonal(c: Call) -> Spec:
    return Spec("diagonal", (c.args[0],), {"offset": int(c.args[1]), "axis1": int(c.args[2]), "axis2": int(c.args[3])})


@aten("as_strided", "as_strided_copy", target="as_strided")
def _as_strided(c: Call) -> Spec:
    offset = c.args[3] if len(c.args) > 3 and c.args[3] is not None else 0
    return Spec("as_strided", (c.args[0],), {"size": static_ints(c.args[1], "size"), "stride": static_ints(c.args[2], "stride"),
                                             "storage_offset": static_ints([offset], "storage offset")[0]})


@aten("unbind", "unbind_copy", target="tf.Unpack")
def _unbind(c: Call) -> Spec:
    return Spec("tf.Unpack", (c.args[0],), {"axis": int(c.args[1]), "num": len(c.out)})


aten("reshape_as", "view_as", target="reshape")(lambda c: Spec("reshape", (c.args[0],), {"shape": target_shape(c)}))


@aten("copy", "copy_", target="cast")
def _copy(c: Call) -> Spec:
    dst, src = c.t(0), c.t(1)
    if dst.shape == src.shape and dst.shape is not None:
        return Spec("cast", (c.args[1],), {"to": dst.dtype or c.dtype()})
    if dst.dtype == src.dtype and dst.shape is not None and all(isinstance(d, int) for d in dst.shape):
        return Spec("expand", (c.args[1], i64_const(list(dst.shape))))
    raise NotMapped("aten.copy that both broadcasts and casts")


# ---- tensors made from sizes -------------------------------------------------------------------------------------
aten("empty", "empty_strided", "empty_like", "new_empty", target="const")(lambda c: filled_spec(c, 0))
@aten("fill", "fill_", "new_full", target="const")
def _fill(c: Call) -> Spec:
    value, shape = c.args[1], c.out[0].shape
    if not isinstance(value, Ref):
        return filled_spec(c, value)
    # fill.Tensor: a 0-d tensor broadcast to self's shape
    if shape is None or any(not isinstance(d, int) for d in shape) or c.t(1).dtype != c.dtype():
        raise NotMapped("fill with a tensor value of another dtype or to a symbolic shape")
    return Spec("expand", (value, i64_const(list(shape))))


def _random(kind: str):
    def fn(c: Call) -> Spec:
        shape = c.out[0].shape
        if shape is None or any(not isinstance(d, int) for d in shape):
            raise NotMapped(f"aten.{c.name} of a symbolic shape")
        return Spec(kind, (), {"shape": list(shape), "dtype": c.dtype()})
    return fn


aten("rand", "rand_like", target="random_uniform")(_random("random_uniform"))
aten("randn", "randn_like", target="random_normal")(_random("random_normal"))


@aten("randperm", target="randperm")
def _randperm(c: Call) -> Spec:
    return Spec("randperm", (), {"n": static_ints([c.args[0]], "n")[0], "dtype": c.dtype()})


# ---- embedding bags and FFTs ---------------------------------------------------------------------------------------
@aten("_embedding_bag", "_embedding_bag_forward_only", target="embedding_bag")
def _embedding_bag(c: Call) -> Spec:
    w, idx, offsets, _scale, mode, _sparse, psw, last, pad = (c.args + [None] * 9)[:9]
    return Spec("embedding_bag", (w, idx, offsets, psw), {"mode": int(mode), "include_last_offset": int(bool(last)),
                                                          "padding_idx": None if pad is None else int(pad)})


@aten("_fft_r2c", target="fft_r2c")
def _fft_r2c(c: Call) -> Spec:
    return Spec("fft_r2c", (c.args[0],), {"dims": [int(d) for d in c.args[1]], "normalization": int(c.args[2]),
                                          "onesided": int(bool(c.args[3]))})


@aten("_fft_c2r", target="fft_c2r")
def _fft_c2r(c: Call) -> Spec:
    return Spec("fft_c2r", (c.args[0],), {"dims": [int(d) for d in c.args[1]], "normalization": int(c.args[2]),
                                          "last_dim_size": static_ints([c.args[3]], "last_dim_size")[0]})
