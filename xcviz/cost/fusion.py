"""A model of the kernels XLA emits for a cluster: producer-consumer fusion, as XLA's fusion passes do it.

XLA does not run one kernel per cluster. Its instruction fusion (xla/service/instruction_fusion.cc, and the
CPU and GPU passes built on it) fuses a producer into its consumers when the producer is loop-fusible
(elementwise, broadcast, reshape, transpose, slice, concat, pad, gather, ...): the producer is recomputed
inside each consumer's loop (cheap ops are duplicated rather than materialised). A value is written to
memory, so ends a kernel, where:
- it leaves the cluster (a boundary edge or a graph output),
- it feeds a library call that takes operands from memory (convolution and dot: oneDNN/Eigen/YNNPACK on
  CPU, cuDNN/cuBLAS on GPU), or
- it is a reduction's result (reductions and reduce-windows are fusion roots: their elementwise producers
  fuse into them as input fusions, on CPU as YNNPACK fusions).
Reshapes, squeezes, identities and constants are bitcasts (no kernel); a broadcast constant
(ConstantOfShape) fuses into its readers, and where it must be written, equal ones are one (XLA's CSE), and so is a transpose read only by
library calls on GPU and TPU (XLA's TransposeFolding makes it part of the call's operand); a bitcast that must be written
makes its producer's fusion write it. A softmax or a normalisation lowers to two reductions.

On CPU the rules are those of jaxlib's CPU compiler as its optimized HLO shows them (cost.fusion_cpu:
duplicated cheap producers, layout copies, tree-split and YNNPACK reductions, output fusion of a
matrix-vector dot); GPU and TPU keep the rules above (work on parameters, such as BatchNorm's
rsqrt(var + eps), is recomputed inside the consumer's loop there).

What it does not model (measured against XLA's optimized HLO in benchmarks/cost_accuracy.py): sibling
multi-output fusion, and fusions XLA refuses for size or register pressure."""
from __future__ import annotations

import numpy as np

from ..ir import Graph
from ..ops import REGISTRY
from .fusion_cpu import K_FREE, K_LIB, K_LOOP, K_REDUCE, WINDOWS, cpu_node_kernels, edge_inner
from .sums import run_totals
from .view import CostView

FREE = REGISTRY.names(fusion="free")
BROADCASTS = REGISTRY.names(fusion="broadcast")
LIBRARY = REGISTRY.names(fusion="library")
REDUCE = REGISTRY.names(fusion="reduce")
TWO_REDUCTIONS = REGISTRY.names(fusion="two_reductions")
FOLDABLE = REGISTRY.names(fusion="foldable")
CPU_KERNELS = {o.name: o.cpu_kernels for o in REGISTRY if o.cpu_kernels != 1}



def op_kinds(op_names: list[str], device: str) -> tuple[np.ndarray, np.ndarray]:
    """Per op code: its kind and the kernels it is as a fusion root (a reduction: 1; a softmax or a
    normalisation: on GPU and TPU 2, the loops fused into the reductions; on CPU, whose emitter fuses no
    producer into a reduction, as counted in XLA's optimized HLO: softmax 4, layer norm 5)."""
    kind = np.array([K_FREE if o in FREE else K_LIB if o in LIBRARY else K_REDUCE if o in REDUCE | TWO_REDUCTIONS
                     else K_LOOP for o in op_names] + [K_LOOP], np.int8)[:-1]   # (small: per-node arrays)
    weight = np.array([(CPU_KERNELS.get(o, 1) if device == "cpu" else 2 if o in TWO_REDUCTIONS else 1)
                       for o in op_names] + [1], np.int32)[:-1]
    return kind, weight


def node_kernels(flat: CostView, cluster_of: np.ndarray, exits: np.ndarray, param_edge: np.ndarray,
                 device: str, dims=None, inner: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: the kernels it accounts for, whether its value is written to memory, and its kind
    (`inner`: per edge, whether both ends are in one cluster, if known)."""
    n = len(cluster_of)
    kinds, weights = op_kinds(flat.op_names, device)
    kind = kinds[flat.op]
    if not flat.all_known:
        kind = np.where(flat.known, kind, K_LOOP)
    if device == "cpu":   # (the weights per op code: the CPU rules read them at the reductions only)
        per_node, written = cpu_node_kernels(flat, cluster_of, exits, param_edge, kind, weights, dims or {}, inner)
        windows = flat.known_mask(WINDOWS)
        if windows.any():
            kind = np.where(windows, K_LOOP, kind)
        return _cse_broadcasts(flat, cluster_of, per_node, written), written, kind
    weight = weights[flat.op]
    src, dst = flat.src, flat.dst
    srcn = flat.src_nodes()
    if inner is None:
        inner = edge_inner(flat, cluster_of)
    written = np.zeros(n, bool)
    written[exits] = True
    # a transpose read only by library calls folds into their operand (XLA's TransposeFolding): a bitcast
    # (on GPU and TPU: on CPU the library calls, YNNPACK and oneDNN, want their operands copied)
    folds = flat.op_mask(FOLDABLE) & ~written & (device != "cpu")
    other_reader = np.bincount(src[inner & (kind[dst] != K_LIB)], minlength=n) > 0
    kind = np.where(folds & ~other_reader & (np.bincount(src[inner], minlength=n) > 0), K_FREE, kind)
    # a value read by a library call is written to memory
    lib_reads = inner & (kind[dst] == K_LIB)
    written[src[lib_reads]] = True
    # a bitcast that must be written makes its producer write (through chains of bitcasts)
    through = inner & (kind[dst] == K_FREE) & (kind[srcn] != K_LIB) & (kind[srcn] != K_REDUCE)
    while True:
        more = through & written[dst] & ~written[srcn]
        if not more.any():
            break
        written[src[more]] = True
    per_node = _cse_broadcasts(flat, cluster_of, np.where(kind >= K_LIB, weight, 0) + ((kind == K_LOOP) & written),
                               written)
    return per_node, written, kind


def _cse_broadcasts(flat: CostView, cluster_of: np.ndarray, per_node: np.ndarray, written: np.ndarray) -> np.ndarray:
    """XLA's CSE makes equal broadcast constants one: count each written (cluster, type, value) once."""
    if BROADCASTS.isdisjoint(flat.op_names):   # (none in the graph: no pass over the nodes)
        return per_node
    bcast = np.flatnonzero(flat.op_mask(BROADCASTS) & written & (cluster_of >= 0))
    seen: set = set()
    for j in bcast.tolist():
        key = (int(cluster_of[j]), flat.out0(j),
               repr(sorted(flat.nodes[j].attrs.items())))
        if key in seen:
            per_node[j] = 0
        seen.add(key)
    return per_node


def predict_kernels(graph: Graph, flat: CostView, cluster_of: np.ndarray, nc: int, exits: np.ndarray,
                    param_edge: np.ndarray, device: str = "cpu", inner: np.ndarray | None = None,
                    runs: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predicted XLA kernels per cluster, the members whose value one kernel writes for another, and per node
    the kernels it accounts for.
    `exits`: positions of the members whose value leaves their cluster; `param_edge`: per edge of `flat`,
    whether it carries a parameter; `device`: the XLA backend (cpu, gpu, tpu); `inner`: per edge of `flat`,
    whether both ends are in one cluster (computed when not given); `runs`: the clusters' members back to
    back and their sizes (Clustering.arrays), if at hand."""
    if nc == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(len(cluster_of), np.int64)
    per_node, written, kind = node_kernels(flat, cluster_of, exits, param_edge, device, graph.dims, inner)
    clustered = cluster_of >= 0
    if runs is not None:  # (exact integers summed over the members: no float weights, no masks)
        kernels = run_totals(per_node[runs[0]], runs[1])
    else:
        kernels = np.bincount(cluster_of[clustered], weights=per_node[clustered], minlength=nc).astype(np.int64)
    # values written inside their cluster for another kernel of it (exits are boundary bytes already)
    inner_written = written & clustered & (kind == K_LOOP)
    inner_written[exits] = False
    roots = clustered & (kind >= K_LIB)
    roots[exits] = False
    return kernels, np.flatnonzero(inner_written | roots), per_node
