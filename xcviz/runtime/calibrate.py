"""Measure this machine's roofline numbers through JAX (peak FLOP rate, bandwidth, launch and sync overhead)
and write them as a hardware profile that `--hardware FILE` reads.

What each number is, as the cost model uses it (see xcviz/cost/__init__.py):
- peak_flops: a large float32 matmul, 2·n³ FLOPs over its best time;
- memory_bandwidth: a large elementwise op in place (x = x·a + b reads 4n and writes 4n bytes) over its
  best time;
- launch_overhead: a tiny jitted op (one element) run with its result left on the device: the fixed cost
  of one more kernel;
- sync_overhead: the same tiny op with its input handed in from the host and its result read back (two
  hand-offs between the native runtime and XLA), minus the launch, halved.
Each is the median of `repeats` timed runs after a warm-up (best time for the two rates: a rate is what the
machine can reach, and noise only slows it)."""
from __future__ import annotations

import os
import platform
import statistics
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import XcvizError

SIZES = {"matmul_n": 2048, "stream_elements": 1 << 25, "repeats": 20}   # ~34 GFLOP, 128 MiB per array
TINY = {"matmul_n": 64, "stream_elements": 1 << 12, "repeats": 3}        # for tests: seconds, not minutes


@dataclass(frozen=True)
class Calibration:
    peak_flops: float
    memory_bandwidth: float
    launch_overhead: float
    sync_overhead: float
    backend: str
    device: str
    sizes: dict

    def profile_yaml(self, name: str) -> str:
        """The hardware profile: the four numbers, the backend, and where they come from."""
        how = (f"measured with xcviz calibrate on {self.device} (JAX backend {self.backend}; "
               f"matmul n={self.sizes['matmul_n']}, stream {self.sizes['stream_elements']} float32, "
               f"{self.sizes['repeats']} repeats)")
        lines = [f"# {how}", f"name: {name}", f"description: {self.device}, float32, measured",
                 f"source: {how}", f"backend: {self.backend}",
                 f"peak_flops: {self.peak_flops:.4g}        # FLOP/s, float32 matmul",
                 f"memory_bandwidth: {self.memory_bandwidth:.4g}  # bytes/s, elementwise stream",
                 f"launch_overhead: {self.launch_overhead:.4g}   # seconds per kernel",
                 f"sync_overhead: {self.sync_overhead:.4g}     # seconds per tensor handed between runtimes"]
        return "\n".join(lines) + "\n"


def _times(fn: Callable[[], object], repeats: int) -> list[float]:
    fn()  # warm-up (and compile)
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def calibrate(matmul_n: int | None = None, stream_elements: int | None = None, repeats: int | None = None,
              progress: Callable[[str], None] | None = None) -> Calibration:
    """Measure the default JAX backend; `progress(step)` is called as each of the four steps starts."""
    try:
        from ..ops.arrays import jnp

        jnp()
        import jax
        import jax.numpy as jn
    except ImportError:
        raise XcvizError("calibrate needs JAX", hint="pip install -e '.[jax]'") from None
    n = matmul_n or SIZES["matmul_n"]
    m = stream_elements or SIZES["stream_elements"]
    r = repeats or SIZES["repeats"]
    if min(n, m, r) < 1:
        raise XcvizError("calibration sizes must be positive", hint="--matmul-n 2048 --stream 33554432 --repeats 20")
    step = progress or (lambda name: None)
    dev = jax.devices()[0]

    step("peak FLOP rate (matmul)")
    a = jax.device_put(np.random.default_rng(0).standard_normal((n, n), np.float32), dev)
    mm = jax.jit(lambda x: x @ x)
    peak = 2.0 * n ** 3 / min(_times(lambda: mm(a).block_until_ready(), r))

    step("memory bandwidth (elementwise)")
    # in place (the input donated): a fresh output buffer each call would time the OS's page faults
    buf = [jax.device_put(np.ones(m, np.float32), dev)]
    axpb = jax.jit(lambda v: v * 0.5 + 0.5, donate_argnums=0)

    def stream():
        buf[0] = axpb(buf[0])
        buf[0].block_until_ready()

    with warnings.catch_warnings():  # a backend that cannot donate says so; the copy is then timed too
        warnings.simplefilter("ignore")
        bandwidth = 8.0 * m / min(_times(stream, r))

    step("launch overhead (tiny kernel)")
    one = jax.device_put(np.ones(1, np.float32), dev)
    tiny = jax.jit(lambda v: v + 1.0)
    launch = statistics.median(_times(lambda: tiny(one).block_until_ready(), max(r, 50)))

    step("host-device sync (tiny round trip)")
    host = np.ones(1, np.float32)
    round_trip = statistics.median(_times(lambda: np.asarray(tiny(jn.asarray(host))), max(r, 50)))
    sync = max(round_trip - launch, 0.0) / 2  # one tensor in, one out
    del jn
    kind = getattr(dev, "device_kind", "") or platform.machine()
    if dev.platform == "cpu":
        kind = f"{_cpu_model() or platform.machine()}, {os.cpu_count()} cpus"
    return Calibration(peak, bandwidth, launch, sync, jax.default_backend(), f"{kind} ({dev.platform})",
                       {"matmul_n": n, "stream_elements": m, "repeats": r})


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None
