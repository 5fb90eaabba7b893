"""XLA's CPU kernels for a cluster: where a fused value is written, counted as XLA's optimized HLO shows it.

Read off the HLO that jaxlib's CPU compiler emits (xla/service/cpu/cpu_instruction_fusion.cc, the tree
reduction rewriter, layout assignment and the YNNPACK fusions) and checked against it in
tests/test_cost_fusion.py. A loop value (an elementwise or data-movement result, a pooling written as
slices, the scaling after a reduction, a convolution's bias add) costs nothing where it fuses into its
readers; it costs one kernel per place that wants it in memory, because XLA duplicates a cheap producer
into each consumer fusion rather than share one buffer:
- a library call reads it (convolution or dot: YNNPACK/oneDNN/Eigen take operands from memory; a dot
  reading a matrix as it is shares the buffer with an exit, one reading it through a reshape or a
  convolution's layout gets a copy of its own);
- it leaves the cluster, or a tree-split reduction reads it (its reduce-window reads memory; an exit
  shares that buffer), or a pooling reads it and it is a concatenation or a pooling read twice;
- it leaves a cluster with several outputs, as it is, in the convolutions' channels-last layout: the
  fusion writes it channels-last and a copy transposes it (a single output, or an exit through a
  reshape, is written in the graph's layout by the fusion itself).
An expensive producer (exp, tanh, erf, divide, ...) is not duplicated: one buffer serves every reader.
A reduction's last step fuses into its reader (so a reduction alone is one kernel), plus one
reduce-window kernel where a reduced dimension is longer than 32 (the tree reduction rewriter); from 4096
input elements a reduction is a YNNPACK fusion of its own instead (which takes in the YNNPACK
convolutions feeding it), and a mean's scaling a loop value after it. Layer norm is 2 kernels before its
output (5 when tree-split, 4 as YNNPACK fusions), softmax 3 (5, 3); a padded pooling writes its pad.
Library calls: one kernel each; every convolution weight that is an argument is copied to the library's
layout (unless that is a bitcast: 1x1 with one input or output channel), and so is an image from outside
the cluster (reshaped in it or not); a Gemm's transposed argument is copied; a Gemm's bias add fuses into
the dot only for one row times a transposed weight argument (XLA's output fusion of a matrix-vector dot),
else it is a loop value; a local response normalisation fused into a pooling has the channels-last value
it reads transposed into memory first."""
from __future__ import annotations

import math

import numpy as np

from .keys import group_ids
from .view import CostView

K_FREE, K_LOOP, K_LIB, K_REDUCE = 0, 1, 2, 3
CONVS = frozenset({"conv2d", "conv_transpose"})
GEMM = "gemm"
WINDOWS = frozenset({"maxpool", "avgpool"})     # written as pad + strided slices: loop fusions on CPU
# kernels before the output fusion: (short rows, rows tree-split, YNNPACK reductions)
MULTI_PASS = {"layernorm": (2, 5, 4), "instancenorm": (2, 5, 4), "softmax": (3, 5, 3), "log_softmax": (3, 5, 3)}
YNN_REDUCE = 4096       # from this many input elements a reduction is a YNNPACK fusion (measured)
MEANS = frozenset({"reduce_mean", "global_avgpool"})
EXPENSIVE = frozenset({"exp", "log", "tanh", "erf", "sqrt", "rsqrt", "pow", "sigmoid", "div", "softplus",
                       "gelu", "sin", "cos", "atan", "asin", "acos", "sinh", "cosh", "reciprocal", "expm1", "log1p"})
TREE_WINDOW = 32        # XLA CPU's TreeReductionRewriter window


def _codes(flat: CostView, names) -> np.ndarray:
    return flat.op_mask(names) & flat.known


def _bound(flat, tid: int, dims, cache: dict):
    """Type `tid`'s shape with the bound dimensions filled in (once per type)."""
    if tid not in cache:
        cache[tid] = flat.types[tid].bind(dims).shape
    return cache[tid]


def _reduced_long(op: str, attrs: dict, shape) -> bool:
    """Whether a reduction reduces a dimension longer than XLA's tree-reduction window."""
    if not shape or any(not isinstance(d, int) for d in shape):
        return False
    rank = len(shape)
    if op in ("global_avgpool", "global_maxpool"):
        axes = range(2, rank)
    elif op in MULTI_PASS:  # a normalisation over the axis and those after it (softmax: coerced to 2-d)
        axis = int(attrs.get("axis", -1) or 0) % rank
        axes = [axis] if op in ("softmax", "log_softmax") and not attrs.get("coerce_2d") else range(axis, rank)
    else:
        axes = attrs.get("axes")
        axes = range(rank) if axes is None else [a % rank for a in (axes if isinstance(axes, (list, tuple)) else [axes])]
    return any(shape[a] > TREE_WINDOW for a in axes)


def _reduction_rule(op: str, attrs: dict, shape, weight: int) -> tuple[bool, int, bool, bool]:
    """A clustered reduction's (tree split, kernels before the output fusion, whether its result is a loop
    value, whether it is a YNNPACK fusion root), from its op, attributes and first input's bound shape."""
    long = _reduced_long(op, attrs, shape)
    ynn = bool(shape) and all(isinstance(d, int) for d in shape) and math.prod(shape) >= YNN_REDUCE
    # a tree split's reduce-window reads its operand from memory: a loop value it reads is written
    tree = long and not ynn
    if op in MULTI_PASS:
        return tree, MULTI_PASS[op][2 if ynn else int(long)], True, False
    if op in ("topk", "cumsum", "lrn", "hardmax", "argmax", "argmin"):
        return tree, weight, True, False
    if ynn:  # a kernel of its own (it takes in the convolutions feeding it); a mean's scaling is a loop value
        return tree, 1, op in MEANS, True
    return tree, int(long), True, False  # the last step fuses into the reader: only a tree split's first step


def _reductions(flat: CostView, red: np.ndarray, weight: np.ndarray, dims) -> tuple[np.ndarray, ...]:
    """_reduction_rule for each reduction at positions `red`, as arrays: the rule runs once per distinct
    (op, first input type, attribute dict object), and once per equal values of the attributes it reads."""
    starts, arity = flat.edge_start[red], flat.arity[red]
    tid = np.where(arity > 0, flat.tid_of[np.minimum(starts, max(len(flat.tid_of) - 1, 0))] if len(flat.tid_of)
                   else -1, -1)
    attrs = list(map(flat.columns.attrs.__getitem__, red.tolist()))
    _, obj = np.unique(np.fromiter(map(id, attrs), np.int64, len(attrs)), return_inverse=True)
    group, m = group_ids([(flat.op[red].astype(np.int64), len(flat.op_names)), (tid + 1, len(flat.types) + 2),
                          (obj.reshape(-1), int(obj.max()) + 1 if len(obj) else 1)], len(red))
    first = np.empty(m, np.int64)
    first[group[::-1]] = np.arange(len(red) - 1, -1, -1)
    rules: dict = {}
    bound: dict = {}
    out = []
    for r in first.tolist():
        a, t, op = attrs[r], int(tid[r]), flat.op_names[flat.op[red[r]]]
        try:  # the attributes the rule reads, by value
            key = (op, t, *(repr(a.get(k)) for k in ("axis", "coerce_2d", "axes")))
            hash(key)
        except Exception:  # noqa: BLE001 - an odd value: this dict's rule of its own
            key = (op, t, id(a))
        if key not in rules:
            shape = _bound(flat, t, dims, bound) if t >= 0 else None
            rules[key] = _reduction_rule(op, a, shape, int(weight[red[r]]))
        out.append(rules[key])
    tree, kernels, loop, ynn = (np.array([o[i] for o in out] + [0], dt)[:-1][group]
                                for i, dt in enumerate((bool, np.int64, bool, bool)))
    return tree, kernels, loop, ynn


def cpu_node_kernels(flat: CostView, cluster_of: np.ndarray, exits: np.ndarray, param_edge: np.ndarray,
                     kind: np.ndarray, weight: np.ndarray, dims) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the CPU kernels it accounts for, and whether its value is written to memory (`dims`: the
    bound symbolic dimensions, which decide the reductions' splits)."""
    n = len(cluster_of)
    exits = np.unique(exits)    # one per value, however many edges it leaves by
    src, dst = flat.src, flat.dst
    srcn = np.maximum(src, 0)
    clustered = cluster_of >= 0
    inner = (src >= 0) & (cluster_of[srcn] == cluster_of[dst]) & clustered[dst]
    e = np.arange(len(dst))
    slot = (e if flat.ref is None else flat.ref) - flat.in_start[dst]
    is_conv, is_window = _codes(flat, CONVS), _codes(flat, WINDOWS)
    is_gemm = _codes(flat, {GEMM})
    kind = np.where(is_window, K_LOOP, kind)
    lib = kind == K_LIB
    exit_ = np.zeros(n, bool)
    exit_[exits] = True
    exits_here = exit_.copy()   # leaving as they are (not only through a reshape)
    per_node = np.where(lib, 1, 0).astype(np.int64)

    # reductions and multi-pass roots: their kernels before the output fusion
    out_loop = (kind == K_LOOP) & clustered
    red = np.flatnonzero((kind == K_REDUCE) & clustered)
    tree = np.zeros(n, bool)
    first_in = np.where(flat.arity > 0, flat.edge_start, -1)
    r_tree, r_kernels, r_loop, r_ynn = _reductions(flat, red, weight, dims)
    tree[red] = r_tree
    per_node[red] = r_kernels
    out_loop[red] = r_loop
    ynn_roots = red[r_ynn].tolist()

    # library calls: operand copies to the library's layout, and bias adds
    # (a 1x1 weight with one input or one output channel is a bitcast in the library's layout)
    bitcast = np.array([len(t.shape or ()) == 4 and t.shape[2:] == (1, 1) and 1 in t.shape[:2]
                        for t in flat.types] + [False], bool)[:-1]
    # (an image reshaped in the cluster from an outside value is copied all the same)
    reshaped_in = np.zeros(n, bool)
    reshaped_in[dst[~inner & (kind[dst] == K_FREE) & clustered[dst]]] = True
    image_out = ~inner | reshaped_in[srcn]
    copies = is_conv[dst] & (((slot == 1) & ~inner & param_edge & ~bitcast[flat.tid_of])
                             | ((slot == 0) & image_out & ~param_edge))
    copies |= _gemm_transposed(flat, is_gemm, dst, slot, param_edge & ~inner)
    per_node += np.bincount(dst[copies], minlength=n)
    has_bias = np.bincount(dst[slot == 2], minlength=n) > 0
    out_loop |= is_conv & has_bias & clustered
    out_loop |= is_gemm & has_bias & clustered & ~_gemm_output_fused(flat, is_gemm, has_bias, dims, ~inner, first_in)

    # who wants each value in memory, seen through bitcasts (a reshape's readers are its producer's)
    lib_read = np.zeros(n, bool)
    operand = inner & lib[dst] & (slot < 2)   # a bias is read by the add after the call, not by it
    lib_read[src[operand]] = True
    # a dot reading a matrix as it is shares its buffer with an exit; through a reshape (a 3-d operand made
    # 2-d) or a convolution's layout the value is computed again for the library
    rank2 = np.array([len(t.shape or ()) <= 2 for t in flat.types] + [True], bool)[:-1]
    direct = operand & ~is_conv[dst] & rank2[flat.tid_of]
    relaid = np.zeros(n, bool)
    relaid[src[operand & ~direct]] = True
    mat_read = np.zeros(n, bool)
    mat_read[src[inner & tree[dst]]] = True
    conc = _codes(flat, {"concat"})
    # a pooling reads its input through several slices: a concatenation, or another pooling that something
    # else reads too, is materialised for it rather than recomputed per slice
    readers = np.bincount(src[inner], minlength=n)
    mat_read[src[inner & is_window[dst] & (conc[srcn] | (is_window[srcn] & (readers[srcn] > 1)))]] = True
    free = kind == K_FREE
    through = inner & free[dst] & (kind[srcn] != K_LIB)
    while True:
        more = through & ((lib_read[dst] & ~lib_read[srcn]) | (mat_read[dst] & ~mat_read[srcn])
                          | (exit_[dst] & ~exit_[srcn]))
        if not more.any():
            break
        s, d = src[more], dst[more]
        relaid[s] |= lib_read[d]
        lib_read[s] |= lib_read[d]
        mat_read[s] |= mat_read[d]
        exit_[s] |= exit_[d]

    channels_last = _channels_last(flat, cluster_of, inner, param_edge, kind, is_conv, is_window | conc)
    # a local response normalisation that a pooling reads is recomputed per slice: a channels-last value it
    # reads twice (the window sum and the scaling) is then transposed into memory once
    into_pool = np.zeros(n, bool)
    into_pool[src[inner & is_window[dst] & _codes(flat, {"lrn"})[srcn]]] = True
    mat_read[src[inner & into_pool[dst] & channels_last[srcn]]] = True
    n_exits = np.bincount(cluster_of[exits], minlength=int(cluster_of.max()) + 1 if n else 0) if len(exits) else None
    multi_exit = np.zeros(n, bool)
    if n_exits is not None:
        multi_exit[clustered] = n_exits[cluster_of[clustered]] > 1
    cheap = ~_codes(flat, EXPENSIVE)
    shared = exit_ | mat_read
    writes = np.where(lib_read & shared & (~cheap | ~relaid), 1, lib_read.astype(np.int64) + shared)
    writes += exits_here & channels_last & multi_exit & ((kind == K_LOOP) | (is_conv & has_bias))
    per_node += np.where(out_loop, writes, 0)
    # a convolution without a bias add leaving the cluster: its result copied back to the graph's layout
    per_node += is_conv & ~has_bias & exit_
    # a padded pooling writes its padded input first
    per_node += is_window & clustered & _padded(flat, is_window)
    # BatchNorm's rsqrt(var + eps) on its parameters: one fusion per call
    per_node += _codes(flat, {"batchnorm"}) & clustered
    written = (out_loop & (lib_read | shared)) | (lib & clustered)
    joins = _elementwise(flat) if ynn_roots else None
    ynn_conv = _ynn_convs(flat, is_conv, slot) if ynn_roots else None
    for j in ynn_roots:  # the convolutions and loop values only the YNNPACK reduction reads join its fusion
        cone = _ynn_cone(flat, j, inner, kind, ynn_conv, exit_, joins)
        per_node[cone] -= np.where(is_conv[cone], 1, np.where(out_loop[cone], writes[cone], 0))
    return per_node, written


def _ynn_cone(flat, root, inner, kind, is_conv, exit_, joins) -> np.ndarray:
    """Members a YNNPACK reduction takes into its fusion: going up from it, convolutions and loop ops that
    leave no cluster and whose one reader is the reduction or already taken (their own operand copies and
    parameter work stay kernels of their own); `joins`: the elementwise ops it can take (a concatenation, a
    pooling or a transpose ends it); `is_conv`: the YNNPACK convolutions. Only where one is among them."""
    src, dst = flat.src, flat.dst
    edges = np.flatnonzero(inner & ((dst == root) | np.isin(dst, [root])))
    taken, order = {root}, []
    frontier = [int(src[k]) for k in edges.tolist()]
    readers: dict[int, set] = {}
    while frontier:
        j = frontier.pop()
        if j in taken or exit_[j] or not (is_conv[j] or kind[j] == K_FREE or (kind[j] == K_LOOP and joins[j])):
            continue
        if j not in readers:
            readers[j] = {int(d) for d in dst[inner & (src == j)].tolist()}
        if len(readers[j]) != 1 or not readers[j] <= taken:   # a value read twice ends it
            continue
        taken.add(j)
        order.append(j)
        frontier.extend(int(s) for s in src[inner & (dst == j)].tolist())
    cone = np.array(order, np.int64)
    return cone if len(cone) and is_conv[cone].any() else np.zeros(0, np.int64)


def _ynn_convs(flat, is_conv, slot) -> np.ndarray:
    """Convolutions XLA hands to YNNPACK (32 channels or more in or out; smaller ones stay Eigen's)."""
    out = np.zeros(len(is_conv), bool)
    for k in np.flatnonzero(is_conv[flat.dst] & (slot == 1)).tolist():
        j, shape = int(flat.dst[k]), flat.types[flat.tid_of[k]].shape or ()
        group = int(flat.nodes[j].attrs.get("group", 1) or 1)
        out[j] = len(shape) >= 2 and all(isinstance(d, int) for d in shape[:2]) and max(shape[0], shape[1] * group) >= 32
    return out


def _elementwise(flat) -> np.ndarray:
    from ..ops import REGISTRY
    from ..ops.registry import ELEMENTWISE

    ok = [o == "batchnorm" or (o in REGISTRY.ops and ELEMENTWISE in REGISTRY.ops[o].groups) for o in flat.op_names]
    return np.array(ok + [False], bool)[:-1][flat.op] & flat.known


def _padded(flat, is_window) -> np.ndarray:
    out = np.zeros(len(is_window), bool)
    for j in np.flatnonzero(is_window).tolist():
        out[j] = any(int(p) for p in (flat.nodes[j].attrs.get("pads") or ()))
    return out


def _gemm_transposed(flat, is_gemm, dst, slot, param_edge) -> np.ndarray:
    """Edges carrying a Gemm's transposed parameter operand (copied on CPU)."""
    out = np.zeros(len(dst), bool)
    for j in np.flatnonzero(is_gemm).tolist():
        a = flat.nodes[j].attrs
        for s, key in ((0, "transA"), (1, "transB")):
            if int(a.get(key, 0) or 0):
                out |= (dst == j) & (slot == s) & param_edge
    return out


def _gemm_output_fused(flat, is_gemm, has_bias, dims, outside, first_in) -> np.ndarray:
    """Gemms whose bias add XLA fuses into the dot: one row times a transposed weight from outside the
    cluster (a matrix-vector dot; a weight built in the cluster, a broadcast constant, takes the transpose
    into its broadcast and the dot stays 1xK by KxN)."""
    out = np.zeros(len(is_gemm), bool)
    for j in np.flatnonzero(is_gemm & has_bias).tolist():
        node = flat.nodes[j]
        t = flat.types[flat.out_tid[flat.out_start[j]]].bind(dims) if flat.n_out[j] else None
        k = int(first_in[j]) + 1   # the weight's edge
        out[j] = bool(t is not None and t.shape and t.shape[0] == 1 and int(node.attrs.get("transB", 0) or 0)
                      and k < len(outside) and flat.dst[k] == j and outside[k])
    return out


def _channels_last(flat, cluster_of, inner, param_edge, kind, is_conv, resets) -> np.ndarray:
    """Values XLA computes in the convolutions' channels-last layout: a convolution's result, and a loop
    op all of whose activation operands are such values (a transpose's result likewise needs a layout copy).
    A pooling or a concatenation is laid out for the graph."""
    n = len(cluster_of)
    out = is_conv.copy()
    out |= _codes(flat, ("transpose",))
    cand = np.flatnonzero((kind == K_LOOP) & (cluster_of >= 0) & ~resets & ~out)
    if not len(cand) or not out.any() or len(cand) > 200_000:
        return out
    # per consumer, its activation input edges (parameters do not decide the layout)
    act = ~param_edge
    order = np.argsort(flat.dst, kind="stable")
    starts = np.searchsorted(flat.dst[order], np.arange(n + 1))
    src, dst_inner = flat.src, inner
    for j in cand.tolist():
        es = order[starts[j]:starts[j + 1]]
        es = es[act[es]]
        if len(es) and dst_inner[es].all() and out[src[es]].all():
            out[j] = True
    return out
