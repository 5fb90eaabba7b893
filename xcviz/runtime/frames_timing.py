"""The whole-model times of a TF1 graph with control flow v1 (validate): all-native against hybrid, both through
the frame executor (runtime/frames.py), whose native parts run on NumPy (no native runtime takes frames)."""
from __future__ import annotations

from ..ir import Graph


def frames_model_times(graph: Graph, clustering, feeds: dict, repeats: int | None, est):
    """ModelTimes of the frame executor's native and hybrid runs (the hybrid's clusters, each compiled once per
    signature, run in every iteration of their frame), or why it could not run."""
    from .execute import execute
    from .jit import CompileCache
    from .measure import median_ms
    from .wholemodel import ModelTimes

    try:
        execute(graph, feeds, "native")
        native_ms = median_ms(lambda: execute(graph, feeds, "native"), repeats)
        cache = CompileCache()
        execute(graph, feeds, "hybrid", clustering, cache)
        hybrid_ms = median_ms(lambda: execute(graph, feeds, "hybrid", clustering, cache), repeats)
    except Exception as e:  # noqa: BLE001 - the per-cluster rows say which part failed
        return ModelTimes(None, None, None, est, "numpy", why=f"{e.__class__.__name__}: {e}".splitlines()[0][:300])
    return ModelTimes(native_ms, None, hybrid_ms, est, "numpy",
                      why="TF1 control flow: both runs in xcviz's frame executor, native parts on NumPy")
