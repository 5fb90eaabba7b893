"""The aten op table's layout, indexing and source adapters: views and reshapes, slicing, gathers, concat and
split, and tensors made from sizes (arange, full, zeros)."""
from __future__ import annotations

import numpy as np

from . import Adapters, Call, Const, NotMapped, Spec, i64_const, target_shape, static_ints

ADAPTED = Adapters()  # this module's aten adapters, in order (aten.adapters.build_adapters puts them in the table)
aten = ADAPTED.aten


@aten("view", "_unsafe_view", "reshape", "flatten", "unflatten", "view_copy", target="reshape")
def _view(c: Call) -> Spec:
    sizes = c.args[1] if c.name in ("view", "_unsafe_view", "reshape", "view_copy") else None
    return Spec("reshape", (c.args[0],), {"shape": target_shape(c, sizes)})


@aten("permute", "permute_copy", target="transpose")
def _permute(c: Call) -> Spec:
    rank = c.rank(0)
    return Spec("transpose", (c.args[0],), {"perm": [int(d) % rank if rank else int(d) for d in c.args[1]]})


@aten("transpose", "t", "numpy_T", target="transpose")
def _transpose(c: Call) -> Spec:
    rank = c.rank(0)
    if rank is None:
        raise NotMapped("transpose of a tensor of unknown rank")
    perm = list(range(rank))
    if c.name == "transpose":
        d0, d1 = int(c.args[1]) % rank, int(c.args[2]) % rank
    else:
        d0, d1 = 0, rank - 1
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return Spec("transpose", (c.args[0],), {"perm": perm})


@aten("unsqueeze", "unsqueeze_copy", target="unsqueeze")
def _unsqueeze(c: Call) -> Spec:
    return Spec("unsqueeze", (c.args[0],), {"axes": [int(c.args[1])]})


@aten("squeeze", "squeeze_copy", target="squeeze")
def _squeeze(c: Call) -> Spec:
    dims = c.args[1] if len(c.args) > 1 else None
    if dims is None:
        shape = c.t(0).shape
        if shape is None or any(isinstance(d, str) for d in shape):
            raise NotMapped("squeeze of all size-1 dims of a shape not fully known")
        dims = [i for i, d in enumerate(shape) if d == 1]
    dims = [dims] if isinstance(dims, int) else list(dims)
    shape = c.t(0).shape
    if shape is not None:  # torch skips dims whose size is not 1; ONNX would fail
        dims = [d for d in dims if shape[d] == 1]
    return Spec("squeeze", (c.args[0],), {"axes": [int(d) for d in dims]})


@aten("expand", "expand_copy", "expand_as", "broadcast_to", target="expand")
def _expand(c: Call) -> Spec:
    shape = c.out[0].shape
    if shape is None or any(isinstance(d, str) for d in shape):
        sizes = c.args[1] if c.name != "expand_as" else None
        target = [1 if not isinstance(v, int) or v == -1 else v for v in (sizes or ())]
        if not target:
            raise NotMapped("expand to a symbolic shape")
        return Spec("expand", (c.args[0], i64_const(target)))
    return Spec("expand", (c.args[0], i64_const(list(shape))))


@aten("repeat", target="tile")
def _repeat(c: Call) -> Spec:
    reps = static_ints(c.args[1], "repeats")
    if len(reps) != c.rank(0):
        raise NotMapped("repeat that adds leading dims")
    return Spec("tile", (c.args[0], i64_const(reps)))


@aten("cat", "concat", "concatenate", target="concat")
def _cat(c: Call) -> Spec:
    # torch skips 1-D empty tensors whatever the axis (legacy: an empty KV cache is torch.tensor([]))
    parts = [t for t in c.args[0] if c.t_of(t).shape != (0,)] or list(c.args[0][:1])
    return Spec("concat", tuple(parts), {"axis": int(c.args[1])})


@aten("slice", "slice_copy", target="slice")
def _slice(c: Call) -> Spec:
    x, dim, start, end, step = c.args[:5]
    start = 0 if start is None else start
    end = 2**62 if end is None or (isinstance(end, int) and end > 2**62) else end
    if not all(isinstance(v, (int, np.integer)) for v in (start, end, step)):
        raise NotMapped("slice with symbolic bounds")
    return Spec("slice", (x, i64_const([start]), i64_const([end]), i64_const([int(dim)]), i64_const([step])))


@aten("select", "select_copy", target="gather")
def _select(c: Call) -> Spec:
    return Spec("gather", (c.args[0], i64_const(int(c.args[2]))), {"axis": int(c.args[1])})


@aten("index_select", target="gather")
def _index_select(c: Call) -> Spec:
    return Spec("gather", (c.args[0], c.args[2]), {"axis": int(c.args[1])})


@aten("embedding", target="gather")
def _embedding(c: Call) -> Spec:
    return Spec("gather", (c.args[0], c.args[1]), {"axis": 0})


@aten("gather", target="gather_elements")
def _gather(c: Call) -> Spec:
    return Spec("gather_elements", (c.args[0], c.args[2]), {"axis": int(c.args[1])})


@aten("split_with_sizes", "split", target="split")
def _split(c: Call) -> Spec:
    sizes, dim = c.args[1], int(c.args[2])
    if isinstance(sizes, (int, np.integer)):
        shape = c.t(0).shape
        if shape is None or not isinstance(shape[dim], int):
            raise NotMapped("split of a symbolic dim")
        n = shape[dim]
        sizes = [min(int(sizes), n - i) for i in range(0, n, int(sizes))]
    return Spec("split", (c.args[0],), {"axis": dim, "split": static_ints(sizes, "split sizes")})


@aten("chunk", target="split")
def _chunk(c: Call) -> Spec:
    dim, shape = int(c.args[2]), c.t(0).shape
    if shape is None or not isinstance(shape[dim], int):
        raise NotMapped("chunk of a symbolic dim")
    n, size = shape[dim], -(-shape[dim] // int(c.args[1]))
    return Spec("split", (c.args[0],), {"axis": dim, "split": [min(size, n - i) for i in range(0, n, size)]})


@aten("tril", "triu", target="trilu")
def _trilu(c: Call) -> Spec:
    return Spec("trilu", (c.args[0], i64_const(int(c.args[1]))), {"upper": int(c.name == "triu")})


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@aten("constant_pad_nd", "pad", target="pad")
def pad_spec(c: Call) -> Spec:
    mode, value = ("constant", c.args[2]) if c.name == "constant_pad_nd" else (c.args[2], c.args[3])
    if mode not in _PAD_MODES:
        raise NotMapped(f"pad mode {mode!r}")
    pads, rank = static_ints(c.args[1], "pads"), c.rank(0)
    if rank is None:
        raise NotMapped("pad of a tensor of unknown rank")
    # torch: (last dim begin, end, second-to-last begin, end, ...); ONNX: all begins, then all ends
    k = len(pads) // 2
    begins = [0] * (rank - k) + [pads[2 * (k - 1 - i)] for i in range(k)]
    ends = [0] * (rank - k) + [pads[2 * (k - 1 - i) + 1] for i in range(k)]
    return Spec("pad", (c.args[0], i64_const(begins + ends), c.scalar(value or 0)), {"mode": _PAD_MODES[mode]})


# ---- tensors made from sizes: constants when the sizes are static --------------------------------------------
@aten("arange", target="range")
def _arange(c: Call) -> Spec:
    args = [a for a in c.args[:3] if not isinstance(a, str)]
    nums = [a for a in args if isinstance(a, (int, float))]
    if len(nums) == 1:
        start, end, step = 0, nums[0], 1
    elif len(nums) >= 2:
        start, end = nums[:2]
        step = nums[2] if len(nums) > 2 and c.name == "arange" and len(c.args) > 2 and \
            isinstance(c.args[2], (int, float)) else 1
    else:
        raise NotMapped("arange with symbolic bounds")
    dt = np.dtype(c.dtype() if c.dtype() != "bfloat16" else "float32")
    return Spec("range", tuple(Const(np.asarray(v, dtype=dt)) for v in (start, end, step)))


def filled_spec(c: Call, value) -> Spec:
    shape = c.out[0].shape
    if shape is None or any(isinstance(d, str) for d in shape):
        raise NotMapped(f"aten.{c.name} of a symbolic shape")
    dt = c.dtype() if c.dtype() != "bfloat16" else "float32"
    return Spec("const", (), {"value": np.full(shape, value, dtype=np.dtype(dt))})


aten("full", target="const")(lambda c: filled_spec(c, c.args[1]))
aten("full_like", target="const")(lambda c: filled_spec(c, c.args[1]))
aten("zeros", "zeros_like", "new_zeros", target="const")(lambda c: filled_spec(c, 0))
aten("ones", "ones_like", "new_ones", target="const")(lambda c: filled_spec(c, 1))
aten("scalar_tensor", target="const")(lambda c: filled_spec(c, c.args[0]))
