"""The reference shape inference: one node at a time, in order, each rule run once per distinct key.

The executable spec of infer.infer_shapes (the compiled walk, which production runs): tests load graphs
both ways and compare every node's types, or the error (tests/passes/test_infer_matches_reference.py)."""
from __future__ import annotations

from operator import attrgetter

import msgspec
import numpy as np

from ..ir import Graph, TensorType, parse_ref
from ..ir.attrs import attrs_key
from .columns import NodeColumns
from ..ops import REGISTRY
from .node_rule import CONST_RECORDING, apply_rule, record_const
from .values import VALUE_OPS, node_value


def infer_shapes(graph: Graph, counts: list[int], cols: NodeColumns) -> tuple[np.ndarray, list]:
    """Every node's output types from its op's rule; file-given types must agree. `counts`: each node's
    number of outputs; `cols`: the graph's columns. Returns (rid, results) as infer.infer_shapes does (here
    rid[j] = j: node j's outputs are results[j]).

    A rule is a pure function of (op, input types, attributes, declared outputs, output count) when no
    input is a known constant, so its merged result is computed once per distinct key. Input types are
    read by position (`cols.src`) from `slot`, the output-0 type of every node and the type of every
    graph input."""
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
    inferred: list = [None] * n  # each node's output types (the graph's nodes hold the declared ones)
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
                        outs_of = inferred[idx[name]]
                        t = outs_of[k] if k < len(outs_of) else TensorType()
                types.append(t)
                if ref in consts:
                    has_const = True
        opdef = opdefs[i]
        if opdef is None:
            given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
            outs = inferred[i] = given[:n_out]
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
                    outs = inferred[i] = hit[0].copy()
                    slot[i] = outs[0] if outs else unknown
                    if hit[2]:
                        record_const(msgspec.structs.replace(node, outputs=outs), opdef, types, consts, source)
                        if node.name in consts:
                            const_pos.add(i)
                    continue
        cvals = [consts.get(ref) if ref else None for ref in ins] if has_const else [None] * len(types)
        outs = inferred[i] = [intern(t, t) for t in apply_rule(node, opdef, types, cvals, n_out, source)[0]]
        slot[i] = outs[0] if outs else unknown
        if has_const and opdef.name in VALUE_OPS:
            value = node_value(opdef, {**opdef.attrs, **node.attrs}, types, cvals, ins, outs)
            if value is not None:
                consts[node.name] = value
                const_pos.add(i)
        if key is not None:
            cache[key] = (list(outs), types, opdef.name in CONST_RECORDING)
        if opdef.name in CONST_RECORDING:
            record_const(msgspec.structs.replace(node, outputs=outs), opdef, types, consts, source)
            if node.name in consts:
                const_pos.add(i)
    return np.arange(n, dtype=np.int64), inferred
