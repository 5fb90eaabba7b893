"""Which values are parameters: weights and constants that stay resident where they are read, never fed per call.

A parameter is a graph input that is a weight (an ONNX initializer, any input with values, or a YAML input
marked `param: true`), a `Const` output, or the output of a node whose every input is a parameter (folded
once at load, as TensorFlow's and ONNX Runtime's constant folding do; nodes without inputs, such as random
ops, are not parameters). A parameter costs the bandwidth of reading it inside the kernels that use it, but
no hand-off between the native runtime and XLA: those are paid by activations only."""
from __future__ import annotations

import numpy as np

from ..ir import Graph
from ..ops import PARAMETER_SOURCE, REGISTRY, SHAPE_CONSUMER, TYPE_VALUE, VOLATILE
from .view import CostView

CONSTANT_OPS = REGISTRY.names(PARAMETER_SOURCE)
# ops whose result changes from call to call even when their inputs do not (TF's stateful random ops too)
VOLATILE_OPS = REGISTRY.names(VOLATILE) | frozenset(
    o.name for o in REGISTRY if o.name.startswith("tf.Random") or o.name in ("tf.Multinomial", "tf.RandomShuffle"))
# ops that read only their input's shape (Shape, Size, Rank; TF's too): of a static shape, a constant
SHAPE_ONLY_OPS = REGISTRY.names(TYPE_VALUE) | REGISTRY.names(SHAPE_CONSUMER)


def stored_parameters(graph: Graph) -> tuple[frozenset[int], frozenset[int]]:
    """The parameters a model stores rather than computes: the positions of its weight inputs (Value.is_param)
    and of its constant nodes (ops of CONSTANT_OPS, which take no inputs). Every other parameter is computed
    from these alone (parameter_masks); a picture folds only these into their readers' labels (render.params)."""
    inputs = frozenset(k for k, v in enumerate(graph.inputs) if v.is_param)
    nodes = frozenset(j for j, nd in enumerate(graph.nodes) if nd.known and nd.op in CONSTANT_OPS)
    return inputs, nodes


def parameter_masks(graph: Graph, flat: CostView) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(per graph input, per node) whether the value it gives is a parameter, stored or computed from
    parameters alone (for a node: all its outputs), and per edge of `flat` whether it carries one."""
    n = len(flat.arity)
    inp = np.fromiter((v.is_param for v in graph.inputs), bool, len(graph.inputs))
    node = flat.known_mask(CONSTANT_OPS)
    if not inp.any() and not node.any():
        return inp, node, np.zeros(len(flat.src), bool)
    has_inputs = (flat.arity > 0) & ~flat.op_mask(VOLATILE_OPS)
    # A node is a parameter when every input is; fixed point over the (usually short) constant chains.
    # Per edge, its producer's flag from one table: the nodes, then the graph inputs (src n + i); per node,
    # its parameter edges (a running count over its run of edges: edges are in node order) against its edges.
    count = np.zeros(len(flat.src) + 1, np.int32)
    at = np.empty(n + 1, np.int32)
    while True:
        edge_param = np.concatenate((node, inp))[flat.src]
        np.cumsum(edge_param, out=count[1:])
        np.take(count, flat.edge_start, out=at[:n], mode="clip")   # (node j's edges end where j + 1's start)
        at[n] = count[-1]
        all_param = np.diff(at) == flat.arity
        new = node | (has_inputs & all_param)
        if (new == node).all():
            return inp, node, edge_param
        node = new


def constant_clusters(flat: CostView, cluster_of: np.ndarray, nc: int, in_cluster: np.ndarray, param: np.ndarray,
                      known: np.ndarray, dst_pos: np.ndarray) -> np.ndarray:
    """Per cluster, whether its values depend on no runtime input: every value it reads from outside is a
    parameter, or is read only by a shape op (Shape, Size, Rank) and has a static shape, and no member draws
    random numbers. XLA folds such a cluster when it compiles it, as Grappler, onnxruntime's optimizer and
    torch.compile fold it natively: it is no work either side runs per call, and no speedup to claim.
    Per boundary edge: `in_cluster` (its consumer is in a cluster), `param`, `known` (its size is: its shape
    is static) and `dst_pos` (its consumer)."""
    if nc == 0:
        return np.zeros(0, bool)
    shape_only = np.concatenate((flat.known_mask(SHAPE_ONLY_OPS), [False]))[dst_pos]
    value_read = in_cluster & ~param & ~(shape_only & known)
    bad = np.bincount(cluster_of[dst_pos[value_read]], minlength=nc)[:nc] > 0
    volatile = flat.op_mask(VOLATILE_OPS) & (cluster_of >= 0)
    if volatile.any():
        bad |= np.bincount(cluster_of[volatile], minlength=nc)[:nc] > 0
    return ~bad
