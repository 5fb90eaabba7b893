"""Measuring a run: outputs against a reference under dtype-aware tolerances, and median timings."""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


# The clock timings read: wall time. A benchmark on a shared machine that runs NumPy and XLA on one thread
# may set time.process_time instead, the CPU time this process used: another job taking the core then no
# longer stretches a run (benchmarks/cost_accuracy.py does, and says so).
# XCVIZ_CLOCK=cpu sets it for a whole process (benchmarks/native_corpus.py runs `validate` so on a loaded machine).
clock = time.process_time if os.environ.get("XCVIZ_CLOCK") == "cpu" else time.perf_counter


def median_ms(fn, repeats: int | None, budget_s: float = 0.2) -> float:
    """Median milliseconds of `fn()` after a warm-up: `repeats` runs, or (None) until stable or ~budget_s."""
    return interleaved({"fn": fn}, repeats, budget_s)["fn"].median_ms


MIN_ROUNDS, MAX_ROUNDS = 7, 2000
FEW_ROUNDS = 3          # the fewest rounds of callables too slow for MIN_ROUNDS within twice the budget
SLOW_S = 0.1            # a warm-up call this long is not repeated
MIN_SAMPLE_S = 1e-3     # a call faster than this is timed in loops (timeit's autorange), so the clock's grain is small
# before each sample of a call under SLOW_S, untimed calls for this long (one at least): the first calls of one
# runtime after another's run slow, on the other's instruction and branch caches (TensorFlow's whole-model call
# of shape_chain: 0.40 ms right after an XLA call, 0.26 ms after one more, 0.14 ms back to back; XLA's after
# TensorFlow's 2.3x its own), and a program called again and again, as a served model is, runs warm
REWARM_S = 5e-4
STABLE = 0.02           # the median moved by less than this over the last quarter of the rounds: stable
# the rounds go on for at least this share of the budget before a settled median may end them: the machine's
# speed moves in phases of 0.1-0.3 s (a NumPy matmul loop here: 0.09 ms a call in one, 0.13 ms in the next),
# and 7 rounds of fast calls take 0.02-0.04 s, all inside one phase, where the median settles on that phase's
# time (switch_case's whole-model speedup over six such measurements in one process: 6.2-12.7x; sampled for
# 1 s each: 6.4-6.6x). A third of the budget spans several phases.
MIN_SHARE = 1 / 3
WIDE = 0.10             # an interquartile range over 10 % of the median is a wide spread


@dataclass
class Timing:
    """The per-call times (seconds) of one callable, each a mean over `loops` calls."""
    samples: list = field(default_factory=list)
    loops: int = 1
    rewarm: bool = True   # untimed calls before each sample (calls under SLOW_S: REWARM_S)

    @property
    def median_ms(self) -> float:
        return statistics.median(self.samples) * 1e3

    @property
    def spread(self) -> float:
        """The interquartile range over the median: 0.05 is ±2.5 % around it."""
        q = _quartiles(self.samples)
        return (q[2] - q[0]) / q[1] if q[1] > 0 else 0.0

    def to_json(self) -> dict:
        q = _quartiles(self.samples)
        return {"median_ms": q[1] * 1e3, "runs": len(self.samples), "loops": self.loops,
                "spread": round(self.spread, 4), "p25_ms": q[0] * 1e3, "p75_ms": q[2] * 1e3,
                "min_ms": min(self.samples) * 1e3, "max_ms": max(self.samples) * 1e3}


def _quartiles(xs) -> tuple[float, float, float]:
    if len(xs) < 2:
        return (xs[0], xs[0], xs[0]) if xs else (0.0, 0.0, 0.0)
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


class Interleaved(dict):
    """name -> Timing of callables timed in turn (round k: each once, the order reversed every other round),
    whether the medians settled before the budget ended, and the per-round ratios of the first to the others."""

    def __init__(self, timings: dict, budget_s: float | None) -> None:
        super().__init__(timings)
        self.stable, self.rounds, self.budget_s, self.sampled_s = True, 0, budget_s, 0.0

    def ratio(self, num: str, den: str) -> dict:
        """{median, p25, p75} of the per-round ratios num/den (a speedup's spread), and its median of medians."""
        a, b = self[num].samples, self[den].samples
        rs = [x / y for x, y in zip(a, b) if y > 0]
        q = _quartiles(rs) if rs else (None, None, None)
        return {"p25": q[0], "median": q[1], "p75": q[2]}

    def to_json(self) -> dict:
        """{name: Timing.to_json, ..., rounds, stable, budget_s, sampled_s, interleaved}."""
        return {**{n: t.to_json() for n, t in self.items()}, "rounds": self.rounds, "stable": self.stable,
                "budget_s": self.budget_s, "sampled_s": round(self.sampled_s, 3), "interleaved": len(self) > 1}


def interleaved(fns: dict, repeats: int | None = None, budget_s: float = 0.5) -> Interleaved:
    """Time the callables of `fns` interleaved, so a change in the machine's load falls on each alike: a warm-up
    (two calls each, one for a call over a quarter of the budget), then rounds of one sample each, a fast
    callable timed in loops of calls after untimed ones (REWARM_S: each callable in its steady state, as a
    program called again and again runs, not paying for the caches the other callable's sample left);
    `repeats` rounds, or (None) at least MIN_ROUNDS and MIN_SHARE of budget_s, and until every median moved by
    under STABLE over the last quarter of the rounds, or budget_s ended (then stable is False; FEW_ROUNDS at
    least, MIN_ROUNDS where they fit in twice the budget), in the manner of pyperf and timeit's autorange."""
    names = list(fns)
    out = Interleaved({n: Timing() for n in names}, budget_s=None if repeats else budget_s)
    for n in names:  # warm-up: compile, caches, first allocations; its time sizes the loops
        t0 = time.perf_counter()
        fns[n]()
        dt = time.perf_counter() - t0
        # a second warm-up call, unless one call is a good part of the budget already (a first call may be a
        # cold start: TensorFlow instantiates a function's graph on its first call, ~0.1 s for a small model)
        if dt < max(SLOW_S, (budget_s or 0.0) / 4):
            t0 = time.perf_counter()
            fns[n]()
            dt = time.perf_counter() - t0
        out[n].loops = 1 if repeats or dt >= MIN_SAMPLE_S else min(100, int(MIN_SAMPLE_S / max(dt, 1e-7)) + 1)
        out[n].rewarm = dt < SLOW_S
    start = time.perf_counter()
    while True:
        order = names if out.rounds % 2 == 0 else names[::-1]
        for n in order:
            fn, loops = fns[n], out[n].loops
            if out[n].rewarm:   # (REWARM_S)
                t0 = time.perf_counter()
                fn()
                while time.perf_counter() - t0 < REWARM_S:
                    fn()
            out[n].samples.append(burst(fn, loops))
        out.rounds += 1
        k, elapsed = out.rounds, time.perf_counter() - start
        out.sampled_s = elapsed
        if repeats is not None:
            if k >= repeats:
                break
            continue
        if k >= MIN_ROUNDS and elapsed >= MIN_SHARE * budget_s and all(_settled(out[n].samples) for n in names):
            break
        # the budget ends it, but never before FEW_ROUNDS (slow calls) or MIN_ROUNDS when they fit in twice it
        if k >= MAX_ROUNDS or (elapsed > budget_s and (k >= MIN_ROUNDS or (k >= FEW_ROUNDS and
                                                                          elapsed / k * MIN_ROUNDS > 2 * budget_s))):
            out.stable = k >= MIN_ROUNDS and all(_settled(out[n].samples) for n in names)
            break
    return out


def warm_call(fn: Callable[[], object], repeats: int, loop: int = 50) -> float:
    """The median seconds of one call of `fn` made back to back (`loop` calls a sample, as validate times a
    fast model in loops): what the call costs run after run, not after another program evicted its caches.
    max(5, repeats // 10) samples, and more until they span WARM_SHARE_S x repeats seconds (the machine's
    speed moves in phases of 0.1-0.3 s: five samples of a 10 us call took ~3 ms, inside one)."""
    fn()
    samples, start = [], clock()
    while len(samples) < max(5, repeats // 10) or (clock() - start < WARM_SHARE_S * repeats and len(samples) < 10000):
        samples.append(burst(fn, loop))
    return statistics.median(samples)


WARM_SHARE_S = 0.01   # (warm_call: 0.2 s at calibrate's 20 repeats)


def burst(fn: Callable[[], object], loop: int) -> float:
    """Seconds per call of `loop` calls of `fn` made back to back."""
    t0 = clock()
    for _ in range(loop):
        fn()
    return (clock() - t0) / loop


def _settled(xs: list) -> bool:
    """The median of all samples within STABLE of the median without the last quarter."""
    head = xs[: max(1, len(xs) - max(1, len(xs) // 4))]
    m = statistics.median(xs)
    return m > 0 and abs(statistics.median(head) - m) / m <= STABLE


def machine_load(threads: int | None = None) -> dict:
    """{load_1m, cores, loaded}: loaded when the 1-minute load average (machine-wide) is over three quarters of
    the machine's CPUs (other work then takes turns with the runs timed); None fields where the OS has no load."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return {"load_1m": None, "cores": cores, "loaded": None}
    return {"load_1m": round(load, 2), "cores": cores, "loaded": load > 0.75 * cores}


def timing_note(load: dict | None, spreads: list) -> str | None:
    """A line for the tables when the figures are less than solid: the machine loaded, or a spread wide."""
    parts = []
    if load and load.get("loaded"):
        parts.append(f"the machine is loaded (load average {load['load_1m']:.1f} on {load['cores']} CPUs): "
                     "times are stretched and vary; rerun on a quiet machine")
    wide = [s for s in spreads if s is not None and s > WIDE]
    if wide:
        parts.append(f"wide spread (interquartile range up to {max(wide) * 100:.0f} % of the median)")
    return "; ".join(parts) or None


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
        if ref.dtype == object or got.dtype == object:   # text: TF gives bytes, the reference str
            got, ref = _as_bytes(got), _as_bytes(ref)
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


def _as_bytes(a: np.ndarray) -> np.ndarray:
    """An array of text with every str element as its UTF-8 bytes (TensorFlow's strings are bytes)."""
    if a.dtype.kind == "U" or (a.dtype == object and any(isinstance(x, str) for x in a.flat)):
        return np.array([x.encode("utf-8") if isinstance(x, str) else x for x in a.flat], object).reshape(a.shape)
    return a


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
            preds = [r.node for r in graph.input_refs(index[name]) if r]
            todo = [p for p in preds if p not in memo]
            if todo:
                stack.extend(todo)
                continue
            memo[name] = node.op in CONSTANT_OPS or (bool(preds) and node.op not in VOLATILE_OPS
                                                and all(memo[p] for p in preds))
        return memo[parse_ref(ref)[0]]

    return {r: jax.device_put(v) if isinstance(v, np.ndarray) and is_param(r) else v for r, v in values.items()}
