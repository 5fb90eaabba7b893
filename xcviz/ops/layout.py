"""Layout and data-movement ops: reshape, transpose, concat, slicing, gathering, padding."""
from __future__ import annotations

from . import rules as r
from .registry import LAYOUT, ZERO_SIZE, op

L = LAYOUT
zero = r.zero_flops
op("reshape", "Reshape", groups=L, infer=r.reshape, flops=zero, min_inputs=1, max_inputs=2,
   attrs={"shape": None, "allowzero": 0}, doc="target shape from attr `shape` or a constant second input")
op("transpose", "Transpose", groups=L, infer=r.transpose, flops=zero, min_inputs=1, max_inputs=2, attrs={"perm": None})
op("concat", "Concat", "ConcatV2", groups=L, infer=r.concat, flops=zero, min_inputs=1, attrs={"axis": 0})
op("flatten", "Flatten", groups=L, infer=r.flatten, flops=zero, min_inputs=1, max_inputs=1, attrs={"axis": 1})
op("squeeze", "Squeeze", groups=L, infer=r.squeeze, flops=zero, min_inputs=1, max_inputs=2, attrs={"axes": None})
op("unsqueeze", "Unsqueeze", "ExpandDims", groups=L, infer=r.unsqueeze, flops=zero, min_inputs=1, max_inputs=2,
   attrs={"axes": None})
op("gather", "Gather", "GatherV2", groups=L, infer=r.gather, flops=zero, min_inputs=2, max_inputs=2, attrs={"axis": 0})
op("slice", "Slice", "StridedSlice", groups=L, infer=r.slice_, flops=zero, min_inputs=1, max_inputs=5,
   doc="starts, ends, axes, steps as constant inputs (ONNX opset >= 10)")
op("split", "Split", "SplitV", groups=L, infer=r.split, flops=zero, min_inputs=1, max_inputs=2, num_outputs=None,
   attrs={"axis": 0, "split": None})
op("pad", "Pad", "PadV2", groups=L, infer=r.pad, flops=zero, min_inputs=1, max_inputs=4,
   attrs={"mode": "constant", "pads": None})
op("expand", "Expand", "BroadcastTo", groups=L, infer=r.expand, flops=zero, min_inputs=2, max_inputs=2)
op("tile", "Tile", groups=L, infer=r.tile, flops=zero, min_inputs=2, max_inputs=2)
op("identity", "Identity", "Snapshot", "StopGradient", groups=(L, ZERO_SIZE), infer=r.same, flops=zero,
   min_inputs=1, max_inputs=1, doc="counts 0 toward a cluster's effective size, as in TF")
