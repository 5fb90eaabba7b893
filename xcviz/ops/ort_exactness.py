"""Where onnxruntime's kernels are outside the tolerance of ONNX's own node tests for an op, measured by running
every case through the command line (docs/make_node_tests.py; docs/node_tests_cli.tsv). The native runtime
(runtime.native) runs a part holding such a node on xcviz's NumPy reference instead, and says so: no run hands
back a number the op's definition does not accept."""
from __future__ import annotations

_FFT = ("leaves float32 roundoff in the bins that are exactly 0 (1e-4 where the spectrum reaches 500; ONNX's tests "
        "allow 1e-7 there)")
ORT_INEXACT = {"DFT": _FFT, "STFT": _FFT}


def ort_inexact(node) -> str | None:
    """Why onnxruntime must not run `node` (its result is outside ONNX's tolerance for the op), or None."""
    op = getattr(node, "op_type", None)
    if op in ORT_INEXACT:
        return f"onnxruntime's {op} {ORT_INEXACT[op]}"
    if op == "Attention" and any(getattr(t, "dtype", None) == "float16" for t in node.outputs):
        return "onnxruntime's float16 Attention is 5e-4 off ONNX's reference, which its tests allow 1e-7 of"
    return None
