"""Which graphs take the numba-compiled paths: the size threshold, the environment overrides, and numba's
cache (is a kernel compiled yet, from which sources; fill it in the background)."""
from __future__ import annotations

import functools
import hashlib
import os
import sys
import time

# Under this many nodes the plain-Python code starts instantly and finishes before a compiled kernel
# would have loaded; at and above it the compiled one wins (see benchmarks/README.md).
FAST_MIN_NODES = 50_000


def use_fast(n: int, env: str) -> bool:
    """True when a graph of `n` nodes should take the compiled path. The environment variable `env`
    (XCVIZ_INFER, XCVIZ_LOAD) set to `reference` or `fast` forces one; without numba it is never taken."""
    choice = os.environ.get(env, "auto")
    if choice == "reference" or (choice != "fast" and n < FAST_MIN_NODES):
        return False
    try:
        import_numba()
    except ImportError:
        return False
    return True


def import_numba() -> None:
    """Import numba without its BLAS probe: numba's first compile or cache load imports numba.np.arraymath,
    which imports scipy.linalg (0.2-0.4 s) only to learn whether np.cov/np.corrcoef may call BLAS for an
    inner product; no xcviz kernel uses them. Imported here with that probe answering no, numba uses its own
    loop for them in this process (np.dot and np.linalg still find scipy when compiled). Nothing changes
    where numba.np.arraymath was imported already."""
    import numba  # noqa: F401

    if "numba.np.arraymath" in sys.modules:
        return
    probe = "scipy.linalg.cython_blas"
    blocked = probe not in sys.modules
    if blocked:
        sys.modules[probe] = None  # type: ignore[assignment]  (an import of it raises ImportError)
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if blocked:
            del sys.modules[probe]


# ---- numba kernels' first use: shared by the JSON scanner and the shape-inference walk ----
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
    file there; the module removes it when done), at the lowest CPU priority: on a 2-core machine the first
    `stats` of a fresh install starts up to two (scanner, shape inference), and at normal priority
    they took the command's own core now and then (36 s wall for 28 s CPU, against the pure paths' 32 s)."""
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
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                         preexec_fn=_lowest_priority if hasattr(os, "nice") else None)
    except OSError:
        return False
    return True


def _lowest_priority() -> None:
    """In the child, before it runs: nice 19, also for its session's scheduling group (Linux's autogroup
    gives every session its own share whatever the nice values inside it, and the child starts a session)."""
    os.nice(19)
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("19")
    except OSError:
        pass


def track_sources() -> None:
    """Key numba's cache of xcviz's kernels to every module of the kernel's folder, not just the entry
    function's file (numba's own stamp): a kernel inlines helpers from its sibling modules, and with an
    editable install a change to one of them alone (a `git pull`) would otherwise run the stale compiled
    code. Call it before the first `njit(cache=True)` of a module (idempotent, cheap)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)  # (renamed in numba 0.6x)
    classes = getattr(impl, "_locator_classes", None)
    if not isinstance(classes, list) or any(getattr(c, "xcviz", False) for c in classes):
        return  # (numba's internals moved: its own stamp, as before)
    root = os.path.dirname(os.path.abspath(__file__)) + os.sep

    def covering(base):
        class Locator(base):
            xcviz = True

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(root):
                    return None
                return super().from_function(py_func, py_file)

            def get_source_stamp(self):
                return sources_stamp(os.path.dirname(os.path.abspath(self._py_file)))

        Locator.__name__ = Locator.__qualname__ = "Xcviz" + base.__name__
        return Locator

    classes[:0] = [covering(c) for c in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator,
                                         caching.UserWideCacheLocator)]


def sources_stamp(folder: str) -> bytes:
    """A hash of the contents of the folder's modules (memoized by their names, mtimes and sizes)."""
    files = tuple(sorted((e.name, e.stat().st_mtime_ns, e.stat().st_size) for e in os.scandir(folder)
                         if e.name.endswith(".py")))
    return _folder_stamp(folder, files)


@functools.lru_cache(maxsize=None)
def _folder_stamp(folder: str, files: tuple) -> bytes:
    """A hash of the contents of the folder's modules (`files`: their names and stats, the memo's key)."""
    h = hashlib.sha256()
    for name, _, _ in files:
        with open(os.path.join(folder, name), "rb") as f:
            h.update(name.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.digest()
