"""Ops in PyTorch's forms that the ONNX families lack (indexing, math, nn, gradients); xcviz.ops.build_registry
collects the modules' OPS."""
