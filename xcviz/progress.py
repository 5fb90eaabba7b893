"""Progress on stderr for long steps: a rich bar that appears only once a run has taken over a second.

Library code stays silent, except for a `notice` around a one-time step the user would otherwise wait on
unawares (compiling a kernel); the CLI wraps its steps in `steps(...)`. Nothing is drawn when stderr is not
a terminal, so `--json` output and pipes are never touched."""
from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

DELAY_S = 1.0


@contextmanager
def steps(names: list[str], enabled: bool | None = None):
    """Yields advance(name): call it as each step starts. The bar shows after DELAY_S seconds."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda name: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    progress = Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(),
                        console=Console(file=sys.stderr), transient=True)
    task = progress.add_task(names[0] if names else "", total=len(names))
    done = [0]

    def advance(name: str) -> None:
        progress.update(task, description=name, completed=done[0])
        done[0] += 1

    timer = threading.Timer(DELAY_S, progress.start)
    timer.daemon = True
    timer.start()
    try:
        yield advance
    finally:
        timer.cancel()
        progress.stop()


@contextmanager
def notice(start: str, done: str = "", enabled: bool | None = None):
    """One line on stderr as a long one-time step starts (`start`), and `done` with its time when it ends.

    For steps that happen deep inside the library (a first compile) where no `steps` bar is running;
    a plain line, so it also shows above a running bar. Silent when stderr is not a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    t0 = time.perf_counter()
    if enabled:
        print(start, file=sys.stderr, flush=True)
    yield
    if enabled and done:
        print(f"{done} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)


def compiling(what: str, seconds: int):
    """The `notice` for a cold first compile of `what` (a context manager)."""
    return notice(f"xcviz: compiling {what} for big graphs, once (~{seconds} s; later runs load it from numba's "
                  "cache)", f"xcviz: {what} compiled")
