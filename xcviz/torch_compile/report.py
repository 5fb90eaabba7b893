"""`xcviz.compile_report(model, *args, **kwargs)`: torch.compile the model with the xcviz backend, call it once
with the example inputs, and return what was captured (graphs, breaks, summary); the HTML report on request."""
from __future__ import annotations

import os


def compile_report(model, *example_args, report: str | os.PathLike | None = None, mode: str = "eager",
                   backend=None, **example_kwargs) -> dict:
    """Dynamo's caches are reset before and after (as torch._dynamo.explain does), so every graph is compiled
    for this call and nothing of it stays behind. `backend`: an XcvizBackend with other options."""
    from ..loaders.torch_export import import_torch
    from .backend import XcvizBackend

    torch = import_torch()
    be = backend if backend is not None else XcvizBackend(mode=mode)
    torch._dynamo.reset()
    try:
        torch.compile(model, backend=be)(*example_args, **example_kwargs)
    finally:
        torch._dynamo.reset()
    if report is not None:
        be.write(os.fspath(report), title=getattr(model, "__name__", None) or type(model).__name__)
    return be.report()
