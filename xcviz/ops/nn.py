"""Neural-network ops: convolution, pooling, normalization, softmax, attention building blocks."""
from __future__ import annotations

from . import rules as r
from .registry import REDUCTION, op

op("conv2d", "Conv", "Conv2D", "conv", "convolution", infer=r.conv, flops=r.conv_flops, min_inputs=2, max_inputs=3,
   attrs={"strides": None, "pads": None, "dilations": None, "group": 1, "auto_pad": "NOTSET"},
   doc="N-d convolution, NCHW input and OIHW weight (ONNX Conv semantics)")
op("maxpool", "MaxPool", "pool", "max_pool", "max_pool2d", infer=r.pool, flops=r.pool_flops, min_inputs=1, max_inputs=1,
   num_outputs=None,
   attrs={"kernel_shape": None, "strides": None, "pads": None, "ceil_mode": 0},
   doc="max pooling; `pool` (the seed's name) defaults to a 2x2 window with stride 2")
op("avgpool", "AveragePool", "AvgPool", "avg_pool", infer=r.pool, flops=r.pool_flops, min_inputs=1, max_inputs=1,
   attrs={"kernel_shape": None, "strides": None, "pads": None, "ceil_mode": 0, "count_include_pad": 0})
op("global_avgpool", "GlobalAveragePool", infer=r.global_pool, flops=r.input_flops(1), min_inputs=1, max_inputs=1,
   groups=REDUCTION)
op("global_maxpool", "GlobalMaxPool", infer=r.global_pool, flops=r.input_flops(1), min_inputs=1, max_inputs=1,
   groups=REDUCTION)
op("batchnorm", "BatchNormalization", "FusedBatchNorm", "FusedBatchNormV3", "batch_norm",
   infer=r.layernorm_like, flops=r.input_flops(4), min_inputs=5, max_inputs=5, num_outputs=None,
   attrs={"epsilon": 1e-5}, doc="inference-mode batch normalization: scale, bias, mean, var inputs")
op("layernorm", "LayerNormalization", "layer_norm", infer=r.layernorm_like, flops=r.input_flops(8), min_inputs=1,
   max_inputs=3, num_outputs=None, attrs={"axis": -1, "epsilon": 1e-5}, groups=REDUCTION)
op("instancenorm", "InstanceNormalization", infer=r.same, flops=r.input_flops(8), min_inputs=3, max_inputs=3,
   attrs={"epsilon": 1e-5}, groups=REDUCTION)
op("softmax", "Softmax", infer=r.same, flops=r.input_flops(5), min_inputs=1, max_inputs=1, attrs={"axis": -1},
   groups=REDUCTION)
op("log_softmax", "LogSoftmax", infer=r.same, flops=r.input_flops(6), min_inputs=1, max_inputs=1,
   attrs={"axis": -1}, groups=REDUCTION)
op("dropout", "Dropout", infer=r.layernorm_like, flops=r.zero_flops, min_inputs=1, max_inputs=3, num_outputs=None,
   doc="inference-mode dropout: identity")
op("resize", "Resize", "Upsample", "upsample", infer=r.resize, flops=r.output_flops(4), min_inputs=1, max_inputs=4,
   attrs={"mode": "nearest"}, doc="nearest / linear resize by scales or sizes")
op("depth_to_space", "DepthToSpace", infer=r.depth_to_space, flops=r.zero_flops, min_inputs=1, max_inputs=1,
   attrs={"blocksize": 2, "mode": "DCR"})
