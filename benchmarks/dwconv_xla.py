"""What XLA:CPU's depthwise convolution costs, against the cost model's account of it (cost.classes.dw_scale).

    python benchmarks/dwconv_xla.py        # writes benchmarks/dwconv_xla_results.{json,md}

Each convolution (NHWC, 3x3, SAME, one filter per channel, as TensorFlow's DepthwiseConv2dNative and a
grouped ONNX Conv lower) is jitted alone at 1 thread and timed in bursts of 8 back-to-back calls, every
convolution once per round, 30 rounds (the median round), less a trivial jitted call timed the same way:
what the convolution's kernel adds to a cluster. The model fitted to them, by least squares on relative
error, is the cost model's form: `t = launch + FLOPs * dw_scale / rate`, where dw_scale counts
DW_CHANNEL_FLOPS per channel and image and Eigen's rate (EIGEN_DW) for NARROW channels or fewer, or an image
smaller than the filter. The table says, per convolution, the measured time, the model's, and their ratio;
the summary how many are within 1.5x, the fit of FLOPs alone (no per-channel cost, no Eigen factor: what
calibrate's two-point fit assumed before) for comparison, and the constants that would fit best (a grid:
DW_CHANNEL_FLOPS 0-400 by 20, EIGEN_DW 1-3 by 0.5).
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

SHAPES = [(n, h, c, s) for n in (1, 2) for h in (1, 2, 4, 8, 16) for c in (4, 8, 16, 24, 64, 128, 256)
          for s in (1, 2) if not (s == 2 and h < 4)]


def interleaved_us(calls: list, rounds: int = 30, burst: int = 8) -> list[float]:
    """Per call, the median over `rounds` of a burst of `burst` back-to-back calls (per call), every call
    once per round: this 2-core VM's speed drifts by up to 2x over minutes, and a drift then moves every
    convolution alike rather than whichever was being timed."""
    for f in calls:
        for _ in range(5):
            f()
    times = [[] for _ in calls]
    for _ in range(rounds):
        for f, ts in zip(calls, times):
            t0 = time.perf_counter()
            for _ in range(burst):
                f()
            ts.append((time.perf_counter() - t0) / burst)
    return [statistics.median(ts) * 1e6 for ts in times]


def fit(rows: list[dict], key: str) -> tuple[float, float]:
    """(launch us, rate FLOP/us) of t = launch + rows[key] / rate, least squares on relative error (of times
    over 10 us: the shortest are mostly the subtracted call's noise)."""
    a = np.array([[1.0, r[key]] for r in rows])
    t = np.array([r["us"] for r in rows])
    w = 1 / np.maximum(t, 10.0)
    launch, inv = np.linalg.lstsq(a * w[:, None], t * w, rcond=None)[0]
    return float(launch), float(1 / inv)


def fit_models(rows: list[dict]) -> tuple[tuple[float, float], tuple[float, float]]:
    """((launch, rate) of the model, of FLOPs alone), each fitted to the rows (`scaled_flops`: the model's
    FLOPs); each row gets `model_us` and `flops_only_us`, and loses `scaled_flops`."""
    launch, rate = fit(rows, "scaled_flops")
    launch0, rate0 = fit(rows, "flops")
    for r in rows:
        r["model_us"] = round(launch + r["scaled_flops"] / rate, 2)
        r["flops_only_us"] = round(launch0 + r["flops"] / rate0, 2)
        del r["scaled_flops"]
    return (launch, rate), (launch0, rate0)


def fit_keys(rows: list[dict], model: tuple[float, float], flops_only: tuple[float, float]) -> dict:
    """The results' `fit` and `fit_flops_only`: launch (us), rate (GFLOP/s) and how many within 1.5x."""
    return {name: {"launch_us": round(launch, 2), "gflops": round(rate / 1e3, 3), "within_1.5x": within_15(rows, key)}
            for name, (launch, rate), key in (("fit", model, "model_us"), ("fit_flops_only", flops_only, "flops_only_us"))}


def save(stem: str, result: dict, lines: list[str]) -> None:
    """benchmarks/STEM.json (sorted keys) and STEM.md (the lines)."""
    with open(os.path.join(HERE, stem + ".json"), "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
        fh.write("\n")
    with open(os.path.join(HERE, stem + ".md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def head_lines(title: str, result: dict, scale: str, rows: list[dict]) -> tuple[list[str], str]:
    """(the page's opening lines up to the model's fit, the line of FLOPs alone's fit) from the `result`."""
    fit_, only = result["fit"], result["fit_flops_only"]
    return ([f"# {title}", "", f"jax {result['jax']}, 1 thread; trivial call {result['base_call_us']:.1f} us "
             f"subtracted; load after {result['load_after']}.", "",
             f"- model (launch + FLOPs x {scale} / rate): launch {fit_['launch_us']:.1f} us, {fit_['gflops']:.3f} "
             f"GFLOP/s, within 1.5x on {fit_['within_1.5x']}/{len(rows)}"],
            f"- FLOPs alone (launch + FLOPs / rate): launch {only['launch_us']:.1f} us, {only['gflops']:.3f} GFLOP/s, "
            f"within 1.5x on {only['within_1.5x']}/{len(rows)}")


def within_15(rows: list[dict], key: str) -> int:
    """How many rows' `key` time is within 1.5x of the measured `us`."""
    return sum(max(r[key] / r["us"], r["us"] / r[key]) <= 1.5 for r in rows if r[key] > 0 and r["us"] > 0)


def main() -> None:
    from xcviz.runtime.native import apply_threads
    apply_threads(1)
    import jax

    from xcviz.cost.classes import DW_CHANNEL_FLOPS, EIGEN_DW, NARROW, dw_scale

    x4 = jax.device_put(np.ones((4,), np.float32))
    tiny = jax.jit(lambda x: x + 1)
    calls, rows = [lambda: tiny(x4).block_until_ready()], []
    for n, h, c, s in SHAPES:
        x = jax.device_put(np.ones((n, h, h, c), np.float32))
        k = jax.device_put(np.ones((3, 3, 1, c), np.float32))
        f = jax.jit(lambda x, k, s=s, c=c: jax.lax.conv_general_dilated(
            x, k, (s, s), "SAME", feature_group_count=c, dimension_numbers=("NHWC", "HWIO", "NHWC")))
        y = f(x, k)
        calls.append(lambda f=f, x=x, k=k: f(x, k).block_until_ready())
        shapes = (x.shape, y.shape)
        rows.append({"batch": n, "side": h, "channels": c, "stride": s, "flops": 2 * 9 * y.size,
                     "scaled_flops": 2 * 9 * y.size * dw_scale((c, 1, 3, 3), shapes)})
    base, *times = interleaved_us(calls)
    for r, us in zip(rows, times):
        r["us"] = round(us - base, 2)
    # the constants themselves, fitted: the pair (per-channel FLOPs, Eigen's factor) that puts most within 1.5x
    grid = []
    for k_ in range(0, 420, 20):
        for e_ in (1.0, 1.5, 2.0, 2.5, 3.0):
            for r in rows:
                pixels = r["flops"] / (18 * r["batch"] * r["channels"])
                eigen = r["channels"] <= NARROW or r["side"] ** 2 < 9
                r["trial"] = r["flops"] * (1 + k_ / (18 * pixels)) * (e_ if eigen else 1.0)
            la, ra = fit(rows, "trial")
            grid.append((sum(max(p / r["us"], r["us"] / p) <= 1.5 for r in rows
                             if r["us"] > 0 and (p := la + r["trial"] / ra) > 0), -k_, -e_))
    for r in rows:
        del r["trial"]
    best_ok, best_k, best_e = max(grid)
    fitted = fit_models(rows)

    result = {"machine": platform.processor() or platform.machine(), "jax": jax.__version__,
              "base_call_us": round(base, 2),
              "DW_CHANNEL_FLOPS": DW_CHANNEL_FLOPS, "EIGEN_DW": EIGEN_DW, "NARROW": NARROW, **fit_keys(rows, *fitted),
              "best_constants": {"DW_CHANNEL_FLOPS": -best_k, "EIGEN_DW": -best_e, "within_1.5x": int(best_ok)},
              "load_after": round(os.getloadavg()[0], 2), "rows": rows}
    head, flops_only = head_lines("XLA:CPU depthwise convolutions against the cost model", result, "dw_scale", rows)
    lines = [*head,
             f"- the constants that fit best here: DW_CHANNEL_FLOPS {-best_k}, EIGEN_DW {-best_e} "
             f"(within 1.5x on {best_ok}/{len(rows)}); in xcviz: {DW_CHANNEL_FLOPS}, {EIGEN_DW}", flops_only, "",
             "| batch | side | channels | stride | FLOPs | measured us | model us | ratio | FLOPs-only us |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['batch']} | {r['side']} | {r['channels']} | {r['stride']} | {r['flops']} | {r['us']:.1f} "
                     f"| {r['model_us']:.1f} | {r['model_us'] / r['us']:.2f} | {r['flops_only_us']:.1f} |")
    save("dwconv_xla_results", result, lines)
    print("\n".join(lines[:6]))


if __name__ == "__main__":
    main()
