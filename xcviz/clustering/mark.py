"""Strategy `mark`: TensorFlow's MarkForCompilationPass. Picks the implementation; both give identical results.

Graphs under FAST_MIN_NODES run the plain-Python reference (mark_reference.py), which starts instantly;
larger ones run the numba-compiled fast path (mark_fast.py) when numba is installed. XCVIZ_MARK=reference
or XCVIZ_MARK=fast forces one (tests and benchmarks).
"""
from __future__ import annotations

import os

from .options import Candidates, ClusterOptions
from .result import Clustering

FAST_MIN_NODES = 50_000


def _use_fast(n: int) -> bool:
    choice = os.environ.get("XCVIZ_MARK", "auto")
    if choice == "reference":
        return False
    if choice != "fast" and n < FAST_MIN_NODES:
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    from ._kernel.first_use import worth_compiling

    return choice == "fast" or worth_compiling(n)


def mark_for_compilation(graph, cands: Candidates, opts: ClusterOptions, progress=None) -> Clustering:
    if _use_fast(len(graph.nodes)):
        from .mark_fast import mark_for_compilation as fast

        return fast(graph, cands, opts, progress=progress)
    from .mark_reference import mark_for_compilation as reference

    return reference(graph, cands, opts)
