"""The kernel's first use: is it in numba's cache, is compiling it worth it, and a line while it compiles.

numba keeps compiled code beside the sources (`__pycache__`), or, where that is not writable (a system-wide
install), in the user's cache folder (~/.cache/numba on Linux), or in NUMBA_CACHE_DIR when set. A cold
compile of the kernel takes ~30 s once; loading it from the cache ~1 s; the pure-Python reference takes
~30 µs a node (~3 s at 10^5 nodes). So with nothing cached, the compile pays only for graphs near 10^6 nodes:
smaller ones run the reference while a background process fills the cache for the next run."""
from __future__ import annotations

import os
import subprocess
import sys
import time

COLD_MIN_NODES = 1_000_000   # with nothing cached, below this the reference finishes before a compile would
_LOCK_STALE_S = 600          # a background compile that left its lock this long ago has died


def _entries():
    from .cycle_graph import build
    from .phase import results, roots, run_phase

    return build, run_phase, results, roots


def cache_dir() -> str | None:
    """Where numba keeps (or will keep) the compiled kernel."""
    try:
        return _entries()[1]._cache.cache_path
    except Exception:  # noqa: BLE001 - numba internals moved
        return None


def cached() -> bool:
    """True when numba's cache holds every entry point, compiled for this machine from these sources."""
    try:
        for d in _entries():
            magic = d.targetctx.codegen().magic_tuple()
            if not any(key[1] == magic for key in d._cache._cache_file._load_index()):
                return False
    except Exception:  # noqa: BLE001 - numba's cache internals moved: assume cached, compile as before
        return True
    return True


def worth_compiling(n: int) -> bool:
    """Should a graph of n nodes take the compiled path? Yes when the kernel is cached or the graph is big
    enough to pay for the compile; otherwise no, and a background process compiles it for the next run."""
    if n >= COLD_MIN_NODES or cached():
        return True
    compile_in_background()
    return False


def compile_in_background() -> bool:
    """Start a detached process that compiles the kernel into the cache (one at a time, by a lock file)."""
    folder = cache_dir()
    if folder is None:
        return False
    lock = os.path.join(folder, "xcviz-compiling.lock")
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.exists(lock) and time.time() - os.path.getmtime(lock) < _LOCK_STALE_S:
            return False
        with open(lock, "w") as f:
            f.write(str(os.getpid()))
        subprocess.Popen([sys.executable, "-m", "xcviz.clustering._kernel.warm", lock], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return False
    return True


class Announced:
    """An entry point that, when its call is the first of a cold cache, says so on stderr while it compiles.

    The first call to `first` (build) checks the cache once per process; a line appears if it is cold, and
    the end of the next call to `last` (roots: the pass is done, everything is compiled) adds the time."""

    _checked = False
    _notice = None

    def __init__(self, fn, role: str) -> None:
        self.fn, self.role = fn, role
        self.__doc__, self.__name__ = fn.__doc__, fn.__name__

    def __call__(self, *args):
        cls = Announced
        if self.role == "first" and not cls._checked:
            cls._checked = True
            if not cached():
                from ...progress import notice

                cls._notice = notice("xcviz: compiling the clustering kernel for big graphs, once (~30 s; "
                                     "later runs load it from numba's cache)", "xcviz: kernel compiled")
                cls._notice.__enter__()
        out = self.fn(*args)
        if self.role == "last" and cls._notice is not None:
            cls._notice.__exit__(None, None, None)
            cls._notice = None
        return out
