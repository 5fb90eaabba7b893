"""`calibrate --native torch`: calibrate's op programs (runtime.calibrate_ops) as torch eager calls.

A torch program replays its own aten calls (runtime.torch_eager); calibrate's programs are xcviz graphs of a
dozen ops, so each is mapped here to the torch call a model's op of the class makes (matmul to torch.matmul,
conv2d to F.conv2d, ...). Each part is checked against the NumPy reference before it is timed (native
.prepare_or_numpy), so a mapping that computed something else would fall back, not be timed."""
from __future__ import annotations

import numpy as np

from .onnx_emit import Unmappable


def _call(node, torch):
    """(the torch callable of one calibrate op, taking its input tensors)."""
    F, a, op = torch.nn.functional, node.attrs, node.op
    if op in ("matmul", "add", "sub", "tanh"):
        return getattr(torch, op)
    if op == "conv2d":
        pads, group = list(a.get("pads") or [0, 0, 0, 0]), int(a.get("group") or 1)
        if pads[:2] != pads[2:]:
            raise Unmappable("asymmetric padding")
        return lambda x, w, b=None: F.conv2d(x, w, b, padding=tuple(pads[:2]), groups=group)
    if op == "global_avgpool":
        return lambda x: F.adaptive_avg_pool2d(x, 1)
    if op == "maxpool":
        k = tuple(a["kernel_shape"])
        s, p = tuple(a.get("strides") or (1,) * len(k)), list(a.get("pads") or [0] * 2 * len(k))
        return lambda x: F.max_pool2d(x, k, s, tuple(p[:len(k)]))
    if op == "softmax":
        axis = int(a.get("axis", -1))
        return lambda x: torch.softmax(x, axis)
    if op == "transpose":
        perm = tuple(a["perm"])
        return lambda x: x.permute(perm).contiguous()
    if op == "flatten":
        axis = int(a.get("axis", 1))
        return lambda x: x.reshape(int(np.prod(x.shape[:axis], dtype=np.int64)), -1)
    if op == "reduce_mean":
        axes, keep = tuple(a["axes"]), bool(a.get("keepdims", 1))
        return lambda x: x.mean(axes, keepdim=keep)
    raise Unmappable(f"calibrate has no torch call for {op!r}")


class TorchOps:
    """torch eager for calibrate's programs, `threads` intra-op threads (torch.set_num_threads)."""

    name, mode, note = "torch", "op-by-op", None

    def __init__(self, threads: int) -> None:
        import torch

        self.version, self.threads = torch.__version__.split("+")[0], threads
        torch.set_num_threads(threads)

    def prepare(self, graph, members, entries, exits, values):
        import torch

        steps = [(n.name, _call(n, torch), list(n.inputs)) for n in (graph.nodes[i] for i in members)]

        def run(feed: dict) -> list:
            local = {r: torch.from_numpy(np.asarray(feed[r])) for r in entries}
            with torch.inference_mode():
                for name, fn, ins in steps:
                    local[name] = fn(*(local[r] for r in ins if r))
            return [local[r].numpy() for r in exits]
        return run

    def onednn_overhead(self, repeats: int) -> float:
        """Seconds of the smallest float32 convolution ATen sends to oneDNN: [2, 8, 8, 8] by an 8-channel 3x3
        filter (batch 2: cost.classes.torch_onednn), whose FLOPs are ~2 us of it. What a convolution torch
        runs on oneDNN costs at least (the profile's native_onednn_conv_overhead): 40-80 us on this project's
        machine, where ATen's own path runs the same at batch 1 in 13-20 us and the conv class's fit, made of
        batch-1 programs, says so."""
        import torch

        from .measure import median_ms

        x, w = torch.randn(2, 8, 8, 8), torch.randn(8, 8, 3, 3)   # (on oneDNN: tests/cost/test_onednn.py)
        with torch.inference_mode():
            return median_ms(lambda: torch.nn.functional.conv2d(x, w, None, 1, 1), None, 1.0) / 1e3
