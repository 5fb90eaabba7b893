"""Sources, shape queries, no-ops, and the ops XLA cannot compile (each with its reason)."""
from __future__ import annotations

from . import rules as r
from .registry import CONTROL_FLOW, CUSTOM, NOOP, SHAPE_CONSUMER, SOURCE, ZERO_SIZE, op

NONE = frozenset()
zero = r.zero_flops

op("const", "Constant", "Const", groups=(SOURCE, ZERO_SIZE), infer=r.constant, flops=zero, max_inputs=0,
   attrs={"value": None, "dtype": None}, doc="a constant tensor; counts 0 toward effective cluster size")
op("placeholder", "Placeholder", "_Arg", groups=SOURCE, devices=NONE, max_inputs=0,
   reason="graph argument (like TF's _Arg): fed from outside", flops=zero)
op("shape", "Shape", groups=SHAPE_CONSUMER, infer=r.shape_of, flops=zero, min_inputs=1, max_inputs=1)
op("size", "Size", groups=SHAPE_CONSUMER, infer=r.scalar_int, flops=zero, min_inputs=1, max_inputs=1)
op("rank", "Rank", groups=SHAPE_CONSUMER, infer=r.scalar_int, flops=zero, min_inputs=1, max_inputs=1)
op("noop", "NoOp", groups=NOOP, infer=lambda ctx: [], num_outputs=0, flops=zero, doc="ordering only")

# --- ops XLA cannot compile: registered so that they load, explain themselves and fall back ---------
op("nms", "NonMaxSuppression", "NonMaxSuppressionV3", "NonMaxSuppressionV4", "NonMaxSuppressionV5",
   devices=NONE, reason="data-dependent output shape (number of kept boxes)", infer=r.nms, min_inputs=2,
   max_inputs=5, attrs={"center_point_box": 0})
op("custom_nms", devices=NONE, groups=CUSTOM, reason="custom op (the seed's post-processing, no XLA kernel)",
   num_outputs=None, doc="the seed article's custom post-processing op")
op("nonzero", "NonZero", devices=NONE, reason="data-dependent output shape", infer=r.nonzero, min_inputs=1,
   max_inputs=1)
op("unique", "Unique", devices=NONE, reason="data-dependent output shape (excluded from auto-clustering, as in TF)",
   num_outputs=None, min_inputs=1, max_inputs=1)
op("random_normal", "RandomNormal", "RandomStandardNormal", devices=NONE, reason="stateful random op", max_inputs=0,
   attrs={"shape": None, "dtype": "float32"})
op("random_uniform", "RandomUniform", devices=NONE, reason="stateful random op", max_inputs=0,
   attrs={"shape": None, "dtype": "float32"})
op("random_normal_like", "RandomNormalLike", devices=NONE, reason="stateful random op", infer=r.same,
   min_inputs=1, max_inputs=1)
op("multinomial", "Multinomial", devices=NONE, reason="stateful random op", min_inputs=1, max_inputs=1)
op("string_normalizer", "StringNormalizer", devices=NONE, reason="string op (XLA has no string type)",
   min_inputs=1, max_inputs=1, doc="output length depends on the data (stopwords are removed)")
op("string_split", "StringSplit", "StringSplitV2", devices=NONE, reason="string op (XLA has no string type)",
   num_outputs=None)
op("py_func", "PyFunc", "EagerPyFunc", "python_callback", devices=NONE, num_outputs=None,
   reason="Python callback: runs in the host interpreter, opaque to XLA")
op("assert", "Assert", "CheckNumerics", devices=NONE, reason="Assert/CheckNumerics are not auto-clustered (as in TF)",
   num_outputs=None, infer=r.passthrough, doc="passes its inputs through after checking them")
op("print", "Print", "PrintV2", devices=NONE, reason="host side effect", num_outputs=None, infer=r.passthrough)
op("loop", "Loop", devices=NONE, groups=CONTROL_FLOW, reason="no XLA lowering in xcviz for Loop", num_outputs=None)
op("if", "If", devices=NONE, groups=CONTROL_FLOW, reason="no XLA lowering in xcviz for If", num_outputs=None)
