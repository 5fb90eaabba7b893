"""The whole-model times of a TF1 graph with control flow v1 (validate): all-native against hybrid, both through
the frame executor (runtime/frames.py), whose native parts run on NumPy (no native runtime takes frames)."""
from __future__ import annotations

from ..ir import Graph


def frames_model_times(graph: Graph, clustering, feeds: dict, repeats: int | None, est):
    """ModelTimes of the frame executor's native and hybrid runs (the hybrid's clusters, each compiled once per
    signature, run in every iteration of their frame), or why it could not run."""
    from .execute import execute
    from .jit import CompileCache
    from .measure import interleaved
    from .wholemodel import MODEL_BUDGET_S, ModelTimes

    try:
        execute(graph, feeds, "native")
        cache = CompileCache()
        execute(graph, feeds, "hybrid", clustering, cache)
        t = interleaved({"native": lambda: execute(graph, feeds, "native"),   # in turn, as wholemodel times
                         "hybrid": lambda: execute(graph, feeds, "hybrid", clustering, cache)}, repeats, MODEL_BUDGET_S)
    except Exception as e:  # noqa: BLE001 - the per-cluster rows say which part failed
        return ModelTimes(None, None, None, est, "numpy", why=f"{e.__class__.__name__}: {e}".splitlines()[0][:300])
    times = ModelTimes(t["native"].median_ms, None, t["hybrid"].median_ms, est, "numpy",
                       why="TF1 control flow: both runs in xcviz's frame executor, native parts on NumPy")
    times.timing = {**t.to_json(), "speedup_quartiles": t.ratio("native", "hybrid")}
    return times
