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


# ---- compiled kernels' first use (numba): shared by the clustering kernel and the shape-inference walk ----
# numba keeps compiled code beside the sources (`__pycache__`), or, where that is not writable (a system-wide
# install), in the user's cache folder (~/.cache/numba on Linux), or in NUMBA_CACHE_DIR when set.
_LOCK_STALE_S = 600  # a background compile that left its lock this long ago has died


def numba_cache_dir(dispatcher) -> str | None:
    """Where numba keeps (or will keep) a compiled function's code."""
    try:
        return dispatcher._cache.cache_path
    except Exception:  # noqa: BLE001 - numba internals moved
        return None


def numba_cached(dispatchers) -> bool:
    """True when numba's cache holds every one of these functions, compiled for this machine from these sources."""
    try:
        for d in dispatchers:
            magic = d.targetctx.codegen().magic_tuple()
            if not any(key[1] == magic for key in d._cache._cache_file._load_index()):
                return False
    except Exception:  # noqa: BLE001 - numba's cache internals moved: assume cached, compile as before
        return True
    return True


def warm_in_background(folder: str | None, module: str) -> bool:
    """Start a detached `python -m MODULE LOCK` that compiles into the cache folder (one at a time, by a lock
    file there; the module removes it when done)."""
    import os
    import subprocess

    if folder is None:
        return False
    lock = os.path.join(folder, "xcviz-compiling.lock")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.exists(lock) and time.time() - os.path.getmtime(lock) < _LOCK_STALE_S:
            return False
        with open(lock, "w") as f:
            f.write(str(os.getpid()))
        subprocess.Popen([sys.executable, "-m", module, lock], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    return True


def compiling(what: str, seconds: int):
    """The `notice` for a cold first compile of `what` (a context manager)."""
    return notice(f"xcviz: compiling {what} for big graphs, once (~{seconds} s; later runs load it from numba's "
                  "cache)", f"xcviz: {what} compiled")
