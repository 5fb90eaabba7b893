"""What a clustering pass returns: clusters, per-node decisions and every merge attempt, as data."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from ..ops import FUNCTIONAL
from .deferred import lazy_lists
from .options import ClusterOptions

PHASE_NAMES = {0: "phase 0 (shape consumers)", 1: "phase 1", 2: "phase 2", -1: "greedy", 3: "cost"}


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try to contract the edge between the clusters represented by nodes `src` and `dst`."""

    phase: int
    src: int                    # representative node (position) of the producer-side cluster
    dst: int                    # representative node of the consumer-side cluster
    merged: bool
    reason: str | None = None   # why refused
    code: str | None = None     # cycle, device, scope, max-size, cross-device
    path: tuple[int, ...] = ()  # for a cycle: the nodes of the blocking path


@lazy_lists("clusters", "cluster_of", "candidate", "code", "reason", "device", "groups")
@dataclass
class Clustering:
    """The pass's result. The compiled pass hands its per-node lists over as arrays, made into lists when first
    read (deferred.py); arrays() gives the cost model cluster_of and the members without them."""

    options: ClusterOptions
    clusters: list[list[int]]            # kept clusters, node positions in topological order
    cluster_of: list[int]                # cluster index per node, -1 when not clustered
    candidate: list[bool]
    code: list[str | None]               # reason code per node (None when clustered)
    reason: list[str | None]             # reason text per node
    device: list[str]
    attempts: list[Attempt] = field(default_factory=list)
    groups: list[list[int]] = field(default_factory=list)  # every final group (kept or dropped), with size
    # clustering.bodies.BodyClustering of each Loop/If/Scan body, in node order, nested ones inside: made once by
    # run_clustering with these options, read by cost, runtime and renderers (not compared: derived from the rest)
    bodies: list = field(default_factory=list, compare=False, repr=False)
    # cluster_of, members and sizes as arrays (see arrays()); not an argument, so a replace() makes them anew
    _arrays: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def strategy(self) -> str:
        return self.options.strategy

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """cluster_of (int64 per node), every kept cluster's members back to back, and each cluster's size:
        made once (the compiled pass hands over its own), since reading the lists item by item is a pass over
        every node each time."""
        if self._arrays is None:
            sizes = np.fromiter(map(len, self.clusters), np.int64, len(self.clusters))
            self._arrays = (np.fromiter(self.cluster_of, np.int64, len(self.cluster_of)),
                            np.fromiter(chain.from_iterable(self.clusters), np.int64, int(sizes.sum())), sizes)
        return self._arrays

    def cluster_id(self, k: int) -> str:
        return f"cluster_{k}"

    def refused(self, limit: int | None = None) -> list[Attempt]:
        """The attempts that did not merge (the first `limit` of them); the compiled pass's AttemptLog
        picks them from its table without building the 10^6 others."""
        pick = getattr(self.attempts, "refused", None)
        if pick is not None:
            return pick(limit)
        refused = [a for a in self.attempts if not a.merged]
        return refused if limit is None else refused[:limit]

    def attempt_columns(self) -> tuple[list[int], list[int], list[bool]]:
        """src, dst and merged of every attempt (from the log's table, without building attempts)."""
        columns = getattr(self.attempts, "columns", None)
        if columns is not None:
            return columns()
        return [a.src for a in self.attempts], [a.dst for a in self.attempts], [a.merged for a in self.attempts]

    def refused_count(self) -> int:
        count = getattr(self.attempts, "merged_count", None)
        return len(self.attempts) - (count() if count is not None else sum(a.merged for a in self.attempts))


def keeps_cluster(opdef, compile) -> bool:
    """Whether a node keeps its cluster whatever the cluster's effective size (the minimum-size rule's exceptions
    in TF's MarkForCompilationPass): a node marked `compile: true` (is_xla_compile_attr_true), or functional
    control flow (has_functional_control_flow: While / If; ONNX's Loop / If / Scan), whose bodies are the work."""
    return compile is True or (opdef is not None and FUNCTIONAL in opdef.groups)


MIN_SIZE = "min-size"   # the decision code of a node whose group the minimum-size rule dropped


def kept(eff, forced, min_size: int):
    """The minimum-size rule: a group is kept when its effective size reaches the minimum, or when it holds a
    node that keeps its cluster whatever the size (keeps_cluster). Works on numbers and on numpy arrays alike."""
    return (eff >= min_size) | forced


def below_min_size(eff: int, min_size: int) -> str:
    """The reason given to each node of a dropped group."""
    return f"cluster below minimum size ({eff} < {min_size})"


def finish(opts: ClusterOptions, graph, cands, groups: list[tuple[list[int], int, bool]],
           attempts: list[Attempt]) -> Clustering:
    """Apply the minimum-size rule and name kept clusters in order of their first member.

    `groups` holds (members, effective size, forced) for every group the strategy formed."""
    n = len(graph.nodes)
    cluster_of = [-1] * n
    code = list(cands.code)
    reason = list(cands.reason)
    ordered = sorted(((sorted(m), e, f) for m, e, f in groups), key=lambda t: t[0][0])
    clusters: list[list[int]] = []
    min_size = opts.min_size
    for members, eff, forced in ordered:
        if kept(eff, bool(forced), min_size):
            for v in members:
                cluster_of[v] = len(clusters)
            clusters.append(members)
        else:
            for v in members:
                code[v] = MIN_SIZE
                reason[v] = below_min_size(eff, min_size)
    return Clustering(opts, clusters, cluster_of, list(cands.ok), code, reason, list(cands.device), attempts,
                      [m for m, _, _ in ordered])
