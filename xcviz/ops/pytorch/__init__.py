"""Ops in PyTorch's forms that the ONNX families lack (indexing, math, nn, gradients); xcviz.ops imports the
modules in registration order."""
