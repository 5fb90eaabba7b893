"""The JSON scanner's first use: is it in numba's cache; if not, `python -m xcviz.loaders.json_warm LOCK` compiles it.

A cold compile of the scanner takes ~15-30 s, more than the msgspec way takes to read even a 10^6-node
file (~5 s), so a load never waits for it: with a cold cache the file is read the msgspec way while a
background process fills the cache for the next run (fastpath.warm_in_background; it removes LOCK when done)."""
from __future__ import annotations

import os
import sys


def _entries():
    from . import json_scan

    return json_scan.ENTRIES


def worth_compiling() -> bool:
    """True when the scanner is cached; otherwise start its compile in the background and say no."""
    from ..fastpath import numba_cache_dir, numba_cached, warm_in_background

    if numba_cached(_entries()):
        return True
    warm_in_background(numba_cache_dir(_entries()[0]), "xcviz.loaders.json_warm")
    return False


def announced():
    """A context for the first scan: a line on stderr while a cold cache compiles (XCVIZ_LOAD=fast forces it)."""
    from contextlib import nullcontext

    from ..fastpath import numba_cached

    if numba_cached(_entries()):
        return nullcontext()
    from .. import progress

    return progress.compiling("the JSON scanner", 20)


def main(lock: str | None) -> None:
    try:
        from . import json_scan

        json_scan.warm()
    finally:
        if lock and os.path.exists(lock):
            os.remove(lock)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
