"""Shape inference: fill every node's output types from its op's rule; file-given types must agree.

One way for every graph: a compiled walk over integer type ids (infer_walk, Cython, built at install). A
node's outputs are a pure function of its key, (op, output count, scalar attributes, declared outputs) as a
static id plus the type ids of its inputs, unless its rule reads a constant input. The kernel walks the
nodes in order and gives each node the result its key already has; it stops at the first node whose key is
new or that needs Python (an opaque op, a ':k' or empty input, container attributes, more than MAX_INPUTS
inputs, a constant input to a rule that reads constants). Python runs that node (InferState.run), records
the result, and the walk resumes. Constant values (shape and const nodes, and the value ops of values.py)
are worked out only when a rule asks for them. The node-by-node loop of infer_reference.py is the
executable spec: same results (tests/passes/test_infer_matches_reference.py)."""
from __future__ import annotations

import numpy as np

from ..ir import Graph, TensorType
from .columns import NodeColumns
from .infer_state import InferState

try:
    from . import infer_walk
except ImportError as e:  # (a source checkout that was never built)
    raise ImportError(f"xcviz's compiled shape-inference walk is not built ({e}): run `pip install -e .` "
                      "(or `python setup.py build_ext --inplace`) in the checkout") from e

MAX_INPUTS = 8  # inputs of a key the kernel compares; nodes with more go through Python


def infer_shapes(graph: Graph, counts: list[int], cols: NodeColumns) -> tuple[np.ndarray, list[list[TensorType]]]:
    """Fill every node's output types from its op's rule; file-given types must agree. `counts`: each
    node's number of outputs; `cols`: the graph's columns. Returns (rid, results): node j's outputs are a
    copy of results[rid[j]], the same type objects."""
    st = InferState(graph, counts, cols)
    n, static, off, src, tid, rid, results = st.n, st.static, st.off, st.src, st.tid, st.rid, st.results
    ccap = st.ccap.view(np.uint8)
    static[st.lens > MAX_INPUTS] = -1
    cap = 64 if n < 4096 else 1024
    res_tid0 = np.zeros(cap, np.int64)
    res_readc = np.zeros(cap, np.uint8)
    keys = np.full((cap, 2 + MAX_INPUTS), -1, np.int64)
    HK = np.full(2 * cap, -1, np.int64)  # hash table: key hashes -> result ids (HV)
    HV = np.full(2 * cap, -1, np.int64)
    used = 0
    i = 0
    while True:
        i = infer_walk.walk(i, n, static, off, src, tid, rid, res_tid0, res_readc, ccap, keys, HK, HV)
        if i >= n:
            break
        outs, read_consts, has_const, _ = st.run(i)
        r = len(results)
        if r == cap:
            cap *= 2
            res_tid0 = np.resize(res_tid0, cap)
            res_readc = np.resize(res_readc, cap)
            keys = np.concatenate((keys, np.full_like(keys, -1)))
        results.append(outs)
        res_tid0[r] = st.type_id(outs[0] if outs else st.unknown)
        res_readc[r] = read_consts
        rid[i] = r
        tid[i] = res_tid0[r]
        s = int(static[i])
        at = src[off[i]:off[i + 1]]
        if s >= 0 and (at >= 0).all() and not (has_const and read_consts):
            in_tids = tid[at]
            h = infer_walk.key_hash(s, in_tids)
            slot = infer_walk.find(HK, h)
            if HK[slot] == -1:
                HK[slot], HV[slot] = h, r
                keys[r, 0], keys[r, 1] = s, len(at)
                keys[r, 2:2 + len(at)] = in_tids
                used += 1
                if 2 * used > len(HK):
                    HK, HV = infer_walk.rehash(HK, HV, 2 * len(HK))
        i += 1
    return st.rid, st.results  # (node j's outputs are results[rid[j]]: passes.prepare makes them the new nodes')
