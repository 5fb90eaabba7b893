"""Which graphs take the numba-compiled paths: the one size threshold and the environment overrides."""
from __future__ import annotations

import os

# Under this many nodes the plain-Python code starts instantly and finishes before a compiled kernel
# would have loaded; at and above it the compiled one wins (see benchmarks/README.md).
FAST_MIN_NODES = 50_000


def use_fast(n: int, env: str) -> bool:
    """True when a graph of `n` nodes should take the compiled path. The environment variable `env`
    (XCVIZ_MARK, XCVIZ_INFER) set to `reference` or `fast` forces one; without numba it is never taken."""
    choice = os.environ.get(env, "auto")
    if choice == "reference" or (choice != "fast" and n < FAST_MIN_NODES):
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True
