"""What the cost model returns: Stats, per-cluster ClusterCost and boundary Edge, the lazy lists holding them."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..ir import TensorType, gc_paused


OUTPUT = "<output>"


@dataclass
class Edge:
    src: str            # producer node name, or graph input name
    dst: str            # consumer node name, or OUTPUT
    tensor: str
    type: TensorType
    bytes: int | None
    src_cluster: int    # -1 when outside every cluster
    dst_cluster: int
    parameter: bool = False  # carries a resident weight or constant, not an activation handed over per call


@dataclass
class ClusterCost:
    id: str
    nodes: list[str]
    ops: dict[str, int]
    entry_points: list[str]    # the members reading an activation from outside (a weight read is no entry)
    exit_points: list[str]
    inputs: list[str]
    outputs: list[str]
    boundary_bytes_in: int | None
    boundary_bytes_out: int | None
    edges_in: int
    edges_out: int
    flops: int
    effective_size: int
    time_unfused: float | None
    time_fused: float | None
    speedup_estimate: float | None
    parameter_bytes_in: int | None = None   # the part of boundary_bytes_in carried by parameters (resident)
    kernels: int = 1                        # XLA kernels predicted by the fusion model (cost.fusion)
    # its values depend on no runtime input (params.constant_clusters): it folds to a constant at compile time,
    # as natively; its speedup is None and it is left out of the model's estimate
    constant: bool = False


@dataclass
class Stats:
    nodes: int
    clustered_nodes: int
    coverage: float
    coverage_flops: float | None
    boundary_bytes: int | None
    boundary_edges: int
    kernel_launches_before: int
    kernel_launches_after: int
    time_before: float | None
    time_after: float | None
    speedup_estimate: float | None
    clusters: int
    fallback_nodes: int
    hardware: str
    # D split: activations (computed per call, handed between the runtimes) and parameters (resident weights
    # and constants, read by the kernels that use them); D = the two together
    boundary_bytes_activations: int | None = None
    parameter_bytes: int | None = None
    # coverage by FLOPs when some nodes' FLOPs are unknown (coverage_flops is then None): bounds, and which
    unknown_cost_nodes: dict | None = None  # {"count", "ops": {op_type: n}, "nodes": [first names]}
    coverage_flops_min: float | None = None
    coverage_flops_max: float | None = None
    handoffs: int = 0   # activation tensors crossing between the runtimes per call (each costs sync_overhead)
    native: str | None = None   # the runtime the estimate's native times are of (Hardware.native)
    constant_clusters: int = 0  # clusters that fold to a constant (ClusterCost.constant): out of the estimate
    # Read-only lists; compute_stats fills them with LazyList, which builds each object on first access
    clusters_detail: Sequence[ClusterCost] = field(default_factory=list)
    edges: Sequence[Edge] = field(default_factory=list)


class LazyList(Sequence):
    """A read-only list whose items are built on first access and then kept.

    A 10^6-node graph has ~10^5 clusters and ~5*10^5 boundary edges: building their objects cost more than
    every number in Stats, and `stats --json` reads none of them. Items are built with the cyclic GC
    paused, as compute_stats used to build them: with a big graph alive, collections cost more than the build."""

    def __init__(self, n: int, make: Callable[[int], object]) -> None:
        self._items: list = [None] * n
        self._make = make

    def __len__(self) -> int:
        return len(self._items)

    def _built(self, ks: range) -> list:
        items, make = self._items, self._make
        with gc_paused():
            for k in ks:
                if items[k] is None:
                    items[k] = make(k)
        return items

    def __getitem__(self, i):
        if isinstance(i, slice):
            ks = range(*i.indices(len(self._items)))
            return list(map(self._built(ks).__getitem__, ks))
        item = self._items[i]  # IndexError and negative indices as a list has them
        if item is None:
            item = self._built(range(i % len(self._items), i % len(self._items) + 1))[i]
        return item

    def __iter__(self):
        return iter(self._built(range(len(self._items))) if None in self._items else self._items)

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, LazyList)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return repr(list(self))

    def __reduce__(self):  # pickle and copy as the plain list it stands for
        return list, (list(self),)
