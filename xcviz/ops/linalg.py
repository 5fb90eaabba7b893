"""Linear algebra and reductions: matmul, gemm, einsum, reduce_*, argmax, cumsum, topk."""
from __future__ import annotations

from . import rules as r
from .registry import REDUCTION, op

op("matmul", "MatMul", "BatchMatMul", "BatchMatMulV2", infer=r.matmul, flops=r.matmul_flops,
   min_inputs=2, max_inputs=2, attrs={"transpose_a": False, "transpose_b": False},
   doc="NumPy matmul semantics with broadcasting batch dims")
op("gemm", "Gemm", "dense", "linear", infer=r.gemm, flops=r.gemm_flops, min_inputs=2, max_inputs=3,
   attrs={"alpha": 1.0, "beta": 1.0, "transA": 0, "transB": 0}, doc="alpha * A' @ B' + beta * C")
op("einsum", "Einsum", infer=r.einsum, flops=r.einsum_flops, min_inputs=1, attrs={"equation": ""})

red = dict(groups=REDUCTION, infer=r.reduce, min_inputs=1, max_inputs=2, attrs={"axes": None, "keepdims": 1})
op("reduce_mean", "ReduceMean", flops=r.input_flops(1), **red)
op("reduce_sum", "ReduceSum", flops=r.input_flops(1), **red)
op("reduce_max", "ReduceMax", flops=r.input_flops(1), **red)
op("reduce_min", "ReduceMin", flops=r.input_flops(1), **red)
op("reduce_prod", "ReduceProd", "Prod", flops=r.input_flops(1), **red)
op("argmax", "ArgMax", groups=REDUCTION, infer=r.arg_reduce, flops=r.input_flops(1), min_inputs=1, max_inputs=1,
   attrs={"axis": 0, "keepdims": 1})
op("argmin", "ArgMin", groups=REDUCTION, infer=r.arg_reduce, flops=r.input_flops(1), min_inputs=1, max_inputs=1,
   attrs={"axis": 0, "keepdims": 1})
op("cumsum", "CumSum", "Cumsum", infer=r.same, flops=r.input_flops(1), min_inputs=2, max_inputs=2,
   attrs={"exclusive": 0, "reverse": 0})
op("topk", "TopK", "TopKV2", infer=r.topk, flops=r.input_flops(4), min_inputs=1, max_inputs=2, num_outputs=2,
   attrs={"axis": -1, "largest": 1, "sorted": 1},
   doc="k must be a constant (attribute or constant input); XLA sorts with a static k")
