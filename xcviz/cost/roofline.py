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

    def op_time(self, flops, nbytes) -> float | None:
        """One op's time: bound by its FLOPs or its bytes, plus a launch (None: bytes unknown)."""
        if nbytes is None:
            return None
        hw = self.hw
        return max((flops or 0) / hw.peak_flops, nbytes / hw.memory_bandwidth) + hw.launch_overhead

    def node_times(self, costs: NodeCosts) -> np.ndarray:
        return per_node([self.op_time(f, b) for f, b, _ in costs.key_costs], costs.key_of)

    def fused_times(self, costs: NodeCosts, work: ClusterWork) -> np.ndarray:
        hw, known = self.hw, work.known
        fused = np.full(work.count, np.nan)
        fused[known] = np.maximum(work.flops[known].astype(np.float64) / hw.peak_flops, work.bytes_time
                                  ) + hw.launch_overhead * work.kernels[known]
        return fused

    def whole_model(self, before, after, any_fallback):
        return before, after
