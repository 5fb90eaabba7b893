"""What XLA:CPU's grouped convolution of narrow groups costs, against the cost model's account of it
(cost.classes.group_scale).

    python benchmarks/grouped_conv_xla.py    # writes benchmarks/grouped_conv_xla_results.{json,md}

A grouped convolution (1 < groups, not depthwise; ONNX's Conv with `group`, a Keras Conv2D with `groups`) whose
groups have fewer than NARROW input or output channels is left by XLA:CPU (jaxlib 0.10.2) to its own loop code
(16 channels or fewer in all: no YNNPACK fusion in the optimized HLO) or to YNNPACK's grouped kernel, and both
run it at ~0.5-2 GFLOP/s for groups of 1-5 channels: far below a dense convolution of the same FLOPs (a Keras
layers_zoo's 3 groups of 5 -> 2 channels took ~245 us where its FLOPs at the narrow class's rate say ~20).
Each convolution (NHWC, SAME, as TF runs a Keras model's) is jitted alone at 1 thread and timed as
dwconv_xla.py times its own (interleaved bursts, a trivial call subtracted). The model is the cost model's
form: `t = launch + FLOPs * group_scale / rate`, group_scale padding every group to NARROW input and NARROW
output channels (NARROW / channels, each at least 1); the fit is least squares on relative error, and the
table says per convolution the measured time, the model's and their ratio, beside FLOPs alone.
"""
from __future__ import annotations

import os
import platform
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from dwconv_xla import fit_keys, fit_models, head_lines, interleaved_us, save, within_15  # noqa: E402

# (groups, input channels per group, output channels per group, kernel, stride); one input channel per group is
# a depthwise convolution (dwconv_xla.py)
GROUPS = [(3, 5, 2, 3, 1), (2, 4, 4, 3, 1), (4, 4, 4, 3, 1), (4, 2, 2, 3, 1), (8, 2, 2, 3, 1),
          (16, 2, 2, 3, 1), (2, 8, 8, 3, 1), (4, 8, 8, 3, 1), (8, 8, 8, 3, 1), (2, 12, 12, 3, 1), (2, 8, 16, 3, 1),
          (4, 4, 8, 3, 1), (3, 5, 2, 3, 2), (4, 4, 4, 3, 2), (3, 5, 2, 1, 1), (4, 4, 4, 1, 1), (8, 2, 8, 1, 1)]
SHAPES = [(n, h, *g) for n in (1, 2) for h in (8, 16, 32) for g in GROUPS]


def main() -> None:
    from xcviz.runtime.native import apply_threads
    apply_threads(1)
    import jax

    from xcviz.cost.classes import NARROW, group_scale

    x4 = jax.device_put(np.ones((4,), np.float32))
    tiny = jax.jit(lambda x: x + 1)
    calls, rows = [lambda: tiny(x4).block_until_ready()], []
    for n, h, g, ci, co, k, s in SHAPES:
        x = jax.device_put(np.ones((n, h, h, ci * g), np.float32))
        w = jax.device_put(np.ones((k, k, ci, co * g), np.float32))
        f = jax.jit(lambda x, w, s=s, g=g: jax.lax.conv_general_dilated(
            x, w, (s, s), "SAME", feature_group_count=g, dimension_numbers=("NHWC", "HWIO", "NHWC")))
        y = f(x, w)
        calls.append(lambda f=f, x=x, w=w: f(x, w).block_until_ready())
        flops = 2 * k * k * ci * y.size
        rows.append({"batch": n, "side": h, "groups": g, "in_per_group": ci, "out_per_group": co, "kernel": k,
                     "stride": s, "flops": flops,
                     "scaled_flops": flops * group_scale((co * g, ci, k, k), {"group": g})})
    base, *times = interleaved_us(calls)
    for r, us in zip(rows, times):
        r["us"] = round(us - base, 2)
    fitted = fit_models(rows)

    # the rate the cost model prices them at: each built-in profile's narrow class (its launch too)
    from xcviz.cost import load_hardware

    profiles = {}
    for name in ("cpu", "cpu_tf", "cpu_torch"):
        narrow = load_hardware(name).calibrated.classes["narrow_conv"]
        for r in rows:
            r[f"{name}_us"] = round(narrow.xla_launch * 1e6 + r["flops"] * group_scale(
                (r["out_per_group"] * r["groups"], r["in_per_group"], r["kernel"], r["kernel"]),
                {"group": r["groups"]}) / narrow.xla_flops * 1e6, 2)
        profiles[name] = {"gflops": round(narrow.xla_flops / 1e9, 3), "within_1.5x": within_15(rows, f"{name}_us")}

    result = {"machine": platform.processor() or platform.machine(), "jax": jax.__version__,
              "base_call_us": round(base, 2), "NARROW": NARROW, **fit_keys(rows, *fitted), "profiles": profiles,
              "load_after": round(os.getloadavg()[0], 2), "rows": rows}
    head, flops_only = head_lines("XLA:CPU grouped convolutions of narrow groups against the cost model", result,
                                  "group_scale", rows)
    lines = [*head, flops_only,
             *(f"- at the {k} profile's narrow_conv rate ({v['gflops']} GFLOP/s) and launch: within 1.5x on "
               f"{v['within_1.5x']}/{len(rows)}" for k, v in profiles.items()), "",
             "| batch | side | groups | in/group | out/group | kernel | stride | FLOPs | measured us | model us | ratio "
             "| FLOPs-only us |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['batch']} | {r['side']} | {r['groups']} | {r['in_per_group']} | {r['out_per_group']} "
                     f"| {r['kernel']} | {r['stride']} | {r['flops']} | {r['us']:.1f} | {r['model_us']:.1f} "
                     f"| {r['model_us'] / r['us']:.2f} | {r['flops_only_us']:.1f} |")
    save("grouped_conv_xla_results", result, lines)
    print("\n".join(lines[:9]))


if __name__ == "__main__":
    main()
