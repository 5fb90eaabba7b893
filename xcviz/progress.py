"""Progress on stderr for long steps: a rich bar that appears only once a run has taken over a second.

Library code stays silent (nothing is compiled at first use: the kernels are built at install); the CLI wraps
its steps in `steps(...)`. Nothing is drawn when stderr is not a terminal, so `--json` output and pipes are
never touched."""
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

