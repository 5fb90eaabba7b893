"""Measure this machine's roofline numbers through JAX (peak FLOP rate, bandwidth, launch and sync overhead)
and write them as a hardware profile that `--hardware FILE` reads.

What each number is, as the cost model uses it (see xcviz/cost/__init__.py):
- peak_flops: a large float32 matmul, 2·n³ FLOPs over its best time;
- memory_bandwidth: a large elementwise op in place (x = x·a + b reads 4n and writes 4n bytes) over its
  best time;
- launch_overhead: a tiny jitted op (one element) run with its result left on the device: the fixed cost
  of one more kernel;
- sync_overhead: a tiny op with its two inputs handed in from the host (as validate and the hybrid run
  hand activations to XLA) against the same op with them resident, per tensor;
- per op class (calibrate_ops, cost.classes): the native runtime's fixed cost and rate per op, XLA's call
  overhead, launch per kernel and rate, and the native bandwidth: what the estimates use when present.
Each is the median of `repeats` timed runs after a warm-up (best time for the two roofline rates: a rate is
what the machine can reach, and noise only slows it)."""
from __future__ import annotations

import os
import platform
import statistics
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import XcvizError
from . import calibrate_ops
from .calibrate_ops import CHAIN, CHAINS, COPIES, LONG, MID_CHAINS, NATIVE_CHAINS, PROGRAMS, REDUCE_STEP

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
    measured: dict | None = None   # calibrate_ops.measure_classes: per class numbers and the rest
    native: dict | None = None     # native.describe of the runtime the native side was measured on

    def profile_yaml(self, name: str) -> str:
        """The hardware profile: the four numbers, the backend, and where they come from."""
        how = (f"measured with xcviz calibrate on {self.device} (JAX backend {self.backend}; "
               f"matmul n={self.sizes['matmul_n']}, stream {self.sizes['stream_elements']} float32, "
               f"{self.sizes['repeats']} repeats)")
        nat = self.native or {"runtime": "numpy"}
        how += (f"; native side on {nat['runtime']} {nat.get('version', '')}, {nat.get('threads')} threads"
                if nat["runtime"] != "numpy" else "; native side on xcviz's NumPy reference, not a production runtime")
        lines = [f"# {how}", f"name: {name}", f"description: {self.device}, float32, measured",
                 f"source: {how}", f"backend: {self.backend}",
                 f"peak_flops: {_yaml_float(self.peak_flops)}        # FLOP/s, float32 matmul",
                 f"memory_bandwidth: {_yaml_float(self.memory_bandwidth)}  # bytes/s, elementwise stream",
                 f"launch_overhead: {_yaml_float(self.launch_overhead)}   # seconds per kernel",
                 f"sync_overhead: {_yaml_float(self.sync_overhead)}     # seconds per tensor handed between runtimes"]
        if self.measured:
            m = self.measured
            nat = self.native or {"runtime": "numpy"}
            words = (f"{nat['runtime']} {nat.get('version', '')} op by op ({nat.get('mode', '')}, "
                     f"{nat.get('threads')} threads)" if nat["runtime"] != "numpy" else "xcviz's NumPy reference op by op")
            lines.insert(4, f"native: {nat['runtime']}   # the runtime the native numbers are of: {words}")
            lines += [f"# per op class (cost.classes): native = {words}; xla = compiled clusters",
                      *([f"native_session_overhead: {_yaml_float(m['native_session_overhead'])}  # seconds per "
                         "native session call (once per model, not per op)"] if m.get("native_session_overhead") else []),
                      *([f"hybrid_switch_overhead: {_yaml_float(m['hybrid_switch_overhead'])}  # seconds per native "
                         "call made between compiled cluster calls, over one back to back"]
                        if "hybrid_switch_overhead" in m else []),
                      *([f"native_onednn_conv_overhead: {_yaml_float(m['native_onednn_conv_overhead'])}  # seconds "
                         "a convolution torch runs on oneDNN costs at least"] if m.get("native_onednn_conv_overhead") else []),
                      *([f"native_iteration_overhead: {_yaml_float(m['native_iteration_overhead'])}  # seconds a "
                         "native loop iteration costs beyond its ops"] if "native_iteration_overhead" in m else []),
                      *([f"native_argument_overhead: {_yaml_float(m['native_argument_overhead'])}  # seconds per value "
                         "a native call is handed", f"native_output_overhead: {_yaml_float(m['native_output_overhead'])}"
                         "  # seconds per value it gives back"] if "native_argument_overhead" in m else []),
                      *([f"# on the NumPy reference, {nat['runtime']} could not take them: "
                         + "; ".join(f"{k}: {v}" for k, v in sorted(map(lambda kv: (str(kv[0]), kv[1]), m['fell_back'].items())))]
                        if m.get("fell_back") else []),
                      f"native_bandwidth: {_yaml_float(m['native_bandwidth'])}  # bytes/s an op moves natively",
                      *([f"page_fault_bandwidth: {_yaml_float(m['page_fault_bandwidth'])}  # bytes/s, a buffer "
                         "over 32 MiB mapped fresh per call"] if m.get("page_fault_bandwidth") else []),
                      f"call_overhead: {_yaml_float(m['call_overhead'])}     # seconds per compiled cluster call",
                      *([f"xla_argument_overhead: {_yaml_float(m['argument_overhead'])}  # seconds per argument of a "
                         "cluster's call", f"xla_output_overhead: {_yaml_float(m['output_overhead'])}  # seconds per "
                         "output of a cluster's call"] if "argument_overhead" in m else []), "classes:"]
            notes = sources()
            lines += [f"  {c}: {{" + ", ".join(f"{k}: {_yaml_float(v)}" for k, v in sorted(row.items())) + "}"
                      + (f"  # {notes[c]}" if c in notes else "") for c, row in m["classes"].items()]
        return "\n".join(lines) + "\n"


def _yaml_float(v: float) -> str:
    """4 significant digits that YAML reads back as a float (it reads 1e+12, without a point, as a string)."""
    return f"{v:.3e}"


def _times(fn: Callable[[], object], repeats: int) -> list[float]:
    fn()  # warm-up (and compile)
    from . import measure  # its clock read at call time: a benchmark may have set it

    out = []
    for _ in range(repeats):
        t0 = measure.clock()
        fn()
        out.append(measure.clock() - t0)
    return out


STEPS = 4 + calibrate_ops.STEPS   # progress steps of a full calibration


def calibrate(matmul_n: int | None = None, stream_elements: int | None = None, repeats: int | None = None,
              progress: Callable[[str], None] | None = None, classes: bool = True, native: str | None = None,
              threads: int | None = None) -> Calibration:
    """Measure the default JAX backend and the native runtime (`native`: onnxruntime by default, numpy for
    xcviz's reference); `progress(step)` is called as each of the STEPS steps starts (the first four without
    `classes`, the per-op-class numbers)."""
    from .native import apply_threads, describe, resolve

    threads, _ = apply_threads(threads)   # before JAX loads
    rt = resolve(native, None, threads)
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
    def axpb_fn(v):
        return v * 0.5 + 0.5

    axpb = jax.jit(axpb_fn, donate_argnums=0)

    def stream():
        buf[0] = axpb(buf[0])
        buf[0].block_until_ready()

    with warnings.catch_warnings():  # a backend that cannot donate says so; the copy is then timed too
        warnings.simplefilter("ignore")
        in_place = _times(stream, r)
    bandwidth = 8.0 * m / min(in_place)
    faults = page_faults(axpb_fn, buf[0], m, statistics.median(in_place), r) if classes else None

    step("launch overhead (tiny kernel)")
    one = jax.device_put(np.ones(1, np.float32), dev)
    tiny = jax.jit(lambda v: v + 1.0)
    launch = statistics.median(_times(lambda: tiny(one).block_until_ready(), max(r, 50)))

    step("host-device sync (tiny round trip)")
    host = np.ones(1, np.float32)
    round_trip = statistics.median(_times(lambda: np.asarray(tiny(jn.asarray(host))), max(r, 50)))
    sync = max(round_trip - launch, 0.0) / 2  # one tensor in, one out
    measured = calibrate_ops.measure_classes(r, bandwidth, step, rt) if classes else None
    if measured:
        sync = measured.pop("sync_overhead")
        if hasattr(rt, "onednn_overhead"):   # (torch eager: its oneDNN convolutions' floor)
            measured["native_onednn_conv_overhead"] = rt.onednn_overhead(r)
        if hasattr(rt, "iteration_overhead"):   # (TensorFlow: a while loop's frame, every iteration)
            floor = measured["classes"]["free"]["native_overhead"]
            measured["native_iteration_overhead"] = rt.iteration_overhead(r, floor)
        measured["page_fault_bandwidth"] = faults  # as validate hands activations in: numpy arrays, per tensor
    del jn
    kind = getattr(dev, "device_kind", "") or platform.machine()
    if dev.platform == "cpu":
        kind = f"{_cpu_model() or platform.machine()}, {os.cpu_count()} cpus"
    return Calibration(peak, bandwidth, launch, sync, jax.default_backend(), f"{kind} ({dev.platform})",
                       {"matmul_n": n, "stream_elements": m, "repeats": r}, measured, describe(rt))


def page_faults(fn, x, m: int, in_place: float, repeats: int) -> float | None:
    """Bytes/s of the page faults of writing a fresh buffer: the stream op with a new output each call (freed
    after it, so an output over 32 MiB is mapped again, as glibc does above its largest mmap threshold) less
    the same op in place. None when the buffer is too small to be mapped fresh."""
    import jax

    from ..cost.classes import FRESH_BYTES

    if 4 * m <= FRESH_BYTES:
        return None
    fresh = jax.jit(fn)
    extra = statistics.median(_times(lambda: fresh(x).block_until_ready(), repeats)) - in_place
    return 4.0 * m / extra if extra > 0 else None


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def sources() -> dict[str, str]:
    """Per class, what calibrate measures it with (written beside its numbers in the profile)."""
    def shape(line: str) -> str:
        head, rest = line.strip().split(" = ", 1)
        return f"{rest.split('(', 1)[0]} {head.split(': ', 1)[1]}"

    out = {}
    for c, (small, mid) in PROGRAMS.items():
        text = "native " + " and ".join(shape(p) for p in (small, mid) if p)
        if c in NATIVE_CHAINS or c == "reduce":
            step_ = shape(REDUCE_STEP if c == "reduce" else NATIVE_CHAINS[c][1].format(x='%a', y='%y'))
            text += f" (on a session runtime: one more {step_} of a chain of {LONG}" + \
                    (f", one more of {COPIES} copies of the larger" if mid is not None else "") + ")"
        if mid is not None:
            text += "; XLA " + " and ".join(
                f"{CHAIN} x {shape(chains[c][1].splitlines()[0].format(x='%a', y='%y'))} chained"
                for chains in (CHAINS, MID_CHAINS) if c in chains)
            text += "" if c in MID_CHAINS else (" and " if c in CHAINS else "") + shape(mid)
        out[c] = text
    return out
