"""xcviz inside the PyTorch 2 stack: a torch.compile backend that records Dynamo's graphs, breaks and clusters."""
from __future__ import annotations


def __getattr__(name: str):
    if name in ("torch_backend", "XcvizBackend"):
        from . import backend

        return getattr(backend, name)
    if name == "compile_report":
        from .report import compile_report

        return compile_report
    raise AttributeError(name)
