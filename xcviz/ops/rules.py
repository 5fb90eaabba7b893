"""Shape, dtype and FLOP rules shared by the op rows (pure functions over TensorTypes)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from ..ir import Dim, Shape, TensorType


class ShapeError(Exception):
    """An op's inputs contradict its rule; the shape pass adds file and node."""


@dataclass
class Ctx:
    """What a rule sees of one node: input types, attributes (defaults filled), constant inputs."""

    inputs: list[TensorType]
    attrs: dict
    consts: list[object | None] = field(default_factory=list)  # numpy arrays for constant inputs
    outputs: list[TensorType] = field(default_factory=list)     # types given in the file (may be unknown)
    num_outputs: int = 1
    read_consts: bool = False  # set when the rule looked at a constant: its result may depend on values


    def shape(self, i: int = 0) -> Shape | None:
        return self.inputs[i].shape if i < len(self.inputs) else None

    def dtype(self, i: int = 0) -> str | None:
        return self.inputs[i].dtype if i < len(self.inputs) else None

    def const(self, i: int):
        self.read_consts = True
        return self.consts[i] if i < len(self.consts) else None

    def rank(self, i: int = 0) -> int | None:
        s = self.shape(i)
        return None if s is None else len(s)


def fmt(shape: Shape | None) -> str:
    return "?" if shape is None else "x".join(str(d) for d in shape) or "scalar"


def numel(shape: Shape | None) -> int | None:
    if shape is None or any(isinstance(d, str) for d in shape):
        return None
    return math.prod(shape)


def norm_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None:
        return None
    out: list[Dim] = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif isinstance(x, str) or isinstance(y, str):
            out.append(x if isinstance(y, str) else y)
        else:
            raise ShapeError(f"shapes {fmt(a)} and {fmt(b)} do not broadcast")
    return tuple(reversed(out))


# ---- generic rules -----------------------------------------------------------------------
def same(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]


def broadcast_all(ctx: Ctx) -> list[TensorType]:
    shape: Shape | None = ctx.shape(0)
    for i in range(1, len(ctx.inputs)):
        shape = broadcast(shape, ctx.shape(i))
    dtype = next((t.dtype for t in ctx.inputs if t.dtype), None)
    return [TensorType(shape, dtype)]


def compare(ctx: Ctx) -> list[TensorType]:
    return [TensorType(broadcast_all(ctx)[0].shape, "bool")]


def where(ctx: Ctx) -> list[TensorType]:
    shape = broadcast(broadcast(ctx.shape(0), ctx.shape(1)), ctx.shape(2))
    return [TensorType(shape, ctx.dtype(1) or ctx.dtype(2))]


def matmul_shape(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None:
        return None
    if len(a) == 0 or len(b) == 0:
        raise ShapeError("matmul needs operands of rank >= 1")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    k1, k2 = a2[-1], b2[-2]
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise ShapeError(f"matmul {fmt(a)} @ {fmt(b)}: inner dimensions {k1} and {k2} differ")
    batch = broadcast(a2[:-2], b2[:-2]) or ()
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return tuple(out)


def matmul(ctx: Ctx) -> list[TensorType]:
    a, b = ctx.shape(0), ctx.shape(1)
    if ctx.attrs.get("transpose_a") and a is not None and len(a) >= 2:
        a = (*a[:-2], a[-1], a[-2])
    if ctx.attrs.get("transpose_b") and b is not None and len(b) >= 2:
        b = (*b[:-2], b[-1], b[-2])
    return [TensorType(matmul_shape(a, b), ctx.dtype(0))]


def matmul_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    a, o = ctx.shape(0), out[0].shape
    n_out, k = numel(o), None
    if a is not None and a and isinstance(a[-1], int):
        k = a[-2] if ctx.attrs.get("transpose_a") and len(a) >= 2 else a[-1]
    if n_out is None or not isinstance(k, int):
        return None
    return 2 * n_out * k


def gemm(ctx: Ctx) -> list[TensorType]:
    a, b = ctx.shape(0), ctx.shape(1)
    if a is None or b is None:
        return [TensorType(None, ctx.dtype(0))]
    if len(a) != 2 or len(b) != 2:
        raise ShapeError(f"gemm needs 2-D operands, got {fmt(a)} and {fmt(b)}")
    m, k1 = (a[1], a[0]) if ctx.attrs.get("transA") else (a[0], a[1])
    k2, n = (b[1], b[0]) if ctx.attrs.get("transB") else (b[0], b[1])
    if isinstance(k1, int) and isinstance(k2, int) and k1 != k2:
        raise ShapeError(f"gemm {fmt(a)} @ {fmt(b)}: inner dimensions {k1} and {k2} differ")
    if len(ctx.inputs) > 2:
        broadcast((m, n), ctx.shape(2))
    return [TensorType((m, n), ctx.dtype(0))]


def gemm_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    a = ctx.shape(0)
    n_out = numel(out[0].shape)
    if a is None or n_out is None:
        return None
    k = a[0] if ctx.attrs.get("transA") else a[1]
    return 2 * n_out * k if isinstance(k, int) else None


def _window(size: Dim, k: int, s: int, pad: int, d: int, ceil: bool = False, pad_begin: int = 0) -> Dim:
    if isinstance(size, str):
        return f"{size}'"  # derived symbolic dim
    eff = d * (k - 1) + 1
    num = size + pad - eff
    if num < 0:
        raise ShapeError(f"window {k} (dilation {d}) does not fit input size {size} with padding {pad}")
    out = (math.ceil(num / s) if ceil else num // s) + 1
    if ceil and (out - 1) * s >= size + pad_begin:
        out -= 1  # ONNX: a last window that would start in the padding is dropped
    return out


def _spatial(ctx: Ctx, kernel: Sequence[int]) -> list[Dim]:
    x = ctx.shape(0)
    assert x is not None
    nsp = len(x) - 2
    strides = list(ctx.attrs.get("strides") or [1] * nsp)
    dil = list(ctx.attrs.get("dilations") or [1] * nsp)
    pads = list(ctx.attrs.get("pads") or [0] * (2 * nsp))
    auto = str(ctx.attrs.get("auto_pad", "NOTSET")).upper()
    if len(kernel) != nsp or len(strides) != nsp or len(pads) != 2 * nsp:
        raise ShapeError(f"kernel/strides/pads do not match {nsp} spatial dims of input {fmt(x)}")
    out: list[Dim] = []
    for i in range(nsp):
        size = x[2 + i]
        if auto in ("SAME_UPPER", "SAME_LOWER", "SAME"):
            out.append(f"{size}'" if isinstance(size, str) else -(-size // strides[i]))
        else:
            total = 0 if auto == "VALID" else pads[i] + pads[i + nsp]
            out.append(_window(size, kernel[i], strides[i], total, dil[i], bool(ctx.attrs.get("ceil_mode")),
                               0 if auto == "VALID" else pads[i]))
    return out


def conv(ctx: Ctx) -> list[TensorType]:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None or w is None:
        return [TensorType(None, ctx.dtype(0))]
    if len(x) < 3 or len(w) != len(x):
        raise ShapeError(f"conv input {fmt(x)} and weight {fmt(w)} must have the same rank >= 3 (NCHW / OIHW)")
    group = int(ctx.attrs.get("group", 1))
    cin, wcin = x[1], w[1]
    if isinstance(cin, int) and isinstance(wcin, int) and cin != wcin * group:
        raise ShapeError(f"conv input has {cin} channels but weight {fmt(w)} with group {group} expects {wcin * group}")
    kernel = list(ctx.attrs.get("kernel_shape") or w[2:])
    if any(isinstance(k, str) for k in kernel):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], w[0], *_spatial(ctx, kernel)), ctx.dtype(0))]


def conv_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    w = ctx.shape(1)
    n_out = numel(out[0].shape)
    if w is None or n_out is None or numel(w[1:]) is None:
        return None
    return 2 * n_out * math.prod(w[1:])


def pool(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if len(x) < 3:
        raise ShapeError(f"pooling needs an NCHW input, got {fmt(x)}")
    kernel = list(ctx.attrs.get("kernel_shape") or [2] * (len(x) - 2))
    attrs = dict(ctx.attrs)
    if not attrs.get("strides"):
        attrs["strides"] = list(kernel) if ctx.attrs.get("kernel_shape") is None else [1] * len(kernel)
    c2 = Ctx(ctx.inputs, attrs)
    shape = (x[0], x[1], *_spatial(c2, kernel))
    return [TensorType(shape, ctx.dtype(0)), TensorType(shape, "int64")][:max(ctx.num_outputs, 1)]


def pool_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n = numel(out[0].shape)
    kernel = ctx.attrs.get("kernel_shape") or [2, 2]
    return None if n is None else n * math.prod(kernel)


def global_pool(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((*x[:2], *([1] * (len(x) - 2))), ctx.dtype(0))]


def reduce(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = ctx.attrs.get("axes")
    if axes is None and ctx.const(1) is not None:
        axes = [int(a) for a in list(ctx.const(1).reshape(-1))]
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if not axes and ctx.attrs.get("noop_with_empty_axes"):
        return [TensorType(x, ctx.dtype(0))]
    r = len(x)
    ax = set(range(r)) if not axes else {norm_axis(int(a), r) for a in axes}
    keep = bool(ctx.attrs.get("keepdims", 1))
    shape = tuple((1 if i in ax else d) for i, d in enumerate(x) if keep or i not in ax)
    return [TensorType(shape, ctx.dtype(0))]


def arg_reduce(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, "int64")]
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    keep = bool(ctx.attrs.get("keepdims", 1))
    shape = tuple((1 if i == ax else d) for i, d in enumerate(x) if keep or i != ax)
    return [TensorType(shape, "int64")]


def input_flops(per_element: int = 1):
    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        n = numel(ctx.shape(0))
        return None if n is None else per_element * n
    return rule


def output_flops(per_element: int = 1):
    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        n = numel(out[0].shape) if out else None
        return None if n is None else per_element * n
    return rule


def zero_flops(ctx: Ctx, out: list[TensorType]) -> int:
    return 0


def transpose(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    perm = ctx.attrs.get("perm")
    if perm is None and ctx.const(1) is not None:
        perm = [int(p) for p in ctx.const(1).reshape(-1)]
    perm = list(perm) if perm is not None else list(reversed(range(len(x))))
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {perm} is not a permutation of the {len(x)} axes of {fmt(x)}")
    return [TensorType(tuple(x[p] for p in perm), ctx.dtype(0))]


def reshape(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    target = ctx.attrs.get("shape")
    if target is None and ctx.const(1) is not None:
        target = [v if isinstance(v, str) else int(v) for v in ctx.const(1).reshape(-1)]
    if target is None:
        return [TensorType(None, ctx.dtype(0))]
    target = list(target)
    allowzero = bool(ctx.attrs.get("allowzero", 0))
    if x is not None and not allowzero:
        target = [x[i] if (t == 0 and i < len(x)) else t for i, t in enumerate(target)]
    if target.count(-1) > 1:
        raise ShapeError(f"reshape target {target} has more than one -1")
    if -1 in target and all(isinstance(t, int) for t in target):
        total = numel(x)
        rest = numel(tuple(t for t in target if t != -1))
        if total is None or rest is None:
            return [TensorType(tuple("?" if t == -1 else t for t in target), ctx.dtype(0))]
        if rest == 0 or total % rest:
            raise ShapeError(f"cannot reshape {fmt(x)} into {target}")
        target = [total // rest if t == -1 else t for t in target]
    total, new = numel(x), numel(tuple(target))
    if total is not None and new is not None and total != new:
        raise ShapeError(f"cannot reshape {fmt(x)} ({total} elements) into {fmt(tuple(target))} ({new} elements)")
    return [TensorType(tuple(target), ctx.dtype(0))]


def flatten(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    axis = int(ctx.attrs.get("axis", 1))
    axis = axis % len(x) if axis < 0 else axis
    a, b = numel(x[:axis]), numel(x[axis:])
    return [TensorType((a if a is not None else "?", b if b is not None else "?"), ctx.dtype(0))]


def concat(ctx: Ctx) -> list[TensorType]:
    shapes = [t.shape for t in ctx.inputs]
    dtype = ctx.dtype(0)
    if not shapes or any(s is None for s in shapes):
        return [TensorType(None, dtype)]
    r = len(shapes[0])
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), r)
    total: Dim = 0
    for s in shapes:
        if len(s) != r:
            raise ShapeError(f"concat inputs have different ranks: {', '.join(fmt(x) for x in shapes)}")
        for i in range(r):
            if i != ax and isinstance(s[i], int) and isinstance(shapes[0][i], int) and s[i] != shapes[0][i]:
                raise ShapeError(f"concat inputs {fmt(shapes[0])} and {fmt(s)} differ off axis {ax}")
        total = total + s[ax] if isinstance(total, int) and isinstance(s[ax], int) else "?"
    out = list(shapes[0])
    out[ax] = total
    return [TensorType(tuple(out), dtype)]


def _axes(ctx: Ctx) -> list[int] | None:
    axes = ctx.attrs.get("axes")
    if axes is None and ctx.const(1) is not None:
        axes = [int(a) for a in ctx.const(1).reshape(-1)]
    return None if axes is None else list(axes)


def squeeze(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = _axes(ctx)
    if x is None:
        return [TensorType(None, ctx.dtype(0))]
    if axes is None:
        return [TensorType(tuple(d for d in x if d != 1), ctx.dtype(0))]
    ax = {norm_axis(a, len(x)) for a in axes}
    return [TensorType(tuple(d for i, d in enumerate(x) if i not in ax), ctx.dtype(0))]


def unsqueeze(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    axes = _axes(ctx)
    if x is None or axes is None:
        return [TensorType(None, ctx.dtype(0))]
    r = len(x) + len(axes)
    ax = sorted(norm_axis(a, r) for a in axes)
    out, it = [], iter(x)
    for i in range(r):
        out.append(1 if i in ax else next(it))
    return [TensorType(tuple(out), ctx.dtype(0))]


def gather(ctx: Ctx) -> list[TensorType]:
    x, idx = ctx.shape(0), ctx.shape(1)
    if x is None or idx is None:
        return [TensorType(None, ctx.dtype(0))]
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    return [TensorType((*x[:ax], *idx, *x[ax + 1:]), ctx.dtype(0))]


def shape_of(ctx: Ctx) -> list[TensorType]:
    r = ctx.rank(0)
    if r is None:
        return [TensorType(None, "int64")]
    start, end = ctx.attrs.get("start"), ctx.attrs.get("end")
    return [TensorType((len(range(r)[slice(start, end)]),), "int64")]


def scalar_int(ctx: Ctx) -> list[TensorType]:
    return [TensorType((), "int64")]


def cast(ctx: Ctx) -> list[TensorType]:
    from ..ir import canonical_dtype

    to = ctx.attrs.get("to")
    return [TensorType(ctx.shape(0), canonical_dtype(str(to)) if to is not None else None)]


def constant(ctx: Ctx) -> list[TensorType]:
    import numpy as np

    value = ctx.attrs.get("value")
    if value is None:
        return [ctx.outputs[0] if ctx.outputs else TensorType()]
    arr = np.asarray(value, dtype=ctx.attrs.get("dtype") or None)
    if arr.dtype == np.float64 and not ctx.attrs.get("dtype"):
        arr = arr.astype(np.float32)
    return [TensorType(tuple(arr.shape), str(arr.dtype) if arr.dtype.kind != "U" else "string")]


def split(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    n = max(ctx.num_outputs, 1)
    if x is None:
        return [TensorType(None, ctx.dtype(0))] * n
    ax = norm_axis(int(ctx.attrs.get("axis", 0)), len(x))
    sizes = ctx.attrs.get("split")
    if sizes is None and ctx.const(1) is not None:
        sizes = [int(s) for s in ctx.const(1).reshape(-1)]
    if sizes is None:
        if isinstance(x[ax], str):
            return [TensorType(None, ctx.dtype(0))] * n
        chunk = -(-x[ax] // n)  # ONNX opset 18: the last part may be smaller
        if chunk * (n - 1) >= x[ax] and n > 1:
            raise ShapeError(f"cannot split axis {ax} of size {x[ax]} into {n} parts")
        sizes = [chunk] * (n - 1) + [x[ax] - chunk * (n - 1)]
    outs = []
    for s in sizes:
        shape = list(x)
        shape[ax] = s
        outs.append(TensorType(tuple(shape), ctx.dtype(0)))
    return outs


def slice_(ctx: Ctx) -> list[TensorType]:
    import numpy as np

    x = ctx.shape(0)
    starts, ends, axes, steps = (ctx.const(i) for i in (1, 2, 3, 4))
    if x is None or starts is None or ends is None or any(isinstance(d, str) for d in x):
        return [TensorType(None, ctx.dtype(0))]
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else [int(s) for s in steps]
    out = list(x)
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = norm_axis(a, len(x))
        out[a] = len(range(*slice(int(s), int(e), st).indices(x[a])))
    del np
    return [TensorType(tuple(out), ctx.dtype(0))]


def pad(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    pads = ctx.attrs.get("pads")
    if pads is None and ctx.const(1) is not None:
        pads = [int(p) for p in ctx.const(1).reshape(-1)]
    if x is None or pads is None:
        return [TensorType(None, ctx.dtype(0))]
    r = len(x)
    axes = list(range(r)) if ctx.const(3) is None else [norm_axis(int(a), r) for a in ctx.const(3).reshape(-1)]
    k = len(axes)
    if len(pads) != 2 * k:
        raise ShapeError(f"pad needs {2 * k} pad values for {k} axes, got {len(pads)}")
    out = list(x)
    for j, a in enumerate(axes):
        if isinstance(out[a], int):
            out[a] = out[a] + pads[j] + pads[j + k]
    return [TensorType(tuple(out), ctx.dtype(0))]


def resize(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    scales = ctx.attrs.get("scales")
    sizes = ctx.attrs.get("sizes")
    if scales is None:
        for i in (2, 1):
            c = ctx.const(i)
            if c is not None and c.size and c.dtype.kind == "f":
                scales = [float(v) for v in c.reshape(-1)]
                break
    if sizes is None and ctx.const(3) is not None and ctx.const(3).size:
        sizes = [int(v) for v in ctx.const(3).reshape(-1)]
    if x is None or (sizes is None and scales is None):
        return [TensorType(None, ctx.dtype(0))]
    axes = ctx.attrs.get("axes")
    axes = list(range(len(x))) if axes is None else [norm_axis(int(a), len(x)) for a in axes]
    if str(ctx.attrs.get("keep_aspect_ratio_policy", "stretch")) != "stretch":
        return [TensorType(None, ctx.dtype(0))]
    out = list(x)
    for j, a in enumerate(axes):
        if sizes is not None:
            out[a] = sizes[j]
        elif isinstance(x[a], int):
            out[a] = int(math.floor(x[a] * scales[j]))
    return [TensorType(tuple(out), ctx.dtype(0))]


def expand(ctx: Ctx) -> list[TensorType]:
    target = ctx.const(1)
    if target is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType(broadcast(ctx.shape(0), tuple(int(v) for v in target.reshape(-1))), ctx.dtype(0))]


def tile(ctx: Ctx) -> list[TensorType]:
    x, reps = ctx.shape(0), ctx.const(1)
    if x is None or reps is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType(tuple(d * int(r) if isinstance(d, int) else d for d, r in zip(x, reps.reshape(-1))), ctx.dtype(0))]


def topk(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    k = ctx.attrs.get("k")
    if k is None and ctx.const(1) is not None:
        k = int(ctx.const(1).reshape(-1)[0])
    if x is None or k is None:
        return [TensorType(None, ctx.dtype(0)), TensorType(None, "int64")]
    ax = norm_axis(int(ctx.attrs.get("axis", -1)), len(x))
    shape = tuple(k if i == ax else d for i, d in enumerate(x))
    return [TensorType(shape, ctx.dtype(0)), TensorType(shape, "int64")]


def layernorm_like(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))] + [TensorType(None, ctx.dtype(0))] * (ctx.num_outputs - 1)


def passthrough(ctx: Ctx) -> list[TensorType]:
    """Ops that forward their inputs (Assert/CheckNumerics, Print): output k has input k's type."""
    outs = [ctx.outputs[k] if k < len(ctx.outputs) and ctx.outputs[k].shape is not None else
            (ctx.inputs[k] if k < len(ctx.inputs) else TensorType()) for k in range(ctx.num_outputs)]
    return outs


def from_file(ctx: Ctx) -> list[TensorType]:
    """Data-dependent or opaque ops: the file's own output types are the only truth."""
    return list(ctx.outputs) if ctx.outputs else [TensorType()] * ctx.num_outputs


def nms(ctx: Ctx) -> list[TensorType]:
    given = ctx.outputs[0] if ctx.outputs else TensorType()
    return [given if given.shape is not None else TensorType(("num_selected", 3), "int64")]


def nonzero(ctx: Ctx) -> list[TensorType]:
    r = ctx.rank(0)
    return [TensorType((r, "num_nonzero") if r is not None else None, "int64")]


def depth_to_space(ctx: Ctx) -> list[TensorType]:
    x = ctx.shape(0)
    b = int(ctx.attrs.get("blocksize", 2))
    if x is None or len(x) != 4 or any(isinstance(d, str) for d in x[1:]):
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((x[0], x[1] // (b * b), x[2] * b, x[3] * b), ctx.dtype(0))]


def einsum(ctx: Ctx) -> list[TensorType]:
    eq = str(ctx.attrs.get("equation", "")).replace(" ", "")
    if "->" not in eq or "." in eq or any(t.shape is None for t in ctx.inputs):
        return [TensorType(None, ctx.dtype(0))]
    lhs, rhs = eq.split("->")
    dims: dict[str, Dim] = {}
    for term, t in zip(lhs.split(","), ctx.inputs):
        if len(term) != len(t.shape):
            raise ShapeError(f"einsum term {term!r} does not match operand {fmt(t.shape)}")
        for c, d in zip(term, t.shape):
            if c in dims and isinstance(d, int) and isinstance(dims[c], int) and dims[c] != d and 1 not in (d, dims[c]):
                raise ShapeError(f"einsum index {c!r} has sizes {dims[c]} and {d}")
            if c not in dims or dims[c] == 1:
                dims[c] = d
    return [TensorType(tuple(dims[c] for c in rhs), ctx.dtype(0))]


def einsum_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    eq = str(ctx.attrs.get("equation", "")).replace(" ", "")
    if "->" not in eq or any(t.shape is None for t in ctx.inputs):
        return None
    sizes: dict[str, int] = {}
    for term, t in zip(eq.split("->")[0].split(","), ctx.inputs):
        for c, d in zip(term, t.shape or ()):
            if isinstance(d, int):
                sizes[c] = max(sizes.get(c, 1), d)
    return 2 * math.prod(sizes.values()) if sizes else None


def bias_add(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]
