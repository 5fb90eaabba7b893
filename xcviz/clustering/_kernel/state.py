"""The kernel's data: its two state tuples with named fields, the row and slot layouts, the refusal codes."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ... import fastpath

fastpath.track_sources()  # (before any cached kernel below: see fastpath)

# Hot helpers are compiled without numba's reference counting (`_nrt=False`, an internal but long-standing
# flag): with it, every call that passes arrays pays atomic increments and decrements, which is most of
# the pass's time. Such functions cannot allocate, so build and run_phase size or grow the arrays first.
leaf = njit(cache=True, _nrt=False)
# The small set helpers are inlined into their callers by numba itself: as calls, each one
# passes its arrays as ~7 words apiece, and at 10^6 nodes they run a few million times (phase 1 ~10 % faster).
inl = njit(cache=True, _nrt=False, inline="always")

EMPTY = 0  # a free hash slot; keys are never 0 (that would be the self-edge 0 -> 0)
# columns of the attempt table (one row per contraction tried)
A_PHASE, A_SRC, A_DST, A_MERGED, A_CODE, A_X1, A_X2, A_PS, A_PL = range(9)
A_COLS = 9
# why a contraction was refused (C_NONE: merged)
C_NONE, C_DEVICE, C_SCOPE, C_MAXSIZE, C_CROSS, C_CYCLE = range(6)
# slots of State.meta
M_POOL_END, M_NATT, M_NPATH, M_FCNT, M_BCNT, M_PATHLEN, M_X1, M_X2, M_HT_LIVE, M_BASE = range(10)
# rows of State.scratch (each N long): run_phase's successor snapshot, contract's copies of the merged node's sets
SC_SNAP, SC_OUT, SC_IN = range(3)
# per node and direction (successors at 0, predecessors at IN), one row of State.SM: the set's start in the
# pool, length, capacity, and whether it is hashed: one row (32 bytes) to fetch, not eight arrays.
ST, LN, CP, HS = range(4)
IN = 4


class State(NamedTuple):
    """The cycle graph while it is contracted, and the buffers its searches reuse (sized by build)."""

    pool: np.ndarray      # int32: every node's successor and predecessor sets, as slices (see SM)
    ptmp: np.ndarray      # int32: room to pack the pool when its free end runs out
    HK: np.ndarray        # int64 keys of the open-addressing table (EMPTY = free slot)
    HV: np.ndarray        # int64 values: a neighbour's position in a hashed set
    meta: np.ndarray      # int64 counters and step results, at the M_* slots
    SM: np.ndarray        # int32 [N, 2 * IN]: ST, LN, CP, HS of successors, then of predecessors
    rank: np.ndarray      # int64 Pearce-Kelly topological rank of each node
    visited: np.ndarray   # bool DFS marks, all False between steps
    parent: np.ndarray    # int64 forward-search tree, to recover the blocking path
    deltaf: np.ndarray    # int64 nodes the forward search reached (count in meta[M_FCNT])
    deltab: np.ndarray    # int64 nodes the backward search reached (count in meta[M_BCNT])
    stack: np.ndarray     # int64 [N + E + 2, 2] DFS stack of (node, parent)
    path: np.ndarray      # int64 the last blocking path (length in meta[M_PATHLEN])
    rbuf: np.ndarray      # int64 the merged ranks a re-ordering hands out
    scratch: np.ndarray   # int64 [3, N] rows SC_SNAP, SC_OUT, SC_IN
    N: int                # nodes: SOURCE, SINK, the graph inputs, then the graph's nodes


class Clusters(NamedTuple):
    """Per node of the cycle graph (graph nodes from `base`): candidacy and the clusters merged so far."""

    ok: np.ndarray        # bool per graph node: a compilation candidate
    base: int             # id of the first graph node
    alive: np.ndarray     # bool: not yet merged into another node
    parent_uf: np.ndarray  # int32 union-find parent: the cluster a node was merged into
    size: np.ndarray      # int32 nodes in the cluster
    eff: np.ndarray       # int32 effective size (zero-size ops do not count)
    forced: np.ndarray    # bool: holds a node marked compile: true
    device: np.ndarray    # int32 device code
    xdev: np.ndarray      # bool: the cluster has a candidate predecessor on another device (see
                          # mark_reference.py's xdev: it spares the scan of a growing cluster's inputs)
    scope: np.ndarray     # int32 XLA scope code, -1 for none
    groups: np.ndarray    # int32 per graph node: 1 lone shape consumer, 2 lone no-op, else 0
    sc_succ: np.ndarray   # bool per node: a successor is a candidate lone shape consumer (groups 1); phase 0
                          # looks only at those nodes' edges while they are alone
    max_size: np.int64    # max cluster size (2^62 for none)
    record: bool          # keep a row per attempt
