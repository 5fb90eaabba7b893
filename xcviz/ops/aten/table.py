"""The aten op table's elementwise, linear-algebra, convolution, normalization and reduction adapters: each
aten op -> one registry entry, with its arguments in the entry's conventions (see aten.adapters.translate)."""
from __future__ import annotations

from . import Adapters, Call, NotMapped, Ref, Spec, i64_const

ADAPTED = Adapters()  # this module's aten adapters, in order (aten.adapters.build_adapters puts them in the table)
aten = ADAPTED.aten

# ---- elementwise -----------------------------------------------------------------------------------------
_UNARY = {
    "relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp", "log": "log", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "neg": "neg", "abs": "abs", "erf": "erf", "sin": "sin", "cos": "cos", "tan": "tan",
    "reciprocal": "reciprocal", "floor": "floor", "ceil": "ceil", "round": "round", "sign": "sign",
    "silu": "silu", "hardswish": "hard_swish", "logical_not": "not", "isnan": "is_nan", "asin": "asin",
    "acos": "acos", "atan": "atan", "sinh": "sinh", "cosh": "cosh", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "relu6": "relu6", "bitwise_not": "bitwise_not",
    # copies and views that change nothing a compiler sees
    "clone": "identity", "alias": "identity", "detach": "identity", "contiguous": "identity",
    "lift_fresh_copy": "identity", "dropout": "identity", "feature_dropout": "identity",
}
for _name, _target in _UNARY.items():
    aten(_name, f"{_name}_", target=_target)(lambda c, _t=_target: Spec(_t, (c.args[0],)))

_BINARY = {"mul": "mul", "pow": "pow", "remainder": "mod", "fmod": "mod", "logical_and": "and", "logical_or": "or",
           "logical_xor": "xor", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
           "bitwise_xor": "bitwise_xor", "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor"}
_COMPARE = {"eq": "equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


def binary_spec(target: str, compare: bool = False):
    def fn(c: Call) -> Spec:
        x, y = c.args[0], c.args[1]
        like = c.t(0).dtype if isinstance(x, Ref) else c.t(1).dtype
        dtype = like if compare else None
        attrs = {"fmod": 1} if c.name == "fmod" else {"fmod": 0} if c.name == "remainder" else {}
        return Spec(target, (c.scalar(x, dtype), c.scalar(y, dtype)), attrs)
    return fn


for _name, _target in _BINARY.items():
    aten(_name, f"{_name}_", target=_target)(binary_spec(_target))
for _name, _target in _COMPARE.items():
    aten(_name, target=_target)(binary_spec(_target, compare=True))


@aten("rsub", target="sub")
def _rsub(c: Call) -> Spec:
    return Spec("sub", (c.scalar(c.args[1]), c.args[0]))


@aten("where", target="where")
def _where(c: Call) -> Spec:
    return Spec("where", (c.args[0], c.scalar(c.args[1]), c.scalar(c.args[2])))


@aten("masked_fill", "masked_fill_", target="where")
def _masked_fill(c: Call) -> Spec:
    return Spec("where", (c.args[1], c.scalar(c.args[2]), c.args[0]))


@aten("clamp", "clamp_", "hardtanh", "hardtanh_", target="clip")
def _clamp(c: Call) -> Spec:
    return Spec("clip", (c.args[0], c.scalar(c.args[1]), c.scalar(c.args[2])))


@aten("gelu", "gelu_", target="gelu")
def _gelu(c: Call) -> Spec:
    return Spec("gelu", (c.args[0],), {"approximate": c.args[1]})


@aten("leaky_relu", "leaky_relu_", target="leaky_relu")
def _leaky(c: Call) -> Spec:
    return Spec("leaky_relu", (c.args[0],), {"alpha": float(c.args[1])})


@aten("hardsigmoid", "hardsigmoid_", target="hard_sigmoid")
def _hardsigmoid(c: Call) -> Spec:
    return Spec("hard_sigmoid", (c.args[0],), {"alpha": 1 / 6, "beta": 0.5})


@aten("_to_copy", "to", "_to_dtype", target="cast")
def _to_copy(c: Call) -> Spec:
    return Spec("cast", (c.args[0],), {"to": c.dtype()})


# ---- linear algebra ----------------------------------------------------------------------------------------
aten("mm", "bmm", "matmul", target="matmul")(lambda c: Spec("matmul", (c.args[0], c.args[1])))
aten("linear", target="torch_linear")(lambda c: Spec("torch_linear", tuple(c.args[:3])))
aten("scaled_dot_product_attention", target="sdpa")(lambda c: _sdpa(c))


@aten("addmm", target="gemm")
def _addmm(c: Call) -> Spec:
    return Spec("gemm", (c.args[1], c.args[2], c.args[0]), {"beta": float(c.args[3]), "alpha": float(c.args[4])})


def _sdpa(c: Call) -> Spec:
    q, k, v, mask, dropout, causal, scale = c.args[:7]
    if dropout not in (0, 0.0):
        raise NotMapped("scaled_dot_product_attention with dropout")
    gqa = bool(c.args[7]) if len(c.args) > 7 else False
    return Spec("sdpa", (q, k, v, mask), {"is_causal": int(bool(causal)), "scale": scale, "enable_gqa": int(gqa)})


# ---- convolution and pooling -----------------------------------------------------------------------------
def _conv_attrs(c: Call, stride, padding, dilation, groups) -> dict:
    n = (c.rank(0) or 4) - 2
    if isinstance(padding, str):
        if padding == "same":
            return {"strides": list(stride) * (n // len(stride)), "auto_pad": "SAME_UPPER",
                    "dilations": list(dilation) * (n // len(dilation)), "group": int(groups)}
        padding = [0] * n
    pad = [int(p) for p in padding] * (n // len(padding))
    return {"strides": [int(s) for s in stride] * (n // len(stride)), "pads": pad + pad,
            "dilations": [int(d) for d in dilation] * (n // len(dilation)), "group": int(groups)}


@aten("conv1d", "conv2d", "conv3d", target="conv2d")
def _conv(c: Call) -> Spec:
    x, w, b, stride, padding, dilation, groups = c.args[:7]
    return Spec("conv2d", (x, w, b), _conv_attrs(c, stride, padding, dilation, groups))


@aten("conv_transpose1d", "conv_transpose2d", "conv_transpose3d", target="conv_transpose")
def _conv_transpose(c: Call) -> Spec:
    x, w, b, stride, padding, output_padding, groups, dilation = c.args[:8]
    attrs = _conv_attrs(c, stride, padding, dilation, groups)
    n = (c.rank(0) or 4) - 2
    attrs["output_padding"] = [int(p) for p in output_padding] * (n // len(output_padding))
    return Spec("conv_transpose", (x, w, b), attrs)


@aten("convolution", target="conv2d")
def _convolution(c: Call) -> Spec:
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = c.args[:9]
    attrs = _conv_attrs(c, stride, padding, dilation, groups)
    if transposed:
        attrs["output_padding"] = [int(p) for p in output_padding]
        return Spec("conv_transpose", (x, w, b), attrs)
    return Spec("conv2d", (x, w, b), attrs)


@aten("max_pool2d", "max_pool1d", "max_pool3d", target="maxpool")
def _max_pool(c: Call) -> Spec:
    x, kernel, stride, padding, dilation, ceil = c.args[:6]
    n = len(kernel)
    if any(int(d) != 1 for d in dilation):
        raise NotMapped("max_pool with dilation")
    pad = [int(p) for p in padding] * (n // len(padding))
    return Spec("maxpool", (x,), {"kernel_shape": [int(k) for k in kernel],
                                  "strides": [int(s) for s in (stride or kernel)] * (n // len(stride or kernel)),
                                  "pads": pad + pad, "ceil_mode": int(bool(ceil))})


@aten("avg_pool2d", "avg_pool1d", "avg_pool3d", target="avgpool")
def _avg_pool(c: Call) -> Spec:
    x, kernel, stride, padding, ceil, include_pad = c.args[:6]
    if len(c.args) > 6 and c.args[6] is not None:
        raise NotMapped("avg_pool with divisor_override")
    n = len(kernel)
    pad = [int(p) for p in padding] * (n // len(padding))
    return Spec("avgpool", (x,), {"kernel_shape": [int(k) for k in kernel],
                                  "strides": [int(s) for s in (stride or kernel)] * (n // len(stride or kernel)),
                                  "pads": pad + pad, "ceil_mode": int(bool(ceil)),
                                  "count_include_pad": int(bool(include_pad))})


# ---- normalization and softmax -----------------------------------------------------------------------------
@aten("batch_norm", target="batchnorm")
def _batch_norm(c: Call) -> Spec:
    x, w, b, mean, var, training, _momentum, eps = c.args[:8]
    if training or mean is None:
        raise NotMapped("batch_norm in training mode (export the module in eval())")
    return Spec("batchnorm", (x, w, b, mean, var), {"epsilon": float(eps)})


@aten("_native_batch_norm_legit_no_training", target="batchnorm")
def _bn_no_training(c: Call) -> Spec:
    x, w, b, mean, var, _momentum, eps = c.args[:7]
    return Spec("batchnorm", (x, w, b, mean, var), {"epsilon": float(eps)})


@aten("layer_norm", "native_layer_norm", target="layernorm")
def _layer_norm(c: Call) -> Spec:
    x, shape, w, b, eps = c.args[:5]
    return Spec("layernorm", (x, w, b), {"axis": -len(shape), "epsilon": float(eps)})


@aten("softmax", "_softmax", target="softmax")
def _softmax(c: Call) -> Spec:
    return Spec("softmax", (c.args[0],), {"axis": int(c.args[1])})


@aten("log_softmax", "_log_softmax", target="log_softmax")
def _log_softmax(c: Call) -> Spec:
    return Spec("log_softmax", (c.args[0],), {"axis": int(c.args[1])})


# ---- reductions ---------------------------------------------------------------------------------------------
def _reduce(target: str):
    def fn(c: Call) -> Spec:
        dims = c.args[1] if len(c.args) > 1 else None
        if isinstance(dims, int):
            dims = [dims]
        attrs = {"keepdims": int(bool(c.args[2])) if len(c.args) > 2 else 0}
        if dims:
            attrs["axes"] = [int(d) for d in dims]
        return Spec(target, (c.args[0],), attrs)
    return fn


for _name, _target in {"sum": "reduce_sum", "mean": "reduce_mean", "amax": "reduce_max", "amin": "reduce_min",
                       "prod": "reduce_prod"}.items():
    aten(_name, target=_target)(_reduce(_target))


def _argmax(c: Call) -> Spec:
    if c.args[1] is None:
        raise NotMapped(f"aten.{c.name} over the flattened tensor")
    return Spec(c.name, (c.args[0],), {"axis": int(c.args[1]), "keepdims": int(bool(c.args[2]))})


@aten("topk", target="topk")
def _topk(c: Call) -> Spec:
    x, k, dim, largest, sorted_ = c.args[:5]
    return Spec("topk", (x, i64_const([int(k)])), {"axis": int(dim), "largest": int(bool(largest)),
                                              "sorted": int(bool(sorted_))})


aten("argmax", target="argmax")(_argmax)
aten("argmin", target="argmin")(_argmax)
aten("nonzero", target="torch_nonzero")(lambda c: Spec("torch_nonzero", (c.args[0],)))
aten("cumsum", target="cumsum")(lambda c: Spec("cumsum", (c.args[0], i64_const(int(c.args[1])))))

