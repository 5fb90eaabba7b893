"""Strategy `mark`: TensorFlow's MarkForCompilationPass. Picks the implementation; both give identical results.

Graphs under fastpath.FAST_MIN_NODES run the plain-Python reference (mark_reference.py), which starts instantly;
larger ones run the numba-compiled fast path (mark_fast.py) when numba is installed. XCVIZ_MARK=reference
or XCVIZ_MARK=fast forces one (tests and benchmarks).
"""
from __future__ import annotations

import os

from ..fastpath import use_fast
from .options import Candidates, ClusterOptions
from .result import Clustering


def _use_fast(n: int) -> bool:
    """The compiled pass where fastpath says so and, while numba's cache holds no kernel yet, only where
    compiling it pays (see _kernel/first_use.py)."""
    if not use_fast(n, "XCVIZ_MARK"):
        return False
    from ._kernel.first_use import worth_compiling

    return os.environ.get("XCVIZ_MARK") == "fast" or worth_compiling(n)


def mark_for_compilation(graph, cands: Candidates, opts: ClusterOptions, progress=None) -> Clustering:
    if getattr(cands, "tf", None) is None and _use_fast(len(graph.nodes)):  # (TF's rules: reference only)
        from .mark_fast import mark_for_compilation as fast

        return fast(graph, cands, opts, progress=progress)
    from .mark_reference import mark_for_compilation as reference

    return reference(graph, cands, opts)
