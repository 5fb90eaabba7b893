"""Shape inference: fill every node's output types from its op's rule; file-given types must agree."""
from __future__ import annotations

import os
import sys
from operator import attrgetter

from ..fastpath import FAST_MIN_NODES, use_fast
from ..ir import Graph, TensorType, parse_ref
from ..ir.attrs import attrs_key
from ..ir.columns import NodeColumns
from ..ops import REGISTRY
from .node_rule import CONST_RECORDING, apply_rule, record_const
from .values import VALUE_OPS, node_value

def infer_shapes(graph: Graph, counts: list[int], cols: NodeColumns) -> tuple | None:
    """Fill every node's output types from its op's rule; file-given types must agree. `counts`: each
    node's number of outputs; `cols`: the graph's columns. Returns the big-graph ways' (rid, results) (see
    infer_fast, the compiled walk, for every graph once numba is loaded and the walk cached (_walk_ready);
    else infer_keys, numpy alone, for graphs whose file declares the types and for graphs the walk would
    compile for), None from the reference loop below (graphs under FAST_MIN_NODES; XCVIZ_INFER=reference).

    A rule is a pure function of (op, input types, attributes, declared outputs, output count) when no
    input is a known constant, so its merged result is computed once per distinct key: big graphs repeat
    a few hundred such keys millions of times. Input types are read by position (`cols.src`) from
    `slot`, the output-0 type of every node and the type of every graph input."""
    mode = os.environ.get("XCVIZ_INFER", "auto")
    n = len(graph.nodes)
    st = None
    if mode == "keys" or (mode == "auto" and n >= FAST_MIN_NODES and not _walk_ready(n)):
        from .infer_keys import infer_shapes_keys, well_typed
        from .infer_state import InferState

        st = InferState(graph, counts, cols)
        # numpy alone where the file's types make a good first guess (no numba to import: ~0.7 s), and
        # where the compiled walk would not run (the keys' rounds still beat the Python loop by far)
        first_choice = mode == "keys" or well_typed(st)
        if first_choice or not _walk_pays(n, mode):
            out = infer_shapes_keys(st, budget=4.0 if first_choice and mode == "auto" else 16.0)
            if out is not None:
                return out
            st = None  # (spent)
    if _walk_pays(n, mode):
        from . import infer_fast

        return infer_fast.infer_shapes_fast(graph, counts, cols, st)
    idx = graph.index
    nodes = graph.nodes
    n = len(nodes)
    source = graph.source
    consts: dict[str, object] = {v.name: v.data for v in graph.inputs if v.data is not None}
    in_types = {v.name: v.type for v in graph.inputs}
    cache: dict[tuple, tuple] = {}
    intern = {t: t for t in in_types.values()}.setdefault
    unknown = TensorType()
    slot: list[TensorType] = [unknown] * n + [v.type for v in graph.inputs]
    const_pos = {n + k for k, v in enumerate(graph.inputs) if v.data is not None}
    # a ref with ':' means output k of a node, unless no node name has a ':' (then it is simply not a node)
    get = idx.get if ":" not in "".join(idx) else (lambda ref: None if ":" in ref else idx.get(ref))
    opdef_of = {(name, True): opdef for name, opdef in REGISTRY.ops.items()}
    opdefs = list(map(opdef_of.get, map(attrgetter("op", "known"), nodes)))
    src = cols.src
    pos = 0
    for i, node in enumerate(nodes):
        n_out = counts[i]
        ins = node.inputs
        end = pos + len(ins)
        at = src[pos:end]
        pos = end
        if -1 not in at:  # the common case: every input is a node's output 0 or a graph input
            types = [slot[j] for j in at]
            has_const = bool(const_pos) and not const_pos.isdisjoint(at)
        else:
            types = []
            has_const = False
            for ref in ins:
                j = get(ref)  # a node's output 0 (node and input names never clash)
                if j is not None:
                    t = slot[j]
                elif not ref:
                    types.append(unknown)
                    continue
                else:
                    t = in_types.get(ref)
                    if t is None:
                        name, k = parse_ref(ref)
                        t = nodes[idx[name]].out(k)
                types.append(t)
                if ref in consts:
                    has_const = True
        opdef = opdefs[i]
        if opdef is None:
            given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
            outs = node.outputs = given[:n_out]
            slot[i] = outs[0] if outs else unknown
            continue
        key = None
        if not has_const:
            attrs = node.attrs
            akey = attrs_key(attrs) if attrs else ()
            if akey is not None:
                # input types by identity: results are shared, so few distinct objects flow; the cache
                # entry keeps them alive, so an id is never reused for another type during the loop
                outs = node.outputs
                key = (opdef.name, n_out, akey, tuple(outs) if outs else (), *map(id, types))
                hit = cache.get(key)
                if hit is not None:
                    outs = node.outputs = hit[0].copy()
                    slot[i] = outs[0] if outs else unknown
                    if hit[2]:
                        record_const(node, opdef, types, consts, source)
                        if node.name in consts:
                            const_pos.add(i)
                    continue
        cvals = [consts.get(ref) if ref else None for ref in ins] if has_const else [None] * len(types)
        outs = node.outputs = [intern(t, t) for t in apply_rule(node, opdef, types, cvals, n_out, source)[0]]
        slot[i] = outs[0] if outs else unknown
        if has_const and opdef.name in VALUE_OPS:
            value = node_value(opdef, {**opdef.attrs, **node.attrs}, types, cvals, ins, outs)
            if value is not None:
                consts[node.name] = value
                const_pos.add(i)
        if key is not None:
            cache[key] = (list(outs), types, opdef.name in CONST_RECORDING)
        if opdef.name in CONST_RECORDING:
            record_const(node, opdef, types, consts, source)
            if node.name in consts:
                const_pos.add(i)


def _walk_ready(n: int) -> bool:
    """Is the compiled walk free to start: numba imported already (the JSON scanner imports it for big
    files) and the walk in its cache? Then it runs for every graph, declared types or not: at 10^6 nodes it
    takes ~0.15 s either way, against ~0.2 s for infer_keys on a typed graph and ~1 s on an untyped one
    (a round per type change along a chain). infer_keys runs where the walk would cost numba's import
    (~0.7 s; a YAML or ONNX file, `xcviz.load` alone) or a compile."""
    if not _numba_loaded() or not use_fast(n, "XCVIZ_INFER"):
        return False
    from . import infer_fast

    return infer_fast.cached()


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def _walk_pays(n: int, mode: str) -> bool:
    """Take infer_fast's compiled walk? (imports numba; a cold cache compiles only for big graphs)"""
    if not use_fast(n, "XCVIZ_INFER"):
        return False
    from . import infer_fast

    return mode == "fast" or infer_fast.worth_compiling(n)
