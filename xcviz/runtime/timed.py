"""`xcviz run`'s measurement: the graph run once (compiling), then timed repeats, its outputs summarised and,
with `check`, compared with xcviz's NumPy reference. The command line only prints what this returns."""
from __future__ import annotations

from typing import Callable


def timed_run(graph, clustering, feeds: dict, mode: str, check: bool, repeats: int | None, native: str | None = None,
              threads: int | None = None, warn: Callable[[list], None] | None = None) -> tuple[dict, dict, list[str]]:
    """Run the graph once (compiling), then `repeats` timed runs: (the run's report data, the first run's
    output arrays, one line per output that differs from xcviz's NumPy reference when `check`). native and
    hybrid run their native parts on the native runtime (onnxruntime unless --native says otherwise).
    `warn(fallbacks)` is told, right after the first run, of the clusters XLA could not compile."""
    from ..ops.values import flat_outputs
    from .execute import execute
    from .frames import has_v1_flow
    from .jit import CompileCache
    from .measure import compare, median_ms
    from .native import describe, resolve
    from .subgraphs import run_stats

    g, c, cache = graph, clustering, CompileCache()
    warn = warn or (lambda fallbacks: None)
    rt = resolve(native, g, threads)
    note = None
    if has_v1_flow(g) and rt.name != "numpy":   # frames and dead tensors: xcviz's executor runs the graph
        note = f"TF1 control flow runs in xcviz's frame executor: its native parts on NumPy, not {rt.name}"
        rt = resolve("numpy", g, threads)
    # (a Loop/If/Scan outside the clusters whose bodies hold clusters: the hybrid runs its iterations in xcviz,
    # each body's clusters on XLA and the rest of the body on the native runtime; runtime.hybrid_bodies)
    if mode != "jit" and rt.name != "numpy":
        from .wholemodel import run_on

        r = run_on(g, c, feeds, mode, rt, cache, repeats)
        warn(r["fallbacks"])
        reference = execute(g, feeds, "native", keep_all=_has_cast(g)) if check else None
        ref = reference.outputs if reference is not None else r["outputs"]
        arrays, ref = flat_outputs(r["outputs"]), flat_outputs(ref)
        undefined = undefined_outputs(g, reference.env) if reference is not None else {}
        outputs, failed = run_outputs(arrays, ref if check else None, compare, undefined)
        result = {"mode": mode, "native": {**describe(rt), "ran_on": r["runtime"]}, "first_run_ms": r["first_run_ms"],
                  "median_ms": r["median_ms"], "compile_ms": r["compile_ms"], "cache": r["cache"],
                  "fallback_segments": r["fallback_segments"], "fallback_segments_on": r["fallback_segments_on"],
                  "note": r["note"], "outputs": outputs, "fallbacks": r["fallbacks"]}
        return result, arrays, failed
    first = execute(g, feeds, mode, c, cache)
    warn(first.fallbacks)
    ms = median_ms(lambda: execute(g, feeds, mode, c, cache), repeats)
    reference = execute(g, feeds, "native", keep_all=_has_cast(g)) if check and mode != "native" else None
    ref = reference.outputs if reference is not None else first.outputs
    arrays, ref = flat_outputs(first.outputs), flat_outputs(ref)  # a sequence output as numbered tensors
    undefined = undefined_outputs(g, reference.env) if reference is not None else {}
    outputs, failed = run_outputs(arrays, ref if check else None, compare, undefined)
    result = {"mode": mode, "native": {**describe(rt), "ran_on": rt.name if mode != "jit" else None},
              "first_run_ms": first.seconds * 1e3, "median_ms": ms,
              "compile_ms": first.compile_seconds * 1e3, "cache": run_stats(cache), "outputs": outputs,
              "fallbacks": first.fallbacks, **({"note": note} if note else {})}
    return result, arrays, failed


def run_outputs(outputs: dict, reference: dict | None, compare, undefined: dict | None = None) -> tuple[dict, list[str]]:
    """`run`'s per-output summary (shape, dtype, min/max/mean; `check` against `reference` when given,
    with compare(actual, expected[, undefined mask]) -> {"ok", "why", ...}; `undefined`: output name -> mask of
    the elements left out), and one line per mismatching output."""
    summary, failed = {}, []
    for name, arr in outputs.items():
        info = {"shape": list(arr.shape), "dtype": str(arr.dtype)}
        if arr.size and arr.dtype.kind in "fiub":
            info.update(min=float(arr.min()), max=float(arr.max()), mean=float(arr.astype("float64").mean()))
        if reference is not None:
            cmp = compare(arr, reference[name], undefined[name]) if name in (undefined or {}) else \
                compare(arr, reference[name])
            info["check"] = cmp
            if not cmp["ok"]:
                failed.append(f"{name}: {cmp['why']}")
        summary[name] = info
    return summary, failed


def undefined_outputs(graph, env: dict) -> dict:
    """Output name -> mask of the elements no implementation defines (runtime.undefined), where there are any."""
    if env is None or not _has_cast(graph):
        return {}
    from .undefined import undefined_masks

    masks = undefined_masks(graph.nodes, env)
    return {graph.output_names.get(r, r): masks[r] for r in graph.outputs if r in masks}


def _has_cast(graph) -> bool:
    """Whether a Cast may leave elements undefined: only then does the check need every tensor of the reference."""
    return any(n.op == "cast" for n in graph.nodes)
