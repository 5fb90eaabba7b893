"""Elementwise ops: unary activations and math, binary broadcasting arithmetic and comparisons."""
from __future__ import annotations

from . import rules as r
from .registry import ELEMENTWISE, op

E = ELEMENTWISE
unary = dict(groups=E, infer=r.same, min_inputs=1, max_inputs=1)

op("relu", "Relu", **unary, flops=r.output_flops(1), doc="max(x, 0)")
op("relu6", "Relu6", **unary, flops=r.output_flops(2))
op("gelu", "Gelu", **unary, attrs={"approximate": "none"}, flops=r.output_flops(8), doc="Gaussian error linear unit")
op("sigmoid", "Sigmoid", **unary, flops=r.output_flops(4))
op("tanh", "Tanh", **unary, flops=r.output_flops(4))
op("exp", "Exp", **unary, flops=r.output_flops(4))
op("log", "Log", **unary, flops=r.output_flops(4))
op("sqrt", "Sqrt", **unary, flops=r.output_flops(2))
op("rsqrt", "Rsqrt", **unary, flops=r.output_flops(2))
op("reciprocal", "Reciprocal", "Inv", **unary, flops=r.output_flops(1))
op("neg", "Neg", **unary, flops=r.output_flops(1))
op("abs", "Abs", **unary, flops=r.output_flops(1))
op("erf", "Erf", **unary, flops=r.output_flops(8))
op("floor", "Floor", **unary, flops=r.output_flops(1))
op("ceil", "Ceil", **unary, flops=r.output_flops(1))
op("sin", "Sin", **unary, flops=r.output_flops(4))
op("cos", "Cos", **unary, flops=r.output_flops(4))
op("softplus", "Softplus", **unary, flops=r.output_flops(4))
op("leaky_relu", "LeakyRelu", **unary, attrs={"alpha": 0.01}, flops=r.output_flops(2))
op("elu", "Elu", **unary, attrs={"alpha": 1.0}, flops=r.output_flops(4))
op("hard_sigmoid", "HardSigmoid", **unary, attrs={"alpha": 0.2, "beta": 0.5}, flops=r.output_flops(3))
op("hard_swish", "HardSwish", **unary, flops=r.output_flops(4))
op("silu", "Swish", "swish", **unary, flops=r.output_flops(5))
op("not", "Not", "LogicalNot", **unary, flops=r.output_flops(1))
op("clip", "Clip", "ClipByValue", groups=E, infer=r.same, min_inputs=1, max_inputs=3,
   flops=r.output_flops(2), doc="clamp to [min, max] (attrs or inputs 2 and 3)")
op("cast", "Cast", groups=E, infer=r.cast, min_inputs=1, max_inputs=1, flops=r.zero_flops)

binary = dict(groups=E, infer=r.broadcast_all, min_inputs=2, max_inputs=2, flops=r.output_flops(1))
op("add", "Add", "AddV2", **binary)
op("sub", "Sub", **binary)
op("mul", "Mul", **binary)
op("div", "Div", "RealDiv", **binary)
op("pow", "Pow", **binary)
op("max", "Max", "Maximum", groups=E, infer=r.broadcast_all, min_inputs=1, flops=r.output_flops(1))
op("min", "Min", "Minimum", groups=E, infer=r.broadcast_all, min_inputs=1, flops=r.output_flops(1))
op("sum", "Sum", "AddN", groups=E, infer=r.broadcast_all, min_inputs=1, flops=r.output_flops(1),
   doc="elementwise sum of any number of inputs")
op("mean", "Mean", groups=E, infer=r.broadcast_all, min_inputs=1, flops=r.output_flops(1),
   doc="elementwise mean of any number of inputs (ONNX Mean)")
op("squared_difference", "SquaredDifference", **binary)
op("bias_add", "BiasAdd", groups=E, infer=r.bias_add, min_inputs=2, max_inputs=2, flops=r.output_flops(1),
   doc="x + bias along the channel axis (TF)")

cmp = dict(groups=E, infer=r.compare, min_inputs=2, max_inputs=2, flops=r.output_flops(1))
op("equal", "Equal", **cmp)
op("less", "Less", **cmp)
op("greater", "Greater", **cmp)
op("and", "And", "LogicalAnd", **cmp)
op("or", "Or", "LogicalOr", **cmp)
op("where", "Where", "Select", "SelectV2", groups=E, infer=r.where, min_inputs=3, max_inputs=3,
   flops=r.output_flops(1), doc="select(cond, x, y) with broadcasting")
