"""The aten op table's frame: the adapters' vocabulary (Ref, Const, Call, Spec, NotMapped, and Adapters, how a
module declares its adapters), and the entries only PyTorch programs need (linear over any rank,
scaled-dot-product attention, nonzero as torch returns it). The adapters live in aten/table.py, layout.py,
core.py, grad.py and rnn.py; aten/adapters.py builds the table of them (build_adapters) and `translate`s."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import lit, present
from ..registry import Entries
from ..rules import Ctx, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

NONE = frozenset()


# ---- the adapters' vocabulary ------------------------------------------------------------------------
class Ref(str):
    """A tensor argument: the xcviz ref of the value an FX node produced."""


@dataclass(frozen=True)
class Const:
    """A constant input the loader turns into a `const` node (a scalar operand, a shape, slice bounds)."""

    value: np.ndarray


@dataclass
class Call:
    """One aten call as an adapter sees it: arguments in schema order with defaults filled in (tensors as
    Ref, lists of tensors as lists of Ref), the output types from the program's metadata, input types."""

    name: str
    args: list
    out: list[TensorType]
    types: dict = field(default_factory=dict)  # Ref -> TensorType

    def t(self, i: int) -> TensorType:
        return self.types.get(self.args[i], TensorType())

    def t_of(self, ref) -> TensorType:
        return self.types.get(ref, TensorType())

    def rank(self, i: int) -> int | None:
        s = self.t(i).shape
        return None if s is None else len(s)

    def dtype(self) -> str:
        return self.out[0].dtype or "float32" if self.out else "float32"

    def scalar(self, v, dtype: str | None = None):
        """A tensor argument as it is, a Python number as a 0-d constant of the output's dtype."""
        if isinstance(v, Ref) or v is None:
            return v
        return Const(np.asarray(v, dtype=np.dtype(dtype or _np_name(self.dtype()))))


def _np_name(dtype: str) -> str:
    return "float32" if dtype in ("bfloat16", "string") else dtype


@dataclass(frozen=True)
class Spec:
    """What an aten call becomes: one registry op, its inputs (Ref, Const or None for an absent optional), attrs."""

    op: str
    inputs: tuple
    attrs: dict = field(default_factory=dict)


class NotMapped(Exception):
    """The call's arguments are outside what the mapping covers; the node loads opaque with this reason."""


# ---- declaring adapters: each module lists its own; aten/adapters.build_adapters makes the one table -------
class Adapters:
    """One module's adapters, in the order it declares them (as Entries holds a family's ops): a module writes
    `ADAPTED = Adapters()`, `aten = ADAPTED.aten`, then `@aten("name", "name_", target="op")` on each adapter.
    Declaring touches no table: the table is built by one explicit function (aten.adapters.build_adapters)."""

    def __init__(self) -> None:
        self.rows: list[tuple[tuple[str, ...], str, Callable[[Call], Spec]]] = []

    def aten(self, *names: str, target: str):
        """Declare `fn` the adapter of the aten ops `names`, each becoming the registry op `target`."""
        def declare(fn: Callable[[Call], Spec]):
            self.rows.append((names, target, fn))
            return fn
        return declare


def i64_const(v) -> Const:
    return Const(np.asarray(v, dtype=np.int64))


def static_ints(values, what: str) -> list[int]:
    if any(not isinstance(v, (int, np.integer)) for v in values):
        raise NotMapped(f"{what} {values} is not static")
    return [int(v) for v in values]


def target_shape(c: Call, sizes=None) -> list[int]:
    """A target shape: the output's own static shape, or the sizes with one symbolic entry as -1."""
    out = c.out[0].shape if c.out else None
    if out is not None and all(isinstance(d, int) for d in out):
        return list(out)
    sizes = list(sizes if sizes is not None else (out or ()))
    unknown = [i for i, v in enumerate(sizes) if not isinstance(v, (int, np.integer))]
    if sizes and len(unknown) <= 1:
        return [-1 if i in unknown else int(v) for i, v in enumerate(sizes)]
    raise NotMapped(f"target shape {sizes} has more than one symbolic size")


# ---- linear: y = x @ w.T + b over any leading dims -----------------------------------------------------
def infer_linear(ctx: Ctx) -> list[TensorType]:
    x, w = ctx.shape(0), ctx.shape(1)
    if x is None or w is None or len(w) != 2:
        return [TensorType(None, ctx.dtype(0))]
    if isinstance(x[-1], int) and isinstance(w[1], int) and x[-1] != w[1]:
        raise r.ShapeError(f"linear input {r.fmt(x)} does not match weight {r.fmt(w)} (in_features {w[1]})")
    return [TensorType((*x[:-1], w[0]), ctx.dtype(0))]


def linear_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    n, w = numel(out[0].shape), ctx.shape(1)
    if n is None or w is None or not isinstance(w[-1], int):
        return None
    return 2 * n * w[-1] + (n if len(ctx.inputs) > 2 else 0)


def linear(xp, a, x, w, b=None):
    y = xp.matmul(x, xp.swapaxes(w, -1, -2))
    return y + b if present(b) else y


op("torch_linear", infer=infer_linear, flops=linear_flops, min_inputs=2, max_inputs=3, impl=linear,
   cost_class="dot", fusion="library",
   doc="x @ w.T + b over any leading dims (torch.nn.functional.linear; torch-xla: dot + add)")


# ---- scaled dot-product attention ------------------------------------------------------------------------
def infer_sdpa(ctx: Ctx) -> list[TensorType]:
    q, v = ctx.shape(0), ctx.shape(2)
    if q is None or v is None:
        return [TensorType(None, ctx.dtype(0))]
    return [TensorType((*q[:-1], v[-1]), ctx.dtype(0))]


def sdpa_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    q, k, v = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    nq, nk = numel(q), numel(k[-2:-1]) if k is not None else None
    if nq is None or nk is None or v is None or not isinstance(v[-1], int):
        return None
    # q @ k^T and p @ v (2 FLOPs a multiply-add each), plus about 5 per score for the softmax
    return 2 * nq * nk + 2 * (nq // q[-1]) * nk * v[-1] + 5 * (nq // q[-1]) * nk


def sdpa(xp, a, q, k, v, mask=None):
    scale = a.get("scale")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if int(a.get("enable_gqa", 0)) and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = xp.repeat(k, rep, axis=-3), xp.repeat(v, rep, axis=-3)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2)) * lit(q, scale)
    L, S = q.shape[-2], k.shape[-2]
    if int(a.get("is_causal", 0)):
        keep = np.tril(np.ones((L, S), dtype=bool))
        s = xp.where(keep, s, lit(s, -np.inf))
    if present(mask):
        s = xp.where(mask, s, lit(s, -np.inf)) if mask.dtype == bool else s + mask
    s = s - xp.max(s, axis=-1, keepdims=True)
    e = xp.exp(s)
    p = e / xp.sum(e, axis=-1, keepdims=True)
    return xp.matmul(p, v).astype(q.dtype)


op("sdpa", "scaled_dot_product_attention", infer=infer_sdpa, flops=sdpa_flops, min_inputs=3, max_inputs=4,
   attrs={"is_causal": 0, "scale": None, "enable_gqa": 0}, impl=sdpa, cost_class="dot", fusion="library", cpu_kernels=7,
   doc="softmax(q @ k^T * scale + mask) @ v, optional causal mask (torch SDPA in inference; torch-xla: "
       "dot, softmax, dot)")


# ---- nonzero as torch returns it: (number of hits, rank) ----------------------------------------------------
op("torch_nonzero", devices=NONE, reason="data-dependent output shape", infer=r.from_file, min_inputs=1,
   max_inputs=1, impl=lambda xp, a, x: np.argwhere(np.asarray(x)).astype(np.int64),
   doc="indices of the nonzero elements, one row per hit (torch.nonzero: ONNX NonZero transposed)")
