"""The cost model's facts about ops (class, fusion kind, XLA:CPU kernel counts, behaviour groups), set on their
OpDef entries once every family file has registered its ops. Code outside ops/ reads the entries
(`REGISTRY.names(fusion="free")`, `opdef.cost_class`), never a list of op names of its own."""
from __future__ import annotations

from .registry import (
    BODY_CONTROL, COST_CLASSES, EXPENSIVE, FUSION_KINDS, MEAN, PARAMETER_SOURCE, STRIDED_WINDOW, TYPE_VALUE,
    VALUE_RULE, VOLATILE, Registry,
)

# the calibrated class an op is timed with (cost/classes.py; anything else: elementwise)
COST_CLASS = {
    "dot": ("matmul", "gemm", "einsum", "matmul_integer", "qlinear_matmul", "lstm", "gru", "rnn"),
    "conv": ("conv2d", "conv_transpose", "conv_integer", "qlinear_conv"),
    "reduce": ("argmax", "argmin", "global_avgpool", "global_maxpool", "hardmax", "reduce_max", "reduce_mean",
               "reduce_min", "reduce_prod", "reduce_sum", "cumsum", "topk", "tf.All", "tf.Max", "tf.Mean",
               "tf.Prod", "tf.Sum"),
    "window": ("maxpool", "avgpool", "lrn", "resize"),
    "norm": ("batchnorm", "layernorm", "instancenorm", "softmax", "log_softmax"),
    "movement": ("concat", "expand", "gather", "gather_elements", "gather_nd", "one_hot", "pad", "scatter_elements",
                 "scatter_nd", "slice", "split", "tile", "transpose", "trilu", "tf.ConcatV2", "tf.Pack", "tf.Split",
                 "tf.SplitV", "tf.StridedSlice", "tf.Transpose", "tf.Unpack"),
    "free": ("reshape", "flatten", "squeeze", "unsqueeze", "identity", "const", "dropout", "shape", "size", "rank",
             "noop", "tf.Reshape", "tf.Squeeze", "tf.ExpandDims", "tf.StopGradient"),
}
# how XLA's fusion treats an op (cost/fusion.py; anything else: a loop fusion)
FUSION = {
    "free": ("reshape", "flatten", "squeeze", "unsqueeze", "identity", "const", "dropout", "shape", "size", "rank",
             "noop"),                                     # no kernel: a view, or folded away
    "library": ("conv2d", "conv_transpose", "matmul", "gemm", "einsum"),   # a library call (oneDNN, YNNPACK, Eigen)
    "reduce": ("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin",
               "global_avgpool", "global_maxpool", "avgpool", "maxpool", "cumsum", "topk", "lrn", "hardmax"),
    "two_reductions": ("softmax", "log_softmax", "layernorm", "instancenorm"),
    "foldable": ("transpose",),                           # folded into its reader's layout off CPU
    "broadcast": ("constant_of_shape",),                  # a broadcast constant: fused into readers, else one kernel
}
# XLA:CPU's kernels per normalisation, as counted in its optimized HLO (jaxlib 0.10.2): as a fusion root, and
# before the output fusion (short rows, rows tree-split, YNNPACK reductions)
CPU_KERNELS = {"softmax": (4, (3, 5, 3)), "log_softmax": (4, (3, 5, 3)), "layernorm": (5, (2, 5, 4)),
               "instancenorm": (5, (2, 5, 4))}
# a recurrence runs step by step: XLA lowers it to a While loop (lax.scan) whose body's kernels launch every
# step, and the native runtime calls its GEMM and gate loops every step; the cost model pays each per step
# (cost.stats: a kernel an elementwise xla_launch, a call a free native_overhead). Per step: (XLA kernels,
# native calls). XLA (jaxlib 0.10.2) runs an LSTM step as the recurrent dot, the gate fusion, the output's
# dynamic-update-slice and the loop's condition and counter; a GRU has a second dot (the reset gate applied
# before its matmul); a plain RNN one gate. onnxruntime calls one GEMM and its gate loops per step. Measured on
# tests/data/exports/tagger_torchscript.onnx (bidirectional LSTM + GRU) at sequence 8 and 64, CPU time, one
# thread: 4.0 µs per step in XLA, 1.7 µs natively (about 3.5 launches and 3 calls at the cpu profile's numbers).
STEP_COSTS = {"lstm": (4, 3), "gru": (5, 3), "rnn": (3, 2)}
GROUPS = {
    BODY_CONTROL: ("loop", "if", "scan"),
    EXPENSIVE: ("exp", "log", "tanh", "erf", "sqrt", "rsqrt", "pow", "sigmoid", "div", "softplus", "gelu", "sin",
                "cos", "atan", "asin", "acos", "sinh", "cosh", "reciprocal"),
    STRIDED_WINDOW: ("maxpool", "avgpool"),
    MEAN: ("reduce_mean", "global_avgpool"),
    PARAMETER_SOURCE: ("const",),
    VOLATILE: ("multinomial", "random_normal", "random_normal_like", "random_uniform", "print", "py_func"),
    VALUE_RULE: ("gather", "concat", "unsqueeze", "squeeze", "reshape", "slice", "cast", "add", "sub", "mul", "div",
                 "identity", "neg", "abs", "min", "max", "range", "constant_of_shape", "expand", "tile", "equal",
                 "where", "reduce_prod", "reduce_sum", "floor", "ceil", "mod", "transpose", "flatten", "not", "less",
                 "greater", "and", "or"),
    TYPE_VALUE: ("shape", "size", "rank"),
}


def apply(registry: Registry) -> None:
    """Set the facts on the entries; a name no family registers is a mistake here (KeyError at import)."""
    assert set(COST_CLASS) <= set(COST_CLASSES) and set(FUSION) <= set(FUSION_KINDS)
    for cls, names in COST_CLASS.items():
        for name in names:
            registry.replace(name, cost_class=cls)
    for kind, names in FUSION.items():
        for name in names:
            registry.replace(name, fusion=kind)
    for name, per_step in STEP_COSTS.items():
        registry.replace(name, steps=_steps(per_step))
    for name, (kernels, passes) in CPU_KERNELS.items():
        registry.replace(name, cpu_kernels=kernels, cpu_passes=passes)
    for group, names in GROUPS.items():
        for name in names:
            registry.replace(name, groups=registry.ops[name].groups | {group})


def _steps(per_step: tuple[int, int]):
    """The `steps` rule of a recurrence: (steps, XLA kernels, native calls) over the sequence and directions."""
    kernels, calls = per_step

    def rule(ctx, out) -> tuple[int, int, int] | None:
        x, w = ctx.shape(0), ctx.shape(1)
        if x is None or w is None or any(isinstance(d, str) for d in (*x, *w)):
            return None
        t = x[1] if int(ctx.attrs.get("layout", 0)) else x[0]
        n = int(t) * int(w[0])   # every step of every direction
        return n, n * kernels, n * calls
    return rule
