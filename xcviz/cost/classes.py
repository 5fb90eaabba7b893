"""Op classes and the calibrated per-class timing: what one op costs natively, and what its kernel costs in XLA.

One FLOP rate and one bandwidth cannot rank clusters: the native runtime (onnxruntime op by op, or xcviz's
NumPy reference) pays a fixed cost per op and reaches rates that differ by class (a 1x1 convolution is one
GEMM to onnxruntime, a depthwise one a fraction of a dense one's rate), while XLA pays a fixed cost per cluster
call and per kernel and runs its convolutions and dots at rates of its own (1x1 ones well below
onnxruntime's: the class pointwise_conv). XLA:CPU (jaxlib 0.10.2) hands a convolution to YNNPACK when it
has more than NARROW input or output channels (all of them, over the groups) and leaves a narrower one, or
an input-dilated (transposed, strided) one, to Eigen, which runs it several times slower per FLOP: those are
the class narrow_conv. Eigen's kernel does the work of NARROW output channels for fewer (a narrower
convolution takes about the time of one padded to NARROW output channels), so XLA's time of a narrow
convolution counts its FLOPs times NARROW / its output channels (xla_scale); the measurements are in
benchmarks/README.md. A profile measured by `xcviz calibrate` carries, per class:

    native_overhead  seconds per op run natively (dispatch and the NumPy calls of its implementation)
    native_flops     FLOP/s natively
    xla_launch       seconds per XLA kernel rooted at an op of the class
    xla_flops        FLOP/s inside XLA's kernels

plus `native_bandwidth` (bytes/s an op moves natively), `call_overhead` (seconds per compiled cluster
run), optionally `xla_argument_overhead` and `xla_output_overhead` (seconds per buffer a cluster's call is
handed, weights included, and per buffer it gives back: jax's dispatch of each), and, optionally,
`page_fault_bandwidth`: a buffer over FRESH_BYTES (glibc's largest mmap threshold) is mapped fresh by the
allocator on every call, so writing it costs its page faults on top of its bandwidth (XLA materialises a
broadcast weight that a dot or convolution reads, AlexNet's 151 MB FC weight, per call).
Then T_op = native_overhead + FLOPs / native_flops + bytes / native_bandwidth, and
T_fused(C) = call_overhead + its arguments' and outputs' overheads + sum of its kernels' xla_launch
             + sum FLOPs · xla_scale / xla_flops + bytes / memory_bandwidth (the bytes as the roofline counts them)
             + the bytes of each value over FRESH_BYTES that XLA writes / page_fault_bandwidth;
hand-offs cost sync_overhead each, as before."""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..ops import REGISTRY
from ..ops.registry import COST_CLASSES

CLASSES = COST_CLASSES   # (an op's class is its OpDef's cost_class; narrow_conv and dwconv are chosen by shape)
CLASS_KEYS = ("native_overhead", "native_flops", "xla_launch", "xla_flops")
LIBRARY_CLASSES = frozenset({"dot", "conv", "narrow_conv", "pointwise_conv", "dwconv"})   # kernels of a library call (layout copies around)
# the widest convolution XLA:CPU leaves to Eigen: the compiled HLO of jaxlib 0.10.2 on x86 shows a __ynn_fusion
# for every convolution with more than 16 input or output channels (any size, kernel, stride or grouping,
# 1..64 channels tried), none at 16 or fewer
NARROW = 16
# XLA:CPU's depthwise convolution (jaxlib 0.10.2) is no GEMM: YNNPACK's kernel (more than NARROW channels)
# runs at ~0.6 GFLOP/s and pays, per channel and image, as much as DW_CHANNEL_FLOPS of its work (a 1x1 image of
# 256 channels takes ~80 us, where its FLOPs say 8); Eigen's, which XLA uses for NARROW channels or fewer and
# for an image smaller than the filter, does EIGEN_DW times the work. Measured on 112 NHWC 3x3 depthwise
# convolutions (batch 1-2, 1-16 pixels a side, 4-256 channels, strides 1-2) by benchmarks/dwconv_xla.py, which
# fits the two constants: t = FLOPs x dw_scale / 0.58 GFLOP/s is within 1.5x on 97 of them (FLOPs alone, with
# a launch: 64); the misses are the tiniest (under 12 us) and 2x2 images of many channels (up to 2x dearer)
DW_CHANNEL_FLOPS = 80
EIGEN_DW = 2.5
FRESH_BYTES = 32 * 2**20   # glibc's DEFAULT_MMAP_THRESHOLD_MAX: larger buffers are mmapped on each allocation

CONVS = REGISTRY.names(cost_class="conv") | REGISTRY.names(cost_class="dwconv")   # ops with a filter


def op_class(op: str, attrs: dict | None = None, weight_shape: tuple | None = None) -> str:
    """The class whose calibrated numbers an op is costed with (elementwise when no other fits). A depthwise
    convolution (groups of one input channel: weight [C, 1, kh, kw]) is a class of its own: neither runtime
    reaches a dense convolution's rate on it; a convolution of a few groups (AlexNet's 2) is a convolution,
    one XLA leaves to Eigen (NARROW channels or fewer in and out, or a strided transposed one) a narrow one."""
    opdef = REGISTRY.get(op)
    c = opdef.cost_class if opdef is not None else "elementwise"
    if c != "conv" or weight_shape is None or len(weight_shape) < 2:
        return c
    group = (attrs or {}).get("group")
    group = group if isinstance(group, int) and group > 0 else 1
    if group > 1 and weight_shape[1] == 1:
        return "dwconv"
    if op == "conv_transpose" and any(s > 1 for s in (attrs or {}).get("strides") or () if isinstance(s, int)):
        return "narrow_conv"   # XLA dilates its input: Eigen's convolution at any width
    a, b = weight_shape[0], weight_shape[1]
    if isinstance(a, int) and isinstance(b, int) and max(a, b * group) <= NARROW:
        return "narrow_conv"
    if op != "conv_transpose" and len(weight_shape) > 2 and all(k == 1 for k in weight_shape[2:]):
        return "pointwise_conv"   # 1x1: onnxruntime runs it as one GEMM, XLA:CPU at a third to half that rate
    return c


INTERPOLATING = ("linear", "bilinear", "cubic")


def xla_class(op: str, attrs: dict | None = None, weight_shape: tuple | None = None) -> str:
    """The class whose XLA numbers (launch, rate) an op is costed with: its op_class, but a linear or cubic
    resize is a dot in XLA: xcviz lowers it (ops/resample.py, as tf2xla lowers ResizeBilinear) to one dense
    interpolation matmul per resized axis, where the native runtime runs a resize kernel of a few FLOPs per
    output element (a bilinear UNet's upsampling took 3.8 ns per output element in XLA, 2.9 natively)."""
    if op == "resize" and str((attrs or {}).get("mode", "nearest")) in INTERPOLATING:
        return "dot"
    if narrow_groups(op, attrs, weight_shape):
        return "narrow_conv"
    return op_class(op, attrs, weight_shape)


def narrow_groups(op: str, attrs: dict | None, weight_shape: tuple | None) -> tuple[int, int] | None:
    """(input, output) channels per group of a grouped convolution whose groups are narrow (1 < groups, not
    depthwise, fewer than NARROW input or output channels per group), else None. `weight_shape` in ONNX's order."""
    group = (attrs or {}).get("group")
    if op == "conv_transpose" or not isinstance(group, int) or group <= 1 or not weight_shape or len(weight_shape) < 2:
        return None
    out, per_in = weight_shape[0], weight_shape[1]
    if not isinstance(out, int) or not isinstance(per_in, int) or per_in <= 1 or out % group:
        return None
    per_out = out // group
    return (per_in, per_out) if min(per_in, per_out) < NARROW else None


# PyTorch's ConvParams::use_mkldnn (ATen's Convolution.cpp) for a float32 CPU convolution: below this input
# size, at batch 1, one group and kernels of 3 or less, ATen's own im2col + GEMM (slow_conv2d) runs it
ONEDNN_NUMEL = 20480


def torch_onednn(attrs: dict | None, weight_shape: tuple | None, input_shape: tuple | None, threads: int = 1) -> bool:
    """Whether torch eager sends this float32 convolution (ONNX's attributes and filter order; a 1-D one as
    ATen views it, [N, C, 1, L]) to oneDNN, as ConvParams::use_mkldnn decides: a strided, dilated, batch-16 or
    non-1x1 one (or any, multithreaded), that also has groups, kernels over 3 both ways, a batch over 1 or an
    input over ONEDNN_NUMEL elements. Such a call pays oneDNN's fixed cost (its primitive, the weights'
    reorder): 40-80 us here for an 8-channel one that ATen's own path runs in 13-20 us."""
    if not weight_shape or not input_shape or len(input_shape) < 3 or len(weight_shape) != len(input_shape):
        return False
    dims = [d if isinstance(d, int) else None for d in input_shape]
    kernel = [k if isinstance(k, int) else None for k in weight_shape[2:]]
    if None in dims or None in kernel:
        return False
    if len(dims) == 3:   # conv1d: unsqueezed to [N, C, 1, L], its filter to [O, I, 1, K]
        dims, kernel = [dims[0], dims[1], 1, dims[2]], [1, kernel[0]]
    a = attrs or {}
    strided = any(s != 1 for s in a.get("strides") or ())
    dilated = any(d != 1 for d in a.get("dilations") or ())
    group = a.get("group") if isinstance(a.get("group"), int) else 1
    kh, kw = kernel[-2], kernel[-1]
    if not (strided or dilated or dims[0] >= 16 or kw != 1 or kh != 1 or threads > 1):
        return False
    return group > 1 or (kw > 3 and kh > 3) or dims[0] > 1 or dims[0] * dims[1] * dims[2] * dims[3] > ONEDNN_NUMEL


def group_scale(weight_shape: tuple | None, attrs: dict | None, op: str = "conv") -> float:
    """XLA's work per stated FLOP of a grouped convolution of narrow groups: XLA:CPU (jaxlib 0.10.2) runs one
    (with its own loop code at 16 channels or fewer in all, else YNNPACK's grouped kernel) as if every group had
    NARROW input and NARROW output channels, at the narrow class's rate: 3 groups of 5 -> 2 channels on a 16x16
    image take ~245 us where their FLOPs at that rate say ~8 (benchmarks/grouped_conv_xla.py fits it); 1 for
    any other convolution."""
    per = narrow_groups(op, attrs, weight_shape)
    return 1.0 if per is None else max(NARROW / per[0], 1.0) * max(NARROW / per[1], 1.0)


def resize_scale(attrs: dict | None, in_shape: tuple | None, out_shape: tuple | None) -> float:
    """XLA's FLOPs of a linear or cubic resize over the 4 per output element it states: a [n_out, n_in]
    matmul per resized axis, axis after axis (2 n_in FLOPs per element of the tensor that axis makes)."""
    if str((attrs or {}).get("mode", "nearest")) not in INTERPOLATING or not in_shape or not out_shape \
            or len(in_shape) != len(out_shape) or not all(isinstance(d, int) and d > 0 for d in (*in_shape, *out_shape)):
        return 1.0
    cur, flops = list(in_shape), 0
    for ax, (a, b) in enumerate(zip(in_shape, out_shape)):
        if a == b:
            continue
        cur[ax] = b
        n = 1
        for d in cur:
            n *= d
        flops += 2 * a * n
    total = 1
    for d in out_shape:
        total *= d
    return max(flops / (4 * total), 1.0) if flops else 1.0


def xla_scale(op: str, attrs: dict | None = None, weight_shape: tuple | None = None,
              shapes: tuple | None = None) -> float:
    """What XLA's kernel of an op works per FLOP the op states: NARROW / output channels for a narrow
    convolution with fewer (Eigen computes NARROW of them); a depthwise convolution's per-channel cost and
    Eigen's rate (dw_scale); a linear or cubic resize's interpolation matmuls (resize_scale); `shapes`: the
    op's input and output shapes (resize, depthwise); a grouped convolution of narrow groups' padding of each
    group (group_scale); else 1."""
    if op == "resize" and shapes is not None:
        return resize_scale(attrs, *shapes)
    if narrow_groups(op, attrs, weight_shape):
        return group_scale(weight_shape, attrs, op)
    cls = op_class(op, attrs, weight_shape)
    if cls == "dwconv":
        return dw_scale(weight_shape, shapes, (attrs or {}).get("group"))
    if cls != "narrow_conv" or weight_shape is None:
        return 1.0
    group = (attrs or {}).get("group")
    out = weight_shape[1] * (group if isinstance(group, int) and group > 0 else 1) if op == "conv_transpose" \
        else weight_shape[0]
    return NARROW / out if isinstance(out, int) and 0 < out < NARROW else 1.0


def dw_scale(weight_shape: tuple | None, shapes: tuple | None, group=None) -> float:
    """XLA's work per stated FLOP of a depthwise convolution: its per-channel cost, DW_CHANNEL_FLOPS per channel
    and image over the 2 kh kw FLOPs of each output pixel of a channel, times Eigen's EIGEN_DW where XLA leaves it
    to Eigen: NARROW channels or fewer, or an image of fewer pixels than the filter has taps (smaller than the
    filter: jaxlib 0.10.2 hands a 1x1 or 2x2 image under a 3x3 filter to no YNNPACK kernel, a 3x3 one it does).
    `weight_shape` in ONNX's order ([C*M, 1, kh, kw]; TensorFlow's [H, W, C, M] as [C, M, kh, kw]), `shapes`:
    (input, output), either layout, batch first; `group`: ONNX's (the input channels)."""
    ins, out = shapes if shapes else (None, None)
    dims = (*(weight_shape or ()), *(ins or ())[1:], *(out or ())[1:])   # (the batch may be symbolic)
    if not weight_shape or not ins or not out or len(weight_shape) < 3 or \
            not all(isinstance(d, int) and d > 0 for d in dims):
        return 1.0
    channels = weight_shape[0] * weight_shape[1]   # output channels, in either order
    inputs = group if isinstance(group, int) and group > 1 else weight_shape[0]
    taps = math.prod(weight_shape[2:])
    pixels = max(math.prod(out[1:]) // channels, 1)   # output pixels per channel and image
    eigen = channels <= NARROW or math.prod(ins[1:]) // inputs < taps
    return (1.0 + DW_CHANNEL_FLOPS / (2 * taps * pixels)) * (EIGEN_DW if eigen else 1.0)


@dataclass(frozen=True)
class ClassCosts:
    """The per-class numbers of a calibrated profile (see the module docstring)."""
    native_overhead: float
    native_flops: float
    xla_launch: float
    xla_flops: float


@dataclass(frozen=True)
class Calibrated:
    """What `xcviz calibrate` adds to a profile: per class costs, native bandwidth and the per-call overhead."""
    classes: dict          # class -> ClassCosts (every class of CLASSES)
    native_bandwidth: float
    call_overhead: float
    page_fault_bandwidth: float | None = None   # bytes/s of a fresh buffer's page faults (None: not measured)
    session_overhead: float = 0.0   # seconds per call into a native runtime's session (onnxruntime): once per
    #                                 model natively, once per fallback segment in a hybrid run
    argument_overhead: float = 0.0  # seconds per argument of a compiled cluster's call (a weight or a value
    output_overhead: float = 0.0    # handed in), and per output it gives back (0: not measured)
    switch_overhead: float = 0.0    # seconds a native call between compiled cluster calls costs over one back to
    #                                 back (runtime.calibrate_call.switch_overhead; 0: not measured)
    onednn_overhead: float = 0.0    # seconds a torch eager convolution costs at least when ATen sends it to
    #                                 oneDNN (torch_onednn; runtime.calibrate_torch; 0: not measured)
    iteration_overhead: float = 0.0  # seconds a native loop iteration costs beyond its ops' dispatch (TF's
    #                                  executor: a frame's Merge/Switch/NextIteration; 0: not measured)
    native_argument_overhead: float = 0.0   # seconds a native call costs per value it is handed, and per value
    native_output_overhead: float = 0.0     # it gives back (session_overhead is then the bare call; 0: not measured)


def native_time(c: ClassCosts, cal: Calibrated, flops: float, nbytes: float) -> float:
    """T_op of one op of class costs `c` run natively (see the module docstring)."""
    return c.native_overhead + flops / c.native_flops + nbytes / cal.native_bandwidth


def parse_calibrated(data: dict, fail) -> Calibrated | None:
    """The calibrated part of a profile's mapping, or None when it has none; `fail(msg, hint)` raises."""
    table = data.get("classes")
    if table is None:
        return None
    if not isinstance(table, dict) or "elementwise" not in table:
        fail("'classes' must map op classes to their numbers, elementwise at least", "classes: " + ", ".join(CLASSES))
    unknown = sorted(set(table) - set(CLASSES))
    if unknown:
        fail(f"unknown op class {unknown[0]!r} in 'classes'", "one of " + ", ".join(CLASSES))
    parsed = {}
    for c, row in table.items():
        if not isinstance(row, dict):
            fail(f"class {c!r} must map {', '.join(CLASS_KEYS)} to numbers", None)
        parsed[c] = ClassCosts(**{k: _number(row.get(k), f"classes.{c}.{k}", k.endswith("flops"), fail)
                                  for k in CLASS_KEYS})
    # a class the profile does not measure is costed as its nearest (a grouped or a narrow convolution as a
    # convolution, as profiles measured before the narrow class were), else as elementwise
    near = {"dwconv": "conv", "narrow_conv": "conv", "pointwise_conv": "conv"}
    classes = {c: parsed.get(c, parsed.get(near.get(c, ""), parsed["elementwise"])) for c in CLASSES}
    faults = data.get("page_fault_bandwidth")

    def optional(key: str) -> float:   # (a key a profile measured before calibrate learned it lacks: 0)
        return 0.0 if data.get(key) is None else _number(data[key], key, False, fail)
    return Calibrated(classes, _number(data.get("native_bandwidth"), "native_bandwidth", True, fail),
                      _number(data.get("call_overhead"), "call_overhead", False, fail),
                      None if faults is None else _number(faults, "page_fault_bandwidth", True, fail),
                      optional("native_session_overhead"), optional("xla_argument_overhead"),
                      optional("xla_output_overhead"), optional("hybrid_switch_overhead"),
                      optional("native_onednn_conv_overhead"), optional("native_iteration_overhead"),
                      optional("native_argument_overhead"), optional("native_output_overhead"))


def _number(v, key: str, positive: bool, fail) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (positive and v <= 0):
        fail(f"hardware profile needs a {'positive' if positive else 'non-negative'} number for {key!r}",
             "measure one with `xcviz calibrate -o my.yaml`")
    return float(v)
