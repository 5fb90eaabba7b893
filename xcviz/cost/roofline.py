"""The roofline cost model (cost.model's interface): a profile's four numbers, no measurement per op class.

Per op      T_op = max(FLOPs / peak, bytes moved / bandwidth) + launch overhead.
Per cluster T_fused(C) = max(FLOPs(C) / peak, D(C) / bandwidth) + launch overhead per XLA kernel, D(C) its
boundary and inner bytes. A whole-model call costs nothing extra on either side."""
from __future__ import annotations

import numpy as np

from .hardware import Hardware
from .model import ClusterWork, NodeCosts, per_node


class RooflineModel:
    def __init__(self, hw: Hardware):
        self.hw = hw

    def key_times(self, key_costs: list[tuple]) -> list[float | None]:
        """Per key, one op's time: bound by its FLOPs or its bytes, plus a launch (None: bytes unknown)."""
        peak, bandwidth, launch = self.hw.peak_flops, self.hw.memory_bandwidth, self.hw.launch_overhead
        return [None if b is None else max((f or 0) / peak, b / bandwidth) + launch for f, b, _ in key_costs]

    def node_times(self, costs: NodeCosts) -> np.ndarray:
        return per_node(self.key_times(costs.key_costs), costs.key_of)

    def fused_times(self, costs: NodeCosts, work: ClusterWork) -> np.ndarray:
        hw, known = self.hw, work.known
        fused = np.full(work.count, np.nan)
        fused[known] = np.maximum(work.flops[known].astype(np.float64) / hw.peak_flops, work.bytes_time
                                  ) + hw.launch_overhead * work.kernels[known]
        return fused

    def whole_model(self, before, after, native_calls, compiled, io):
        return before, after

    native_call = 0.0
