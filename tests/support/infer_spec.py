"""Loads with the reference shape inference (passes/infer_reference.py, the executable spec) in place of the compiled walk."""
from __future__ import annotations

from contextlib import contextmanager


@contextmanager
def reference_inference():
    """Within it, every load infers shapes node by node (passes.prepare calls the reference loop)."""
    from xcviz.passes import infer_reference, prepare

    real = prepare.infer_shapes
    prepare.infer_shapes = infer_reference.infer_shapes
    try:
        yield
    finally:
        prepare.infer_shapes = real


def inferred(load, reference: bool):
    """load() with the reference loop or the compiled walk."""
    if not reference:
        return load()
    with reference_inference():
        return load()
