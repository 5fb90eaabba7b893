"""Linear algebra: matmul, gemm, einsum and det, with their shape and FLOP rules."""
from __future__ import annotations

import math

import numpy as np

from ..ir import Shape, TensorType
from . import rules as r
from .arrays import Unsupported, lit, present
from .registry import Entries
from .rules import Ctx, ShapeError, fmt, numel

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


# ---- matmul --------------------------------------------------------------------------------------
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
    batch = r.broadcast(a2[:-2], b2[:-2]) or ()
    out = (*batch, a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return tuple(out)


def infer_matmul(ctx: Ctx) -> list[TensorType]:
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


def _swap(x):
    return x.swapaxes(-1, -2) if x.ndim >= 2 else x


def matmul(xp, a, x, y):
    if a.get("transpose_a") or a.get("adj_x"):
        x = _swap(x)
    if a.get("transpose_b") or a.get("adj_y"):
        y = _swap(y)
    out = xp.matmul(x, y)
    # NumPy multiplies bfloat16 (ml_dtypes) in float32 and hands float32 back: the product keeps its operands' type
    return out.astype(x.dtype) if x.dtype == y.dtype and out.dtype != x.dtype else out


op("matmul", "MatMul", "BatchMatMul", "BatchMatMulV2", infer=infer_matmul, flops=matmul_flops,
   min_inputs=2, max_inputs=2, attrs={"transpose_a": False, "transpose_b": False},
   doc="NumPy matmul semantics with broadcasting batch dims", impl=matmul, cost_class="dot", fusion="library")


# ---- gemm ----------------------------------------------------------------------------------------
def infer_gemm(ctx: Ctx) -> list[TensorType]:
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
        r.broadcast((m, n), ctx.shape(2))
    return [TensorType((m, n), ctx.dtype(0))]


def gemm_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    a = ctx.shape(0)
    n_out = numel(out[0].shape)
    if a is None or n_out is None:
        return None
    k = a[0] if ctx.attrs.get("transA") else a[1]
    return 2 * n_out * k if isinstance(k, int) else None


def gemm(xp, a, x, y, c=None):
    if a.get("transA"):
        x = x.T
    if a.get("transB"):
        y = y.T
    out = xp.matmul(x, y)
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    if alpha != 1.0:
        out = out * lit(out, alpha)
    if present(c):
        out = out + (c * lit(c, beta) if beta != 1.0 else c)
    return out


op("gemm", "Gemm", "dense", "linear", infer=infer_gemm, flops=gemm_flops, min_inputs=2, max_inputs=3,
   attrs={"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}, doc="alpha * A' @ B' + beta * C", impl=gemm,
   cost_class="dot", fusion="library")


# ---- einsum --------------------------------------------------------------------------------------
def infer_einsum(ctx: Ctx) -> list[TensorType]:
    eq = str(ctx.attrs.get("equation", "")).replace(" ", "")
    if "->" not in eq or "." in eq or any(t.shape is None for t in ctx.inputs):
        return [TensorType(None, ctx.dtype(0))]
    lhs, rhs = eq.split("->")
    dims: dict = {}
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


def einsum(xp, a, *xs):
    if any(str(x.dtype) == "bfloat16" for x in xs):
        raise Unsupported("Einsum on bfloat16")
    return xp.einsum(str(a.get("equation", "")).replace(" ", ""), *xs)


op("einsum", "Einsum", infer=infer_einsum, flops=einsum_flops, min_inputs=1, attrs={"equation": ""}, impl=einsum,
   cost_class="dot", fusion="library")


# ---- Det ---------------------------------------------------------------------------------------------
def det(xp, a, x):
    """Determinant of the trailing square matrices, by LU in float64 (as accurate as onnx's reference and
    onnxruntime's float32 LU, and defined for float16/bfloat16, which LAPACK does not take)."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise Unsupported(f"Det of shape {tuple(x.shape)} (needs [..., M, M])")
    if np.dtype(x.dtype).kind != "f" and "bfloat16" not in str(x.dtype):
        raise Unsupported(f"Det of a {x.dtype} tensor (ONNX defines it for float types)")
    return np.asarray(np.linalg.det(np.asarray(x, np.float64))).astype(x.dtype)


def infer_det(ctx: Ctx) -> list[TensorType]:
    s = ctx.shape(0)
    if s is not None and len(s) < 2:
        raise r.ShapeError(f"Det of a rank-{len(s)} input (needs [..., M, M])")
    return [TensorType(None if s is None else s[:-2], ctx.dtype(0))]


def det_flops(ctx: Ctx, out: list[TensorType]) -> int | None:
    s = ctx.shape(0)
    n = r.numel(s)
    return None if n is None or not s else 2 * n * int(s[-1]) // 3  # LU: 2/3 M^3 per matrix


op("det", "Det", infer=infer_det, flops=det_flops, min_inputs=1, max_inputs=1, impl=det, devices=frozenset(), jax_ok=False,
   doc="determinant of each trailing M x M matrix (LU with partial pivoting)")
