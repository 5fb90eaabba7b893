"""The cyclic garbage collector around bulk building: paused while millions of acyclic IR objects are made."""
from __future__ import annotations

import gc
from contextlib import contextmanager

_PROCESS_FROZEN = False  # set by freeze_for_process()
_PROMOTE_ABOVE = 10_000  # young objects a GC pause must leave to be promoted; fewer go the usual way


def freeze_for_process() -> None:
    """For a process that ends without freeing its objects (the `xcviz` command): freeze everything alive
    now, and what later GC pauses build, out of the cyclic GC's reach (they are still freed by refcount)."""
    global _PROCESS_FROZEN
    gc.freeze()
    _PROCESS_FROZEN = True


@contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while building millions of acyclic objects.

    Allocation-triggered collections rescan every live object, which made loading and clustering of
    10^5..10^6-node graphs several times slower (quadratic in practice); the IR holds no cycles.

    On the way out, when the pause built many objects, they are moved straight to the oldest generation:
    left young, the first allocation after re-enabling would scan all of them (every node a load built) to
    find nothing. (freeze + unfreeze makes that move in O(1); where the process froze objects,
    as the CLI does after loading (freeze_for_process), the new ones are frozen with them.)"""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_count()[0] > _PROMOTE_ABOVE:
                # (get_freeze_count walks the frozen objects: nothing to walk unless someone froze some)
                frozen = _PROCESS_FROZEN or gc.get_freeze_count() > 0
                gc.freeze()
                if not frozen:
                    gc.unfreeze()
            gc.enable()


