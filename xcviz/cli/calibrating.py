"""`xcviz calibrate`: measure this machine through JAX and write a hardware profile for `--hardware FILE`."""
from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from ..errors import XcvizError
from .base import command
from .output import LazyProgress, console
from .running import Native, Threads, check_native


@command()
def calibrate(output: str = typer.Option(..., "-o", "--output", metavar="FILE.yaml", help="the profile to write"),
              name: Optional[str] = typer.Option(None, "--name", help="the profile's name [the file's name]",
                                                 show_default=False),
              matmul_n: int = typer.Option(2048, "--matmul-n", metavar="N", help="matmul size for the peak FLOP rate"),
              stream: int = typer.Option(1 << 25, "--stream", metavar="ELEMENTS",
                                         help="float32 elements streamed for the memory bandwidth"),
              repeats: int = typer.Option(20, "--repeats", metavar="N", help="timed repeats per measurement"),
              native: Native = None, threads: Threads = None) -> None:
    """Measure peak FLOP rate, memory bandwidth, launch and sync overhead on JAX's default backend, and what each
    op class costs natively and compiled; write a profile."""
    from ..fileio import check_target, write_atomic
    from ..runtime.calibrate import STEPS, calibrate as measure

    if not output.endswith((".yaml", ".yml")):
        raise XcvizError("the profile must be a .yaml file", where=output, hint="-o my_machine.yaml")
    check_target(output)
    check_native(native)
    bar = LazyProgress("calibrating")
    done = [0]

    def step(what: str) -> None:
        bar(done[0], STEPS, what)
        done[0] += 1

    try:
        result = measure(matmul_n, stream, repeats, progress=step, native=native, threads=threads)
        bar(STEPS, STEPS, "done")
    finally:
        bar.close()
    profile = name or os.path.splitext(os.path.basename(output))[0]
    write_atomic(output, result.profile_yaml(profile))
    err = console(sys.stderr)
    err.print(f"wrote {output}: {result.peak_flops / 1e9:.1f} GFLOP/s, {result.memory_bandwidth / 1e9:.1f} GB/s, "
              f"launch {result.launch_overhead * 1e6:.1f} µs, sync {result.sync_overhead * 1e6:.1f} µs "
              f"({result.device}; native {result.native['runtime']}, {result.native['threads']} threads); "
              f"use it with --hardware {output}")
