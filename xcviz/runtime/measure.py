"""Measuring a run: outputs against a reference under dtype-aware tolerances, and median timings."""
from __future__ import annotations

import statistics
import time

import numpy as np


# The clock timings read: wall time. A benchmark on a shared machine that runs NumPy and XLA on one thread
# may set time.process_time instead, the CPU time this process used: another job taking the core then no
# longer stretches a run (benchmarks/cost_accuracy.py does, and says so).
clock = time.perf_counter


def median_ms(fn, repeats: int | None, budget_s: float = 0.2) -> float:
    """Median milliseconds of `fn()` after one warm-up: `repeats` runs, or (None) up to 50 within ~budget_s."""
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while True:
        t0 = clock()
        fn()
        times.append(clock() - t0)
        n = len(times)
        if repeats is not None and n >= repeats:
            break
        if repeats is None and (n >= 50 or (n >= 3 and time.perf_counter() - start > budget_s)):
            break
    return statistics.median(times) * 1e3


def compare(got: np.ndarray, ref: np.ndarray, undefined: np.ndarray | None = None) -> dict:
    """max abs error, relative error (max abs / max |ref|), and ok under dtype-aware tolerances. Elements
    `undefined` marks (runtime.undefined: integers cast from non-finite floats) are left out and counted
    under "undefined", with the reason in "note"."""
    got, ref = np.asarray(got), np.asarray(ref)
    if got.shape != ref.shape:
        return {"max_abs": None, "max_rel": None, "ok": False, "why": f"shape {got.shape} != {ref.shape}"}
    if undefined is not None and undefined.shape == ref.shape and undefined.any():
        from .undefined import WHY

        out = compare(got[~undefined], ref[~undefined])
        return {**out, "undefined": int(undefined.sum()), "note": f"{int(undefined.sum())} element(s): {WHY}"}
    if ref.dtype.kind not in "fc":
        same = bool(np.array_equal(got, ref))
        return {"max_abs": 0.0 if same else float("inf"), "max_rel": 0.0 if same else float("inf"), "ok": same,
                "why": None if same else "values differ"}
    g, r = got.astype(np.float64), ref.astype(np.float64)
    finite = np.isfinite(r)
    if not np.array_equal(finite, np.isfinite(g)) or not np.array_equal(np.isnan(g), np.isnan(r)):
        return {"max_abs": float("inf"), "max_rel": float("inf"), "ok": False, "why": "NaN/Inf pattern differs"}
    if not finite.any():
        return {"max_abs": 0.0, "max_rel": 0.0, "ok": True, "why": None}
    diff = np.abs(g[finite] - r[finite])
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = float(np.abs(r[finite]).max()) if diff.size else 0.0
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    rtol = {"float64": 1e-9, "float32": 1e-4, "float16": 1e-2, "bfloat16": 2e-2}.get(str(ref.dtype), 1e-4)
    ok = bool(max_abs <= 1e-6 if scale == 0 else rel <= rtol)
    return {"max_abs": max_abs, "max_rel": rel, "ok": ok, "why": None if ok else f"relative error {rel:.2e} > {rtol:g}"}


def resident(graph, spec, values: dict) -> dict:
    """`values` with the cluster's parameter entries (weights, constants and what is computed from them
    alone, as cost.params defines them) placed on the device once, as XLA keeps them: a timed call then
    hands over activations only."""
    import jax

    from ..cost.params import CONSTANT_OPS, VOLATILE_OPS
    from ..ir import parse_ref

    index, nodes = graph.index, graph.nodes
    inputs = {v.name: v for v in graph.inputs}
    memo: dict[str, bool] = {}

    def is_param(ref: str) -> bool:
        stack = [parse_ref(ref)[0]]
        while stack:  # iterative: a chain of constant work can be longer than Python's recursion limit
            name = stack[-1]
            if name in memo:
                stack.pop()
                continue
            if name not in index:
                memo[name] = name in inputs and inputs[name].is_param
                continue
            node = nodes[index[name]]
            preds = [parse_ref(r)[0] for r in node.inputs if r]
            todo = [p for p in preds if p not in memo]
            if todo:
                stack.extend(todo)
                continue
            memo[name] = node.op in CONSTANT_OPS or (bool(preds) and node.op not in VOLATILE_OPS
                                                and all(memo[p] for p in preds))
        return memo[parse_ref(ref)[0]]

    return {r: jax.device_put(v) if isinstance(v, np.ndarray) and is_param(r) else v for r, v in values.items()}
