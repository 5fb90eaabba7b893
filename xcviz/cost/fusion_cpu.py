"""XLA's CPU kernels for a cluster: where a fused value is written, counted as XLA's optimized HLO shows it.

Read off the HLO that jaxlib's CPU compiler emits (xla/service/cpu/cpu_instruction_fusion.cc, the tree
reduction rewriter, layout assignment and the YNNPACK fusions) and checked against it in
tests/cost/test_fusion.py. A loop value (an elementwise or data-movement result, a pooling written as
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

from ..ops import EXPENSIVE as EXPENSIVE_GROUP, MEAN, REGISTRY, STRIDED_WINDOW
from .classes import NARROW
from .keys import group_ids
from .sums import starts
from .view import CostView

K_FREE, K_LOOP, K_LIB, K_REDUCE = 0, 1, 2, 3
CONVS = REGISTRY.names(fusion="library", cost_class="conv")
GEMM = "gemm"
WINDOWS = REGISTRY.names(STRIDED_WINDOW)     # written as pad + strided slices: loop fusions on CPU
# kernels before the output fusion: (short rows, rows tree-split, YNNPACK reductions)
MULTI_PASS = {o.name: o.cpu_passes for o in REGISTRY if o.cpu_passes is not None}
YNN_REDUCE = 4096       # from this many input elements a reduction is a YNNPACK fusion (measured)
MEANS = REGISTRY.names(MEAN)
EXPENSIVE = REGISTRY.names(EXPENSIVE_GROUP)
TREE_WINDOW = 32        # XLA CPU's TreeReductionRewriter window


def _codes(flat: CostView, names) -> np.ndarray:
    return flat.known_mask(names)


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


def _reductions(flat: CostView, red: np.ndarray, weights: np.ndarray, dims) -> tuple[np.ndarray, ...]:
    """_reduction_rule for each reduction at positions `red`, as arrays: the rule runs once per distinct
    (op, first input type) whose shape is not static (it then reads no attribute), else once per attribute
    dict object among them and once per equal values of the attributes it reads (`weights`: per op code)."""
    starts, arity = flat.edge_start[red], flat.arity[red]
    tid = np.where(arity > 0, flat.tid_of[np.minimum(starts, max(len(flat.tid_of) - 1, 0))] if len(flat.tid_of)
                   else -1, -1)
    op = flat.op[red].astype(np.int64)
    weight = weights[op]   # (per reduction)
    group, m = group_ids([(op, len(flat.op_names)), (tid + 1, len(flat.types) + 2)], len(red))
    bound: dict = {}
    rules: dict = {}
    out = []
    for r in _firsts(group, m).tolist():
        t, name = int(tid[r]), flat.op_names[op[r]]
        shape = _bound(flat, t, dims, bound) if t >= 0 else None
        static = bool(shape) and all(isinstance(d, int) for d in shape)
        out.append(None if static else _reduction_rule(name, {}, shape, int(weight[r])))
    per = np.array([o is None for o in out] + [False], bool)[:-1][group]   # static: by attributes, below
    res = [np.array([(o or (0, 0, 0, 0))[i] for o in out] + [0], dt)[:-1][group]
           for i, dt in enumerate((bool, np.int64, bool, bool))]
    if per.any():
        at = np.flatnonzero(per)
        if flat.attr_codes is not None:  # the loader's codes: equal code, equal dict
            code, reps = flat.attr_codes
            obj = code[red[at]].astype(np.int64)
            attr = lambda r: reps[obj[r]] or {}   # noqa: E731 - (a few distinct dicts: only those read)
        else:
            attrs = list(map(flat.columns.attrs.__getitem__, red[at].tolist()))
            attr = attrs.__getitem__
            _, obj = np.unique(np.fromiter(map(id, attrs), np.int64, len(attrs)), return_inverse=True)
        sub, k = group_ids([(group[at], m), (obj.reshape(-1), int(obj.max()) + 1)], len(at))
        decided = []
        for r in _firsts(sub, k).tolist():
            a, t, name = attr(r), int(tid[at[r]]), flat.op_names[op[at[r]]]
            try:  # the attributes the rule reads, by value
                key = (name, t, *(repr(a.get(x)) for x in ("axis", "coerce_2d", "axes")))
                hash(key)
            except Exception:  # noqa: BLE001 - an odd value: this dict's rule of its own
                key = (name, t, id(a))
            if key not in rules:
                rules[key] = _reduction_rule(name, a, _bound(flat, t, dims, bound), int(weight[at[r]]))
            decided.append(rules[key])
        for i, dt in enumerate((bool, np.int64, bool, bool)):
            res[i][at] = np.array([o[i] for o in decided], dt)[sub]
    return tuple(res)


def _firsts(group: np.ndarray, m: int) -> np.ndarray:
    """The first position of each of the m groups."""
    first = np.empty(m, np.int64)
    first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
    return first


def cpu_node_kernels(flat: CostView, cluster_of: np.ndarray, exits: np.ndarray, param_edge: np.ndarray,
                     kind: np.ndarray, weights: np.ndarray, dims, inner: np.ndarray | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the CPU kernels it accounts for (int32: a handful each), and whether its value is written to
    memory (`weights`: per op code, its kernels as a fusion root, op_kinds; `dims`: the bound symbolic
    dimensions, which decide the reductions' splits; `inner`: per edge, whether both ends are in one cluster,
    if known). Rules that only some ops take part in (convolutions, poolings, Gemms) run on
    the edges of those ops only, and not at all in a graph without them."""
    n = len(cluster_of)
    exit_ = np.zeros(n, bool)
    exit_[exits] = True
    exits = np.flatnonzero(exit_)    # one per value, however many edges it leaves by
    exits_here = exit_.copy()   # leaving as they are (not only through a reshape)
    src = flat.src
    clustered = cluster_of >= 0
    if inner is None:
        inner = edge_inner(flat, cluster_of)
    is_conv, is_window, is_gemm = _codes(flat, CONVS), _codes(flat, WINDOWS), _codes(flat, {GEMM})
    any_conv, any_window = bool(is_conv.any()), bool(is_window.any())
    if any_window:
        kind = np.where(is_window, K_LOOP, kind)
    lib = kind == K_LIB   # a library call: one kernel, or those XLA lowers it to (OpDef.cpu_kernels: sdpa's)
    per_node = np.where(lib, weights[flat.op.astype(np.int64)], 0).astype(np.int32)

    # reductions and multi-pass roots: their kernels before the output fusion
    out_loop = (kind == K_LOOP) & clustered
    red = np.flatnonzero((kind == K_REDUCE) & clustered)
    tree = np.zeros(n, bool)
    r_tree, r_kernels, r_loop, r_ynn = _reductions(flat, red, weights, dims)
    tree[red] = r_tree
    per_node[red] = r_kernels
    out_loop[red] = r_loop
    ynn_roots = red[r_ynn].tolist()

    # library calls (their edges `le`, in edge order): operand copies to the library's layout, and bias adds
    le, l_dst = edges_into(flat, lib)
    l_src, l_inner, l_param = src[le], inner[le], param_edge[le]
    l_slot = (le if flat.ref is None else flat.ref[le]) - flat.in_start[l_dst]
    has_bias = np.zeros(n, bool)   # (for library calls only: every use reads it with is_conv or is_gemm)
    has_bias[l_dst[l_slot == 2]] = True
    if any_conv or is_gemm.any():
        # (a 1x1 weight with one input or one output channel is a bitcast in the library's layout)
        bitcast = np.array([len(t.shape or ()) == 4 and t.shape[2:] == (1, 1) and 1 in t.shape[:2]
                            for t in flat.types] + [False], bool)[:-1]
        copies = _gemm_transposed(flat, is_gemm, l_dst, l_slot, l_param & ~l_inner)
        if any_conv:
            # (an image reshaped in the cluster from an outside value is copied all the same)
            reshaped_in = np.zeros(n, bool)
            dst = flat.dst
            reshaped_in[dst[~inner & (kind[dst] == K_FREE) & clustered[dst]]] = True
            image_out = ~l_inner | reshaped_in[flat.src_nodes(l_src)]
            copies |= is_conv[l_dst] & (((l_slot == 1) & ~l_inner & l_param & ~bitcast[flat.tid_of[le]])
                                        | ((l_slot == 0) & image_out & ~l_param))
        per_node += np.bincount(l_dst[copies], minlength=n)
        out_loop |= is_conv & has_bias & clustered
        out_loop |= is_gemm & has_bias & clustered & ~_gemm_output_fused(flat, is_gemm, has_bias, dims, ~inner)

    # who wants each value in memory, seen through bitcasts (a reshape's readers are its producer's)
    lib_read = np.zeros(n, bool)
    operand = l_inner & (l_slot < 2)   # a bias is read by the add after the call, not by it
    lib_read[l_src[operand]] = True
    # a dot reading a matrix as it is shares its buffer with an exit; through a reshape (a 3-d operand made
    # 2-d) or a convolution's layout the value is computed again for the library
    rank2 = np.array([len(t.shape or ()) <= 2 for t in flat.types] + [True], bool)[:-1]
    direct = operand & ~is_conv[l_dst] & rank2[flat.tid_of[le]]
    relaid = np.zeros(n, bool)
    relaid[l_src[operand & ~direct]] = True
    mat_read = np.zeros(n, bool)
    if tree.any():
        te = edges_into(flat, tree)[0]
        mat_read[src[te[inner[te]]]] = True
    conc = _codes(flat, {"concat"})
    if any_window:
        # a pooling reads its input through several slices: a concatenation, or another pooling that
        # something else reads too, is materialised for it rather than recomputed per slice
        srcn = flat.src_nodes()
        readers = np.bincount(src[inner], minlength=n)
        mat_read[src[inner & is_window[flat.dst] & (conc[srcn] | (is_window[srcn] & (readers[srcn] > 1)))]] = True
    # bitcasts in a cluster (their edges in edge order) hand their readers' wishes on to their producer
    fe, f_dst = edges_into(flat, kind == K_FREE)
    keep = np.flatnonzero(inner[fe])
    keep = keep[kind[src[fe[keep]]] != K_LIB]
    fe, f_dst = fe[keep], f_dst[keep]
    f_src = src[fe]
    while True:
        more = ((lib_read[f_dst] & ~lib_read[f_src]) | (mat_read[f_dst] & ~mat_read[f_src])
                | (exit_[f_dst] & ~exit_[f_src]))
        if not more.any():
            break
        s, d = f_src[more], f_dst[more]
        relaid[s] |= lib_read[d]
        lib_read[s] |= lib_read[d]
        mat_read[s] |= mat_read[d]
        exit_[s] |= exit_[d]

    channels_last = _channels_last(flat, cluster_of, inner, param_edge, kind, is_conv, is_window | conc)
    if any_window:
        # a local response normalisation that a pooling reads is recomputed per slice: a channels-last
        # value it reads twice (the window sum and the scaling) is then transposed into memory once
        into_pool = np.zeros(n, bool)
        dst, srcn = flat.dst, flat.src_nodes()
        into_pool[src[inner & is_window[dst] & _codes(flat, {"lrn"})[srcn]]] = True
        mat_read[src[inner & into_pool[dst] & channels_last[srcn]]] = True
    cheap = ~_codes(flat, EXPENSIVE)
    shared = exit_ | mat_read
    # a value both a library call and an exit (or a materialising reader) want is written once where it is
    # not cheap to compute again or the call reads it as it is; else once for each (as int8, 0-3, in place:
    # numpy's int64 arithmetic on boolean arrays goes through slow casting loops)
    writes = lib_read.astype(np.int8)
    writes += shared
    writes -= lib_read & shared & (~cheap | ~relaid)
    if channels_last.any() and len(exits):
        n_exits = np.bincount(cluster_of[exits], minlength=int(cluster_of.max()) + 1 if n else 0)
        multi_exit = np.zeros(n, bool)
        multi_exit[clustered] = n_exits[cluster_of[clustered]] > 1
        writes += exits_here & channels_last & multi_exit & ((kind == K_LOOP) | (is_conv & has_bias))
    writes *= out_loop
    per_node += writes
    if any_conv:  # a convolution without a bias add leaving the cluster: its result copied back to the graph's layout
        per_node += is_conv & ~has_bias & exit_
    if any_window:  # a padded pooling writes its padded input first
        per_node += is_window & clustered & _padded(flat, is_window)
    bn = _codes(flat, {"batchnorm"})
    if bn.any():  # BatchNorm's rsqrt(var + eps) on its parameters: one fusion per call
        per_node += bn & clustered
    written = (out_loop & (lib_read | shared)) | (lib & clustered)
    if ynn_roots:
        joins = _elementwise(flat)
        ynn_conv = _ynn_convs(flat, is_conv, l_dst, l_slot, le)
    for j in ynn_roots:  # the convolutions and loop values only the YNNPACK reduction reads join its fusion
        cone = _ynn_cone(flat, j, inner, kind, ynn_conv, exit_, joins)
        per_node[cone] -= np.where(is_conv[cone], 1, writes[cone])   # (writes: 0 outside out_loop)
    return per_node, written


def edges_into(flat: CostView, consumers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edges (in edge order) whose consumer is one of the nodes set in `consumers`, and their consumers:
    read off the nodes' runs of edges (node j's are edge_start[j] on, arity[j] of them), not by a look-up
    per edge."""
    at = np.flatnonzero(consumers)
    count = flat.arity[at]
    edges = np.repeat(flat.edge_start[at] - starts(count), count) + np.arange(int(count.sum()), dtype=np.int64)
    return edges, np.repeat(at, count)


def edge_inner(flat: CostView, cluster_of: np.ndarray) -> np.ndarray:
    """Per edge: whether its producer and consumer are in the same cluster."""
    cd = flat.at_consumer(cluster_of)
    return (flat.src < len(cluster_of)) & (cluster_of[flat.src_nodes()] == cd) & (cd >= 0)


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


def _ynn_convs(flat, is_conv, l_dst, l_slot, le) -> np.ndarray:
    """Convolutions XLA hands to YNNPACK (more than NARROW channels in or out; narrower ones stay Eigen's);
    `l_dst`, `l_slot`: consumer and input slot of the library calls' edges `le`."""
    out = np.zeros(len(is_conv), bool)
    attrs = flat.columns.attrs
    for k in np.flatnonzero(is_conv[l_dst] & (l_slot == 1)).tolist():
        j, shape = int(l_dst[k]), flat.types[flat.tid_of[le[k]]].shape or ()
        group = int(attrs[j].get("group", 1) or 1)
        out[j] = len(shape) >= 2 and all(isinstance(d, int) for d in shape[:2]) and max(shape[0], shape[1] * group) > NARROW
    return out


def _elementwise(flat) -> np.ndarray:
    from ..ops import REGISTRY
    from ..ops.registry import ELEMENTWISE

    ok = [o == "batchnorm" or (o in REGISTRY.ops and ELEMENTWISE in REGISTRY.ops[o].groups) for o in flat.op_names]
    mask = np.array(ok + [False], bool)[:-1][flat.op]
    return mask if flat.all_known else mask & flat.known


def _padded(flat, is_window) -> np.ndarray:
    out = np.zeros(len(is_window), bool)
    for j in np.flatnonzero(is_window).tolist():
        out[j] = any(int(p) for p in (flat.columns.attrs[j].get("pads") or ()))
    return out


def _gemm_transposed(flat, is_gemm, l_dst, l_slot, l_param) -> np.ndarray:
    """Which of the library calls' edges (consumer `l_dst`, input slot `l_slot`) carry a Gemm's transposed
    parameter operand (`l_param`: parameters from outside the cluster), copied on CPU."""
    out = np.zeros(len(l_dst), bool)
    attrs = flat.columns.attrs
    for k in np.flatnonzero(is_gemm[l_dst] & (l_slot < 2) & l_param).tolist():
        out[k] = bool(int(attrs[int(l_dst[k])].get(("transA", "transB")[int(l_slot[k])], 0) or 0))
    return out


def _gemm_output_fused(flat, is_gemm, has_bias, dims, outside) -> np.ndarray:
    """Gemms whose bias add XLA fuses into the dot: one row times a transposed weight from outside the
    cluster (a matrix-vector dot; a weight built in the cluster, a broadcast constant, takes the transpose
    into its broadcast and the dot stays 1xK by KxN)."""
    out = np.zeros(len(is_gemm), bool)
    for j in np.flatnonzero(is_gemm & has_bias).tolist():
        t = flat.types[flat.out0(j)].bind(dims) if flat.out0(j) >= 0 else None
        k = (int(flat.edge_start[j]) if flat.arity[j] > 0 else -1) + 1   # the weight's edge
        mine = int(flat.edge_start[j]) <= k < int(flat.edge_start[j]) + int(flat.arity[j])   # (its consumer is j)
        out[j] = bool(t is not None and t.shape and t.shape[0] == 1 and int(flat.columns.attrs[j].get("transB", 0) or 0)
                      and k < len(outside) and mine and outside[k])
    return out


def _channels_last(flat, cluster_of, inner, param_edge, kind, is_conv, resets) -> np.ndarray:
    """Values XLA computes in the convolutions' channels-last layout: a convolution's result, and a loop
    op all of whose activation operands are such values (a transpose's result likewise needs a layout copy).
    A pooling or a concatenation is laid out for the graph."""
    n = len(cluster_of)
    out = is_conv | _codes(flat, ("transpose",))
    if not out.any():
        return out
    cand = np.flatnonzero((kind == K_LOOP) & (cluster_of >= 0) & ~resets & ~out)
    if not len(cand) or len(cand) > 200_000:
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
