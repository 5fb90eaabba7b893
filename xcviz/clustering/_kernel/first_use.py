"""The kernel's first use: is it in numba's cache, is compiling it worth it, and a line while it compiles.

The cache checks, the background compile and the line are progress.py's (shared with passes/infer_fast.py). A cold
compile of the kernel takes ~45-50 s once (47 s CPU on the quiet 2-core machine since its set helpers are inlined,
which made the pass ~14 % faster; 28 s before); loading it from the cache ~0.1 s; the pure-Python reference takes
~30 µs a node (~3 s at 10^5 nodes, ~30 s at 10^6). So with nothing cached, the compile pays only from ~1.6x10^6
nodes: smaller graphs run the reference while a background process fills the cache for the next run (at 10^6 a
foreground compile made the first `stats` 50 s against the reference's 40 s)."""
from __future__ import annotations

COLD_MIN_NODES = 1_750_000   # with nothing cached, below this the reference finishes before a compile would


def _entries():
    from .phase import run_pass

    return (run_pass,)


def cache_dir() -> str | None:
    """Where numba keeps (or will keep) the compiled kernel."""
    from ...fastpath import numba_cache_dir

    return numba_cache_dir(_entries()[0])


def cached() -> bool:
    """True when numba's cache holds every entry point, compiled for this machine from these sources."""
    from ...fastpath import numba_cached

    return numba_cached(_entries())


def worth_compiling(n: int) -> bool:
    """Should a graph of n nodes take the compiled path? Yes when the kernel is cached or the graph is big
    enough to pay for the compile; otherwise no, and a background process compiles it for the next run."""
    if n >= COLD_MIN_NODES or cached():
        return True
    compile_in_background()
    return False


def compile_in_background() -> bool:
    """Start a detached process that compiles the kernel into the cache (one at a time, by a lock file)."""
    from ...fastpath import warm_in_background

    return warm_in_background(cache_dir(), "xcviz.clustering._kernel.warm")


class Announced:
    """The pass's entry point: when its first call in a process meets a cold cache, a line on stderr says so
    while it compiles, and then how long it took."""

    _checked = False

    def __init__(self, fn) -> None:
        self.fn = fn
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__

    def __call__(self, *args):
        if not Announced._checked:
            Announced._checked = True
            if not cached():
                from ... import progress

                with progress.compiling("the clustering kernel", 30):
                    return self.fn(*args)
        return self.fn(*args)
