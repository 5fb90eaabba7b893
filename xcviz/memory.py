"""Process memory for big graphs: glibc's malloc keeps freed memory for reuse.

By default glibc hands freed memory back to the OS: the top of the heap once more than M_TRIM_THRESHOLD
of it is free, and each block it mapped on its own (those over M_MMAP_THRESHOLD) at once. Loading,
clustering and costing a big graph make and drop arrays of megabytes in turn, so each new one is faulted
in again page by page, each page a fault into the kernel: on a big graph those faults were a large share of a
first `xcviz.stats` (benchmarks/README.md).

So glibc is asked to keep up to 1 GiB of freed heap, to serve blocks under 32 MiB from the heap, where a
freed one is reused, and to grow the heap 256 MiB at a time: by the `xcviz` command as it starts (it is
short-lived), and through the Python API the first time xcviz meets a big graph (a file of BIG_FILE_BYTES,
or BIG_GRAPH_NODES nodes). Peak memory is unchanged; what changes is that the process keeps its freed
memory until it exits rather than handing it back. Set XCVIZ_MALLOC=system to leave malloc as it is (also
left alone: any MALLOC_*_ or GLIBC_TUNABLES setting of the user's, and C libraries other than glibc)."""
from __future__ import annotations

import os
import sys

BIG_GRAPH_NODES = 50_000         # a big graph: its arrays are megabytes
BIG_FILE_BYTES = 8 << 20        # a JSON graph of ~BIG_GRAPH_NODES nodes
# glibc's malloc.h: (parameter, value); 32 MiB is the largest mmap threshold glibc takes
_SETTINGS = ((-3, 32 << 20), (-1, 1 << 30), (-2, 256 << 20))   # M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, M_TOP_PAD
_tuned: bool | None = None      # None: not asked yet


def keep_freed_memory() -> bool:
    """Tune glibc's malloc as the module docstring says, once per process; True when it is tuned."""
    global _tuned
    if _tuned is None:
        _tuned = _tune()
    return _tuned


def _tune() -> bool:
    env = os.environ
    if env.get("XCVIZ_MALLOC", "").lower() == "system" or "GLIBC_TUNABLES" in env or any(
            k.startswith("MALLOC_") and k.endswith("_") for k in env):
        return False
    try:
        if sys.platform != "linux" or not os.confstr("CS_GNU_LIBC_VERSION"):
            return False
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt   # the process's own C library
    except (OSError, ValueError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all([bool(mallopt(param, value)) for param, value in _SETTINGS])
