"""The interface of a cost model: what compute_stats asks of one, and the facts it hands it.

Two models implement it, chosen once per estimate from the Hardware profile (cost.stats):
  - roofline (cost.roofline): the profile's four numbers, T = max(FLOPs / peak, bytes / bandwidth) + launch;
  - calibrated (cost.calibrated): the per-op-class numbers `xcviz calibrate` measures, where the profile has them.
A model answers three questions: how long each node takes natively, run op by op; how long XLA takes for one
call of each cluster (its boundary bytes' time given); and what a whole-model call, or a native call of one
cluster alone, adds to either side.
Everything else (coverage, boundary bytes, kernels, hand-offs, constant clusters, the sums) is the same for
both, and is compute_stats' own."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np


@dataclass(frozen=True)
class NodeCosts:
    """The graph's nodes costed once per distinct key (cost.keys): what a model reads per node."""
    key_of: np.ndarray          # per node, its key
    representatives: list[int]  # per key, one node that has it
    key_costs: list[tuple]      # per key: (FLOPs, bytes moved, bytes written); None where unknown
    loops: dict[int, tuple]   # Loop/If/Scan node -> (iterations, body ops it dispatches in all); LSTM/GRU/RNN -> (steps, XLA kernels, native calls)


@dataclass(frozen=True)
class ClusterWork:
    """What XLA runs per cluster, for the clusters whose boundary bytes are known (`known`)."""
    cluster_of: np.ndarray      # per node, its cluster (-1: none)
    known: np.ndarray           # per cluster: its boundary bytes are known (its time can be estimated)
    flops: np.ndarray           # per cluster, its members' FLOPs (exact integers)
    bytes_time: np.ndarray      # per known cluster: the bytes it moves (boundary and inner) / bandwidth
    kernels: np.ndarray         # per cluster, XLA's predicted kernels (cost.fusion)
    kernels_per_node: np.ndarray    # per node, the kernels it accounts for
    written: np.ndarray         # positions of the members whose value one kernel writes for another
    exits: np.ndarray           # positions of the members whose value leaves their cluster
    written_bytes: np.ndarray   # per node, the bytes of its outputs (0 where unknown)
    arguments: np.ndarray       # per cluster, the distinct tensors its call is handed (weights included)
    results: np.ndarray         # per cluster, the distinct tensors it gives back

    @property
    def count(self) -> int:
        return len(self.known)


class CostModel(Protocol):
    """A way to put seconds on the work compute_stats counts."""

    def key_times(self, key_costs: list[tuple]) -> list[float | None]:
        """Per key (NodeCosts.key_costs), one op's time by the model's formula (None: unknown); node_times adds
        what the runtime does around it. The cost strategy orders its merges by these."""

    def node_times(self, costs: NodeCosts) -> np.ndarray:
        """Per node, its time run natively op by op (NaN: unknown)."""

    def fused_times(self, costs: NodeCosts, work: ClusterWork) -> np.ndarray:
        """Per cluster, XLA's time for one call (NaN for the clusters that are not `work.known`)."""

    def whole_model(self, before: float | None, after: float | None, native_calls: Callable[[], tuple[int, int, int]],
                    compiled: bool, io: tuple[int, int]) -> tuple[float | None, float | None]:
        """The model's time natively (`before`) and in the hybrid run (`after`), with what the native runtime's
        calls add to each: one natively, handed `io` (the model's inputs, outputs), and in the hybrid run
        `native_calls()` = (calls, the values they are handed, the values they give back) (its fallback
        segments, counted on request: cost.segments), each made between compiled cluster calls when the run has
        one (`compiled`)."""

    @property
    def native_call(self) -> float:
        """What one call of the native runtime costs over its ops (a session's run; 0 for op-by-op eager): a
        cluster's own speedup compares one call each way, as validate measures it."""


def per_node(key_times: list[float | None], key_of: np.ndarray) -> np.ndarray:
    """Per node, its key's time: float64, NaN where unknown (NaN makes every sum it enters NaN)."""
    return np.array([np.nan if t is None else t for t in key_times], np.float64)[key_of]
