"""Where each op's XLA verdict comes from, per device: the TensorFlow kernels it lowers to (tf2xla) or the rule
by which TensorFlow's auto-clustering (or XLA) refuses it.

Every ONNX/xcviz op maps onto the TF ops a converter lowers it to (onnx-tensorflow's handlers: Trilu ->
MatrixBandPart, ConstantOfShape -> Fill, ConvTranspose -> Conv2DBackpropInput, ...). An op is a candidate on a
device when every one of them has an XLA kernel there (ops/tf/kernels.py: TF 2.21's XLA_CPU_JIT/XLA_GPU_JIT
registrations, XLA_TPU_JIT from the generic ones) and TF's auto-clustering filter for that device lets it in.
The filter (tensorflow/compiler/jit/compilability_check_util.cc, RecursiveCompilabilityChecker, with the switches
mark_for_compilation_pass.cc sets) refuses stateful RNG ops, Assert/CheckNumerics, variant tensors, string
constants and Unique. Checked against TensorFlow 2.21 itself (tools/tf_autoclustering.py writes
tests/data/tf_suite/autoclustering_ops.json: auto-jit on CPU, min cluster size 1): every TF op below is
clustered, ResizeBilinear, Where and an int32 Conv2D included; Unique, RandomUniform and NonMaxSuppressionV4 are not."""
from __future__ import annotations

from .tf.kernels import has_kernel, kernel_devices

# canonical op -> the TF ops it lowers to; "Op:T=int32" when a fixed dtype picks the kernel's type constraint
TF_EQUIV: dict[str, str] = {
    "abs": "Abs", "acos": "Acos", "acosh": "Acosh", "add": "AddV2", "and": "LogicalAnd", "argmax": "ArgMax",
    "argmin": "ArgMin", "asin": "Asin", "asinh": "Asinh", "atan": "Atan", "atanh": "Atanh",
    "avgpool": "AvgPool AvgPool3D", "batchnorm": "FusedBatchNormV3", "bias_add": "BiasAdd", "cast": "Cast",
    "ceil": "Ceil", "clip": "ClipByValue", "concat": "ConcatV2", "const": "Const", "constant_of_shape": "Fill",
    "conv2d": "Conv2D Conv3D DepthwiseConv2dNative", "conv_integer": "Conv2D:T=int32 Cast Sub",
    "conv_transpose": "Conv2DBackpropInput Conv3DBackpropInputV2", "cos": "Cos", "cosh": "Cosh",
    "cumsum": "Cumsum", "depth_to_space": "DepthToSpace", "dequantize_linear": "Cast Sub Mul",
    "div": "RealDiv Div", "dropout": "Identity", "dynamic_quantize_linear": "Min Max RealDiv Round ClipByValue Cast",
    "einsum": "Einsum", "elu": "Elu", "equal": "Equal", "erf": "Erf", "exp": "Exp", "expand": "BroadcastTo",
    "flatten": "Reshape", "floor": "Floor", "gather": "GatherV2", "gather_elements": "GatherNd",
    "gather_nd": "GatherNd", "gelu": "Erf Mul AddV2", "gemm": "MatMul AddV2", "global_avgpool": "Mean",
    "global_maxpool": "Max", "greater": "Greater", "greater_equal": "GreaterEqual",
    "gru": "While MatMul AddV2 Mul Sigmoid Tanh", "hard_sigmoid": "Mul AddV2 ClipByValue",
    "hard_swish": "Mul Relu6", "hardmax": "ArgMax OneHot", "identity": "Identity", "if": "If",
    "instancenorm": "Mean SquaredDifference Rsqrt Mul AddV2", "is_inf": "IsInf", "is_nan": "IsNan",
    "layernorm": "Mean SquaredDifference Rsqrt Mul AddV2", "leaky_relu": "LeakyRelu", "less": "Less",
    "less_equal": "LessEqual", "log": "Log", "log_softmax": "LogSoftmax", "loop": "While", "lrn": "LRN",
    "lstm": "While MatMul AddV2 Mul Sigmoid Tanh", "matmul": "BatchMatMulV2",
    "matmul_integer": "MatMul:T=int32 Cast Sub", "max": "Maximum", "maxpool": "MaxPool MaxPool3D",
    "mean": "AddN RealDiv", "min": "Minimum", "mod": "FloorMod TruncateMod", "mul": "Mul", "neg": "Neg",
    "noop": "NoOp", "not": "LogicalNot", "one_hot": "OneHot", "or": "LogicalOr", "pad": "PadV2 MirrorPad",
    "pow": "Pow", "qlinear_conv": "Conv2D:T=int32 Round ClipByValue Cast",
    "qlinear_matmul": "MatMul:T=int32 Round ClipByValue Cast", "quantize_linear": "RealDiv Round ClipByValue Cast",
    "range": "Range", "rank": "Rank", "reciprocal": "Reciprocal", "reduce_max": "Max", "reduce_mean": "Mean",
    "reduce_min": "Min", "reduce_prod": "Prod", "reduce_sum": "Sum", "relu": "Relu", "relu6": "Relu6",
    "reshape": "Reshape", "resize": "ResizeNearestNeighbor ResizeBilinear",
    "rnn": "While MatMul AddV2 Tanh", "round": "Round", "rsqrt": "Rsqrt", "scan": "While",
    "scatter_elements": "TensorScatterUpdate TensorScatterAdd TensorScatterMax TensorScatterMin",
    "scatter_nd": "TensorScatterUpdate TensorScatterAdd TensorScatterMax TensorScatterMin",
    "sdpa": "BatchMatMulV2 Softmax Mul", "selu": "Selu", "shape": "Shape", "sigmoid": "Sigmoid",
    "sign": "Sign", "silu": "Sigmoid Mul", "sin": "Sin", "sinh": "Sinh", "size": "Size", "slice": "StridedSlice",
    "softmax": "Softmax", "softplus": "Softplus", "softsign": "Softsign", "split": "SplitV", "sqrt": "Sqrt",
    "squared_difference": "SquaredDifference", "squeeze": "Squeeze", "sub": "Sub", "sum": "AddN", "tan": "Tan",
    "tanh": "Tanh", "thresholded_relu": "Greater SelectV2", "tile": "Tile", "topk": "TopKV2",
    "torch_gru": "While MatMul AddV2 Mul Sigmoid Tanh", "torch_lstm": "While MatMul AddV2 Mul Sigmoid Tanh",
    "torch_linear": "MatMul BiasAdd", "transpose": "Transpose", "trilu": "MatrixBandPart",
    "unsqueeze": "ExpandDims", "where": "SelectV2", "xor": "LogicalAnd LogicalOr LogicalNot",
    # the newer ONNX ops (reduce.py, norm.py, pooling.py, bitwise.py, activations.py, indexing.py, sampling.py,
    # signal.py, losses.py, attention.py): only TF ops TF 2.21's auto-clustering takes
    # (tests/data/tf_suite/autoclustering_ops.json)
    "reduce_sum_square": "Mul Sum", "reduce_l1": "Abs Sum", "reduce_l2": "Mul Sum Sqrt",
    "reduce_log_sum": "Sum Log", "reduce_log_sum_exp": "Max Sub Exp Sum Log AddV2", "cumprod": "Cumprod",
    "lp_normalization": "Abs Mul Sum Sqrt RealDiv SelectV2",
    "mean_variance_normalization": "Mean Mul Sub Sqrt AddV2 RealDiv",
    "rms_normalization": "Cast Mul Mean AddV2 Rsqrt", "lp_pool": "Abs Pow PadV2 AvgPool Mul Sqrt",
    "group_normalization": "Cast Reshape Mean SquaredDifference Rsqrt Mul AddV2",
    "bitwise_and": "BitwiseAnd", "bitwise_or": "BitwiseOr", "bitwise_xor": "BitwiseXor", "bitwise_not": "Invert",
    "bit_shift": "LeftShift RightShift SelectV2", "celu": "RealDiv Elu Mul", "mish": "Softplus Tanh Mul",
    "shrink": "Less Greater AddV2 Sub SelectV2", "prelu": "Greater Mul SelectV2", "eye_like": "MatrixDiagV3",
    "cast_like": "Cast", "space_to_depth": "SpaceToDepth",
    "reverse_sequence": "Range Less Sub SelectV2 GatherNd", "center_crop_pad": "StridedSlice PadV2",
    "tensor_scatter": "TensorScatterUpdate AddV2 Range",
    "col2im": "TensorScatterAdd Reshape", "max_unpool": "TensorScatterUpdate Reshape PadV2",
    "affine_grid": "Range BatchMatMulV2 Reshape", "grid_sample": "GatherNd Floor Mul AddV2 SelectV2 ClipByValue",
    "roi_align": "GatherNd Floor Mul AddV2 Sum Max SelectV2",
    # ops/signal.py: the windows are constants of their static size (tf.signal builds them from these)
    "hann_window": "Range Cos Mul AddV2 Cast", "hamming_window": "Range Cos Mul AddV2 Cast",
    "blackman_window": "Range Cos Mul AddV2 Cast", "swiglu": "Sigmoid Mul",
    "rotary_embedding": "GatherV2 Mul Sub AddV2 ConcatV2 Transpose Reshape",
    "nll_loss": "GatherV2 Neg Mul SelectV2 Sum RealDiv",
    "softmax_cross_entropy_loss": "LogSoftmax GatherV2 Neg Mul SelectV2 Sum RealDiv",
    "attention": "BatchMatMulV2 Mul Tanh SelectV2 AddV2 Max Exp Sum RealDiv ConcatV2 Transpose Reshape",
    # the causal conv (ops/causal_conv.py) is a depthwise conv over the state-padded input; DeformConv
    # (ops/deform_conv.py) gathers its bilinear taps and contracts them with the weights
    "causal_conv_with_state": "ConcatV2 DepthwiseConv2dNative StridedSlice Sigmoid Mul",
    "deform_conv": "Floor GatherNd Mul AddV2 SelectV2 Einsum Reshape",
    # ops/linear_attention.py: the token recurrence is one While (lax.scan) over einsums on the carried state
    "linear_attention": "While Einsum Mul Exp AddV2 Sub Reshape Transpose",
    # ops/signal.py: complex FFTs of static length on the real/imaginary pairs (tf.signal's kernels)
    "dft": "RFFT FFT IFFT IRFFT Complex Real Imag Conj GatherV2 ConcatV2 Pack",
    "stft": "GatherV2 Mul RFFT FFT Complex Real Imag Conj ConcatV2 Pack",
    # ops/bitwise.py, signal.py, strings.py: BitCast is TF's Bitcast (a bool, which it does not take, is a Cast of its byte);
    # MelWeightMatrix is a constant of its static inputs (tf.signal builds it from these and folds it);
    # TfIdfVectorizer over an integer pool compares windows with the static n-grams and sums the hits
    "bit_cast": "Bitcast Cast", "mel_weight_matrix": "Range Log Exp Mul RealDiv Floor Sub Maximum Minimum Cast",
    "tfidf_vectorizer": "StridedSlice Equal Cast Min Sum MatMul Mul Greater",
}
# PyTorch's forms (ops/pytorch/math.py, index.py, nn.py, the aten table's rows): the TF ops a converter
# composes each from, all of them clustered by TF 2.21 itself (tests/data/tf_suite/autoclustering_ops.json)
TF_EQUIV.update({
    "atan2": "RealDiv Atan Less SelectV2 AddV2 Mul", "expm1": "Exp Sub", "log1p": "AddV2 Log", "log2": "Log Mul",
    "log10": "Log Mul", "trunc": "Sign Abs Floor Mul", "not_equal": "Equal LogicalNot", "reduce_any": "Cast Max",
    "variance": "Mean SquaredDifference Sum RealDiv", "max_with_index": "Max ArgMax", "min_with_index": "Min ArgMin",
    "sort": "TopKV2", "diff": "StridedSlice Sub ConcatV2", "cdist": "Sub Abs Pow Sum Sqrt",
    "pdist": "Sub Abs Pow Sum Sqrt GatherV2", "div_rounding": "RealDiv Div Floor Sign Abs Mul Cast",
    "add_scaled": "Mul AddV2", "torch_index": "GatherNd Reshape Transpose",
    "torch_index_put": "TensorScatterUpdate TensorScatterAdd", "select_scatter": "TensorScatterUpdate",
    "slice_scatter": "TensorScatterUpdate", "masked_scatter": "Cumsum GatherV2 SelectV2",
    "as_strided": "Reshape GatherV2", "diagonal": "GatherNd Transpose",
    "torch_group_norm": "Reshape Mean SquaredDifference Rsqrt Mul AddV2",
    "torch_batch_norm_stats": "Mean SquaredDifference Rsqrt Mul AddV2", "weight_norm": "Mul Sum Sqrt RealDiv",
    "maxpool_with_index": "PadV2 StridedSlice Pack Max ArgMax GatherV2",
    "adaptive_avgpool": "StridedSlice Mean ConcatV2",
    "embedding_bag": "GatherV2 Equal Cast MatMul Max ArgMax RealDiv SelectV2", "fft_r2c": "RFFT FFT",
    "fft_c2r": "IRFFT IFFT",
    # ops/pytorch/grad.py: the gradients, tap by tap (scatter-adds into the padded input) or in closed form
    "conv_backward": "PadV2 StridedSlice Einsum TensorScatterAdd Sum", "layer_norm_backward": "Mean Mul Sub Sum",
    "group_norm_backward": "Reshape Mean Mul Sub Sum", "max_pool_backward": "Reshape TensorScatterAdd",
    "avg_pool_backward": "PadV2 RealDiv TensorScatterAdd StridedSlice", "adaptive_avg_pool_backward": "MatMul Transpose",
    "embedding_backward": "Equal SelectV2 TensorScatterAdd",
})

# canonical op -> (source: who refuses it, in short; why, in full): "TF rule" is TF's auto-clustering, "XLA" has
# no kernel or type for it, "xcviz rule" is xcviz keeping out an op TF would compile (said so, never blamed on XLA)
_RNG = ("TF rule: stateful RNG", "stateful random op: auto-clustering refuses stateful RNG ops on CPU/GPU "
        "(IsStatefulRandomOp; the TPU device allows them, but xcviz does not reproduce XLA's random streams)")
_WHERE = ("xcviz rule: data-dependent shape", "data-dependent output shape: XLA compiles it as Where "
          "(tf2xla: Where) with a bounded dynamic shape, which xcviz's JAX lowering cannot express")
_STRING = ("XLA: string tensors", "string tensors: XLA has no string type")
# ONNX sequences and optionals (ops/sequence.py)
SEQUENCE_WHY = ("sequence values have a data-dependent length; XLA needs static shapes (tf2xla's TensorList "
                "kernels need a fixed maximum length, and none inserts or erases at a position)")
OPTIONAL_WHY = "an optional may be empty at run time; tf2xla registers no kernel for TensorFlow's Optional ops"
_SEQ = ("XLA: variable-length sequence", SEQUENCE_WHY)
_OPT = ("XLA: no Optional kernels", OPTIONAL_WHY)
REFUSED: dict[str, tuple[str, str]] = {
    "assert": ("TF rule: Assert/CheckNumerics", "Assert and CheckNumerics are kept out of auto-clustering "
               "(IsAssertOrCheckNumerics; elide_assert_and_checknumerics is false on CPU/GPU)"),
    "custom_nms": ("XLA: custom op", "custom op (the seed's post-processing, no XLA kernel)"),
    "multinomial": _RNG, "random_normal": _RNG, "random_normal_like": _RNG, "random_uniform": _RNG,
    # ONNX's NMS has a data-dependent output size; TF 2.21 does not auto-cluster even its padded
    # NonMaxSuppressionV4 (tests/data/tf_suite/autoclustering_ops.json)
    "nms": ("TF rule: NonMaxSuppression", "data-dependent output shape (number of kept boxes)"),
    "nonzero": _WHERE, "torch_nonzero": _WHERE,
    "unique": ("TF rule: Unique", "data-dependent output shape: auto-clustering refuses Unique on every "
               "device (mark_for_compilation_pass.cc: allow_unique_op = false)"),
    "placeholder": ("TF rule: graph argument", "a graph argument (_Arg): fed from outside, never clustered"),
    "print": ("XLA: host side effect", "host side effect: no XLA kernel for Print/PrintV2"),
    "py_func": ("XLA: Python callback", "Python callback: runs in the host interpreter, opaque to XLA"),
    "string_normalizer": _STRING, "string_split": _STRING,
    **{name: _SEQ for name in ("concat_from_sequence", "sequence_at", "sequence_construct", "sequence_empty",
                               "sequence_erase", "sequence_insert", "sequence_length", "sequence_map",
                               "split_to_sequence")},
    **{name: _OPT for name in ("optional", "optional_get_element", "optional_has_element")},
    "compress": _WHERE,
    "bernoulli": _RNG, "randperm": _RNG,
    "det": ("XLA: no MatrixDeterminant kernel", "determinant: tf2xla registers no kernel for TF's "
            "MatrixDeterminant (what converters lower Det to), so TF's auto-clustering leaves it out"),
    "string_concat": _STRING, "regex_full_match": _STRING,
}

def kernels(name: str) -> list[tuple[str, str | None]]:
    """(TF op, fixed dtype or None) for each TF op `name` lowers to; [] when it has no mapping."""
    out = []
    for k in TF_EQUIV.get(name, "").split():
        op, _, dt = k.partition(":T=")
        out.append((op, dt or None))
    return out


def device_verdicts(name: str) -> dict[str, str | None]:
    """Per device, None (XLA compiles it there) or the reason it does not; {} for an op with no mapping."""
    ks = kernels(name)
    if not ks:
        return {}
    out: dict[str, str | None] = {}
    for dev in ("cpu", "gpu", "tpu"):
        why = None
        for op, dt in ks:
            ok, note = kernel_devices(op, dev, dt)
            if not ok:
                why = note
                break
        out[dev] = why
    return out


def source(name: str, devices: frozenset[str]) -> str:
    """Where the verdict of op `name` comes from, in words (the `source` column of `xcviz ops`)."""
    if name in REFUSED and not devices:
        return REFUSED[name][0]
    ks = kernels(name)
    if not ks:
        return "xcviz: no TensorFlow equivalent recorded"
    names = ", ".join(f"{op} ({dt})" if dt else op for op, dt in ks)
    if not devices:
        return f"xcviz rule: not lowered by xcviz yet (XLA has {names})"
    where = ", ".join(d.upper() for d in ("cpu", "gpu", "tpu") if d in devices)
    return f"tf2xla: {names} ({where})"


def verdict_fields(name: str, kw: dict) -> dict:
    """The entry's keyword arguments with its XLA verdict and its source filled in from the tables above.

    An entry that names its own devices (a native-only op) keeps them; when it has none the table's reason
    (why XLA, TF or xcviz refuses it) replaces its own. Otherwise the devices are those on which every mapped
    TF op compiles, with a reason for each other device."""
    kw = dict(kw)
    if name.startswith("tf."):
        op, devs = name[3:], kw.get("devices", frozenset())
        if devs:
            where = ", ".join(d.upper() for d in ("cpu", "gpu", "tpu") if d in devs)
            kw.setdefault("source", f"tf2xla: {op} ({where})")
        elif has_kernel(op):
            kw.setdefault("source", f"TF/xcviz rule: not clustered although tf2xla has {op}")
        else:
            kw.setdefault("source", f"XLA: no tf2xla kernel for {op}")
        return kw
    if "devices" not in kw and name in TF_EQUIV:
        per = device_verdicts(name)
        kw["devices"] = frozenset(d for d, why in per.items() if why is None)
        kw["device_reasons"] = tuple(sorted((d, why) for d, why in per.items() if why is not None))
    elif name in REFUSED and not kw.get("devices", True):
        kw["reason"] = REFUSED[name][1]
    kw.setdefault("source", source(name, kw.get("devices", frozenset({"cpu", "gpu", "tpu"}))))
    return kw
