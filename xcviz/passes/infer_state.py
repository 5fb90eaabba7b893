"""The shape-inference walk's state (infer.py): integer columns, type ids, one node's step in Python.

Positions: nodes 0..n-1 (their output 0), then graph inputs n..n+m-1. A type id names a type object (by
identity; results are interned by value, so equal types have one id); `results[rid[j]]` are node j's
output types. `static[j]` is node j's key apart from its input types: (op, output count, attributes,
declared outputs) as one integer, equal for equal keys, -1 where a rule cannot be keyed (an opaque op,
an attribute holding a container); see static_ids.
"""
from __future__ import annotations

import msgspec
import numpy as np

from ..ir import Graph, TensorType, parse_ref
from ..ir.attrs import attrs_key
from .columns import NodeColumns
from ..ops import REGISTRY
from .node_rule import CONST_RECORDING, apply_rule, record_const
from .values import VALUE_OPS, may_have_value, node_value


class InferState:
    """The graph's columns and the values shape inference works out, for one run over one graph."""

    def __init__(self, graph: Graph, counts: list[int], cols: NodeColumns) -> None:
        seq = graph.nodes
        self.nodes = seq.rows  # (nodes not yet made are made one at a time, for the few run in Python)
        self.counts = counts
        self.graph, self.n, self.m = graph, len(seq), len(graph.inputs)
        n, m = self.n, self.m
        self.source = graph.source
        self.unknown = TensorType()
        self.base_consts = {v.name: v.data for v in graph.inputs if v.data is not None}
        self.consts = dict(self.base_consts)
        self.in_types = {v.name: v.type for v in graph.inputs}
        self.intern = {t: t for t in self.in_types.values()}.setdefault
        self.type_list: list[TensorType] = []  # (keeps every object alive: ids are never reused)
        self._tid_of: dict[int, int] = {}
        self.tid = np.full(n + m, -1, np.int64)
        self.tid[n:] = [self.type_id(v.type) for v in graph.inputs]
        self.ccap = np.zeros(n + m, np.bool_)  # may carry a constant value
        self.ccap[n:] = [v.data is not None for v in graph.inputs]
        # op codes: the registry's ops first, then any opaque op name
        op_code = {name: c for c, name in enumerate(REGISTRY.ops)}
        coded = cols.field_codes.get("op")  # (the loader's codes of the resolved ops: no pass over 10^6 names)
        if coded is not None:
            raw, names, _ = coded
            self.opc = np.array([op_code.setdefault(name, len(op_code)) for name in names], np.int64)[raw]
        else:
            ops = cols.op
            try:
                self.opc = np.fromiter(map(op_code.__getitem__, ops), np.int64, n)
            except KeyError:  # an opaque op: codes after the registry's
                self.opc = np.array(list(map(op_code.setdefault, ops, range(len(op_code), len(op_code) + n))),
                                    np.int64)
        valued = np.zeros(max(len(op_code), int(self.opc.max()) + 1 if n else 0), np.bool_)
        valued[[op_code[name] for name in CONST_RECORDING | VALUE_OPS]] = True
        self.ccap[:n] = valued[self.opc]
        self.lens = cols.lens_array
        self.off = np.zeros(n + 1, np.int64)
        np.cumsum(self.lens, out=self.off[1:])
        self.src = cols.src_array
        self.refs = cols.refs
        self.counts_a = np.ones(n, np.int64) if counts.count(1) == n else np.fromiter(counts, np.int64, n)
        self.static = static_ids(self.opc, self.counts_a, cols)
        self.declared = cols.declared_codes
        self.known_a = None
        if False in cols.known:
            self.known_a = np.array(cols.known, np.bool_)
            self.static[~self.known_a] = -1
            self.ccap[:n] &= self.known_a
        self.opdefs = {(name, True): opdef for name, opdef in REGISTRY.ops.items()}
        self.results: list[list[TensorType]] = []
        self.rid = np.full(n, -1, np.int64)
        self.done_const: set[int] = set()
        self.position = graph.lookup()  # (names are looked up only for ':k' refs and constant values)

    def type_id(self, t: TensorType) -> int:
        k = self._tid_of.get(id(t))
        if k is None:
            k = self._tid_of[id(t)] = len(self.type_list)
            self.type_list.append(t)
        return k

    def out_of(self, j: int, k: int) -> TensorType:
        outs = self.results[self.rid[j]] if self.rid[j] >= 0 else self.nodes[j].outputs
        return outs[k] if k < len(outs) else TensorType()

    def input_types(self, i: int) -> list[TensorType]:
        """Node i's input types: output 0 of a node or a graph input by its type id, others ('k', '') by name."""
        out = []
        a, b = int(self.off[i]), int(self.off[i + 1])
        type_list, tid = self.type_list, self.tid
        for k, j in zip(range(a, b), self.src[a:b].tolist()):
            if j >= 0:
                out.append(type_list[tid[j]])
                continue
            ref = self.refs[k]
            if not ref:
                out.append(self.unknown)
            else:
                t = self.in_types.get(ref)
                if t is None:
                    name, p = parse_ref(ref)
                    t = self.out_of(self.position(name), p)
                out.append(t)
        return out

    def const_of(self, ref: str):
        """The constant value `ref` carries, or None; shape/const nodes and the value ops fed by them
        (values.py) are worked out on first use, producers first (a loop, not recursion: chains are long)."""
        consts = self.consts
        if ref in consts or ":" in ref:
            return consts.get(ref)
        position, ccap, done, rid, results = self.position, self.ccap, self.done_const, self.rid, self.results
        j = position(ref)
        stack = [j] if j is not None and j not in done and ccap[j] else []
        while stack:
            k = stack[-1]
            node = self.nodes[k]
            opdef = self.opdefs[(node.op, True)]
            outs = results[rid[k]]
            if opdef.name in VALUE_OPS and not (outs and may_have_value(outs[0])):
                stack.pop()  # a float or large tensor: no value, and no need to look at its producers
                done.add(k)
                continue
            pending = [p for p in map(position, node.inputs) if p is not None and ccap[p] and p not in done] \
                if opdef.name in VALUE_OPS else []
            if pending:
                stack += pending
                continue
            stack.pop()
            if k in done:
                continue
            done.add(k)
            if opdef.name in CONST_RECORDING:
                self.record(node, outs, opdef, self.input_types(k), consts)
                continue
            cvals = [consts.get(r) if r else None for r in node.inputs]
            if any(v is not None for v in cvals):
                v = node_value(opdef, {**opdef.attrs, **node.attrs}, self.input_types(k), cvals, node.inputs, outs)
                if v is not None:
                    consts[node.name] = v
        return consts.get(ref)

    def record(self, node, outs: list[TensorType], opdef, types: list[TensorType], consts: dict) -> None:
        """record_const with the node's inferred outputs (on a copy of the node: its own outputs are the
        file's declared types, which a later evaluation of the same node reads)."""
        record_const(msgspec.structs.replace(node, outputs=outs), opdef, types, consts, self.source)

    def run(self, i: int) -> tuple[list[TensorType], bool, bool, list[TensorType]]:
        """Node i as infer_shapes runs it, from the current types and constant values: (its outputs,
        whether its rule read a constant, whether it had one, its input types). A shape or const node
        records its value at once (a bad const value is an error here)."""
        node = self.nodes[i]
        n_out = self.counts[i]
        tys = self.input_types(i)
        # (a ref to a node that never carries a value needs no name look-up)
        a, ccap, consts = int(self.off[i]), self.ccap, self.consts
        cvals = [None if not ref or (j >= 0 and not ccap[j] and ref not in consts) else self.const_of(ref)
                 for ref, j in zip(node.inputs, self.src[a:a + len(node.inputs)].tolist())]
        has_const = any(v is not None for v in cvals)
        opdef = self.opdefs.get((node.op, node.known))
        read_consts = False
        if opdef is None:
            given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
            outs = given[:n_out]
        else:
            outs, read_consts = apply_rule(node, opdef, tys, cvals if has_const else [None] * len(tys), n_out,
                                           self.source)
            intern = self.intern
            outs = [intern(t, t) for t in outs]
        if opdef is not None and opdef.name in CONST_RECORDING and i not in self.done_const:
            self.done_const.add(i)
            self.record(node, outs, opdef, tys, self.consts)
        return outs, read_consts, has_const, tys


def static_ids(opc: np.ndarray, counts: np.ndarray, cols: NodeColumns) -> np.ndarray:
    """Each node's static id from its op code, its output count, its attribute code and its declared
    outputs' code, at C speed: small integers, equal for equal keys (by value, as the Python loop's cache
    key compares them: equal types may be distinct objects, and attrs_key keeps 1, 1.0 and True apart);
    -1 for attributes attrs_key cannot key (a container value). Nodes that declare one output type and
    have no attributes (every node of an exported model) are told apart by the type alone."""
    if not len(opc):
        return np.zeros(0, np.int64)
    acode, reps = cols.attr_codes
    dcode, lists = cols.declared_codes
    cmax = int(counts.max())
    if cmax == int(counts.min()):  # (one output count throughout: the op alone)
        base, space = opc, int(opc.max()) + 1
    else:
        base, space = opc * (cmax + 1) + counts, (int(opc.max()) + 1) * (cmax + 1)
    # the declared type of a one-output node by value (-1: declares none, -2: several)
    by_value: dict = {}
    vcode = np.array([by_value.setdefault(t[0], len(by_value)) if len(t) == 1 else (-2 if t else -1)
                      for t in lists], np.int64)[dcode]
    width = len(by_value) + 1
    if space * width > DENSE_LIMIT:
        base, _, space = dense(base, space, reps=False)
    plain = acode == 0
    static, _, top = dense(base * width + np.where(plain, vcode + 1, 0), space * width, reps=False)
    rest = np.flatnonzero(~plain | (vcode == -2))
    if not len(rest):
        return static
    # distinct (base, attribute code, declared code) triples, one column at a time (products stay small)
    inverse, space = np.zeros(len(rest), np.int64), 1
    for col in (base[rest], acode[rest], dcode[rest]):
        width = int(col.max()) + 1
        inverse, first, space = dense(inverse * width + col, space * width)
    akeys = [()] + [attrs_key(a) for a in reps[1:]]
    code: dict = {}
    ids = [-1 if akeys[acode[j]] is None
           else top + code.setdefault((base[j], akeys[acode[j]], tuple(lists[dcode[j]])), len(code))
           for j in rest[first].tolist()]
    static[rest] = np.array(ids, np.int64)[inverse]
    return static


DENSE_LIMIT = 1 << 22  # value ranges up to this size are made dense with a table, larger ones by sorting


def dense(code: np.ndarray, space: int, reps: bool = True) -> tuple[np.ndarray, np.ndarray | None, int]:
    """(inverse, representative, count) of integer codes in [0, space): code[i] == unique[inverse[i]],
    code[representative[u]] == unique[u] (the order of `unique` is the codes' order; no representatives
    unless `reps`)."""
    if space <= DENSE_LIMIT:
        if reps:
            seen = np.full(space, -1, np.int64)
            seen[code] = np.arange(len(code), dtype=np.int64)
            u = np.flatnonzero(seen >= 0)
        else:
            mark = np.zeros(space, np.bool_)
            mark[code] = True
            u = np.flatnonzero(mark)
        lut = np.empty(space, np.int64)
        lut[u] = np.arange(len(u), dtype=np.int64)
        return lut[code], seen[u] if reps else None, len(u)
    _, rep, inv = np.unique(code, return_index=True, return_inverse=True)
    return inv.reshape(-1), rep, len(rep)
