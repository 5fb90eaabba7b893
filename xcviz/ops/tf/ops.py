"""TensorFlow ops under their TF names (`tf.<Op>`), with TF's signatures: the ones the pass treats specially.

A node read from a TensorFlow file has op type `tf.<Op>`, so TF's names never resolve to the ONNX-signature
entries of the same name (TF's `RandomUniform` takes its shape as an input, ONNX's as an attribute). Only
the ops whose role in MarkForCompilationPass is more than "compilable or not" have an entry: `Const` and
`Identity` count 0 toward a cluster's size, `Shape`/`Size`/`Rank` cannot seed a cluster, a lone `NoOp` is
not merged into; every other TF op is judged from TF's XLA kernel registry (tf/kernels.py) by the
clustering's TF rules. Devices: TF's registrations for XLA_CPU_JIT / XLA_GPU_JIT."""
from __future__ import annotations

import numpy as np

from ...ir import TensorType
from .. import rules as r
from ..arrays import np_dtype
from ..registry import NOOP, SHAPE_CONSUMER, SOURCE, TYPE_VALUE, VALUE_RULE, ZERO_SIZE, Entries
from ..rules import Ctx
from .kernels import xla_devices

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op

zero = r.zero_flops


def _const(xp, a):
    v = a.get("value")
    return np.asarray(v, dtype=np_dtype(a["dtype"]) if a.get("dtype") and a["dtype"] != "string" else None)


def _infer_const(ctx: Ctx) -> list[TensorType]:
    v = ctx.attrs.get("value")
    if v is None:
        return list(ctx.outputs[:1]) or [TensorType()]
    arr = np.asarray(v)
    return [TensorType(tuple(arr.shape), "string" if arr.dtype == object else str(arr.dtype))]


op("tf.Const", loop_role="const", groups=(SOURCE, ZERO_SIZE), devices=xla_devices("Const"), infer=_infer_const, flops=zero,
   max_inputs=0, attrs={"value": None, "dtype": None}, folds=True, impl=_const,
   doc="TF Const: its `value` tensor; counts 0 toward a cluster's effective size")
op("tf.Identity", loop_role="=", groups=(ZERO_SIZE, VALUE_RULE), devices=xla_devices("Identity"), infer=r.same, flops=zero, min_inputs=1,
   max_inputs=1, impl=lambda xp, a, x: x, doc="TF Identity: removed when clustered, so it counts 0 toward the size")


def _shape_type(ctx: Ctx, n: int | None) -> list[TensorType]:
    return [TensorType((n,) if n is not None else None, ctx.attrs.get("out_type") or "int32")]


op("tf.Shape", groups=(SHAPE_CONSUMER, TYPE_VALUE), devices=xla_devices("Shape"), flops=zero, min_inputs=1, max_inputs=1,
   attrs={"out_type": "int32"}, infer=lambda ctx: _shape_type(ctx, ctx.rank(0)), folds=True,
   impl=lambda xp, a, x: np.asarray(x.shape, dtype=np_dtype(a.get("out_type") or "int32")),
   doc="TF Shape(input; out_type): reads only its input's shape, never seeds a cluster")
op("tf.Size", groups=(SHAPE_CONSUMER, TYPE_VALUE), devices=xla_devices("Size"), flops=zero, min_inputs=1, max_inputs=1,
   attrs={"out_type": "int32"}, infer=lambda ctx: [TensorType((), ctx.attrs.get("out_type") or "int32")],
   impl=lambda xp, a, x: np.asarray(x.size, dtype=np_dtype(a.get("out_type") or "int32")),
   doc="TF Size(input; out_type)")
op("tf.Rank", groups=(SHAPE_CONSUMER, TYPE_VALUE), devices=xla_devices("Rank"), flops=zero, min_inputs=1, max_inputs=1,
   infer=lambda ctx: [TensorType((), "int32")], impl=lambda xp, a, x: np.asarray(x.ndim, dtype=np.int32),
   doc="TF Rank(input)")
op("tf.NoOp", groups=NOOP, devices=xla_devices("NoOp"), infer=lambda ctx: [], num_outputs=0, flops=zero,
   impl=lambda xp, a, *xs: (), doc="TF NoOp: ordering only; a lone NoOp is not merged into")
