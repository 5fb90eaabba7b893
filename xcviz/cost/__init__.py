"""The seed's metrics: boundary edges and bytes, coverage, kernel launches, and a roofline speedup estimate.

Per-op time  T_op = max(FLOPs / peak, bytes moved / bandwidth) + launch overhead, where bytes moved are the
op's inputs plus outputs. A fused cluster runs as one kernel that moves only its boundary bytes:
T_fused(C) = max(sum FLOPs(C) / peak, D(C) / bandwidth) + launch overhead, and every activation tensor
crossing into or out of a cluster (once per cluster, see params: parameters stay resident and cost only
their read bandwidth inside D(C)) costs a hand-off T_sync = sync overhead.
S = sum T_op / (sum T_fused + sum T_op(fallback) + T_sync).
FLOPs an op cannot state (unknown shapes, opaque ops) count as 0; unknown bytes make a number unknown.

Computed on integer arrays over the graph's edges: a node's FLOPs and bytes once per distinct (op,
attributes, types) key, sums in node or member order as a Python loop adds them (float results are the
same to the bit), and the ClusterCost and Edge objects only when read.

Modules: hardware (profiles), results (what is returned), view (the graph's columns as costed edges),
keys (one cost per distinct node key), control (Loop/If/Scan: their bodies' cost times their trips), sums
(how numbers are added), boundary (edges and cluster details), params (which values are resident
parameters, which clusters are constant), model (the interface of a time model), roofline and calibrated
(the two models), stats (compute_stats, as named steps)."""
from __future__ import annotations

from .hardware import PROFILE_KEYS, Hardware, hardware_for, hardware_names, load_hardware, program_runtime
from .results import OUTPUT, ClusterCost, Edge, LazyList, Stats
from .stats import compute_stats

__all__ = ["OUTPUT", "PROFILE_KEYS", "ClusterCost", "Edge", "Hardware", "LazyList", "Stats", "compute_stats",
           "hardware_for", "hardware_names", "load_hardware", "program_runtime"]
