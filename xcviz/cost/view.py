"""The cost model's view of a graph: its columns as edges with type ids, output types by identity."""
from __future__ import annotations

from itertools import chain, compress, repeat
from operator import is_not

import numpy as np

from ..ir import Graph, TensorType
from ..ir.columns import GraphColumns
from ..ops import REGISTRY
from ..ops import rules
from .sums import starts

UNKNOWN = TensorType()  # the type of an output a node does not have

# FLOP rules that read shapes only: attributes cannot change what they give
_SHAPE_ONLY_RULES = frozenset(f.__code__ for f in (rules.zero_flops, rules.output_flops(), rules.input_flops()))


def flops_reads_attrs(op: str) -> bool:
    """Whether a node's attributes can change its cost: only through a FLOP rule that reads them."""
    opdef = REGISTRY.ops.get(op)
    rule = opdef.flops if opdef is not None else None
    return rule is not None and getattr(rule, "__code__", None) not in _SHAPE_ONLY_RULES


class CostView:
    """What the cost model reads of a graph, as integer arrays.

    Edges, one per non-empty input ref in node order then input order (the order results list them):
    producer `src` (a node position, or n + i for graph input i, as the graph's columns have it; see
    `src_nodes` and `inputs_negative`), consumer `dst`, type id `tid_of`, and
    `ref`, the position of the ref among all refs (None: the edge number itself; each node's first is at
    `in_start`). Types are numbered by identity: the loader shares equal types as one object, so a big
    graph has a few hundred. Per node: output type ids (`out_tid`, `n_out` of them from `out_start`), op
    code (`op`, names in `op_names`), `known`, and the positions of the nodes whose attributes can change
    their cost (`with_attrs`)."""

    def __init__(self, graph: Graph) -> None:
        columns = self.columns = graph.columns
        n = len(columns.op)
        self.nodes = columns.nodes.rows  # node j, made on request (a few: the rest is columns)
        self._from_columns(columns, n)
        results, rid = columns.results, columns.rid

        # Output types numbered by object identity (ids sorted), over the distinct results the nodes use (a
        # few hundred: equal results are one object), then handed to the nodes by their result id.
        res_len = np.fromiter(map(len, results), np.int64, len(results))
        used = np.flatnonzero(np.bincount(rid, minlength=len(results))).tolist() if n else []
        objs = {id(t): t for r in used for t in results[r]}
        distinct = sorted(objs)
        self.types: list[TensorType] = [objs[i] for i in distinct]
        self._tid = dict(zip(distinct, range(len(distinct))))  # self.types keeps the ids valid
        unknown = self.tid(UNKNOWN)
        # (type ids as int32: a few hundred, in per-edge and per-node arrays that are read, never indexed by)
        res_tid = np.fromiter((self._tid.get(id(t), -1) for r in results for t in r), np.int32, int(res_len.sum()))
        self.one_output = bool(len(results)) and bool((res_len == 1).all())
        if self.one_output:  # (one output each, the usual graph: no run offsets, n_out and out_start on request)
            self._n_out = self._out_start = None
            self.out_tid = out0 = res_tid[rid]   # (each node's output 0)
        else:
            res_at = starts(res_len)   # result r's types: res_tid[res_at[r]:][:res_len[r]]
            self._n_out = res_len[rid]
            self._out_start = starts(self._n_out)
            total = int(self._n_out.sum())
            within = np.arange(total) - np.repeat(self._out_start, self._n_out)
            self.out_tid = res_tid[np.repeat(res_at[rid], self._n_out) + within]
            out0 = np.append(np.where(res_len > 0, res_tid[np.minimum(res_at, max(len(res_tid) - 1, 0))]
                                      if len(res_tid) else unknown, unknown), unknown)[rid]  # each node's output 0

        # The edges: the graph's refs as positions, resolved once and kept by the graph (the loader seeds
        # them), so no name is looked up here. They read refs as costs always did (a plain ref names a node
        # before an input of the same name; a ref with ':' an input before 'name:k'), but for two cases
        # only hand-built graphs have, set right below: of inputs with the same name, costs read the last;
        # '' is an absent input even where a node or input has that name.
        pos, port, lens = columns.src, columns.port, columns.lens
        in_pos = {v.name: i for i, v in enumerate(graph.inputs)}  # the last of equal names, as a dict has it
        in_tid = np.array([self.tid(v.type) for v in graph.inputs], np.int32)
        if len(in_pos) < len(graph.inputs):
            last = np.array([n + in_pos[v.name] for v in graph.inputs], np.int64)
            pos = np.where(pos >= n, last[np.clip(pos - n, 0, len(last) - 1)], pos)
        if "" in in_pos or graph.position("") is not None:
            pos = pos.copy()
            pos[[k for k, r in enumerate(chain.from_iterable(columns.column("inputs"))) if not r]] = -1
        self.in_start = starts(lens)
        self.ref = None
        if (pos < 0).any():  # absent inputs are no edges
            keep = pos >= 0
            self.ref = np.flatnonzero(keep)
            pos, port = pos[keep], port[keep]
        # type of each edge: one look-up in a table of nodes then inputs
        tid = np.concatenate((out0, in_tid))[pos]
        if port.any():
            for e in np.flatnonzero(port).tolist():  # output k > 0 of a node
                produced, k = results[int(rid[pos[e]])], int(port[e])
                tid[e] = self.tid(produced[k]) if k < len(produced) else unknown
            port = np.where(pos >= n, 0, port)
        self.src, self.tid_of, self.port = pos, tid, port
        self.arity = lens if self.ref is None else \
            np.bincount(np.repeat(np.arange(n, dtype=np.int64), lens)[self.ref], minlength=n)
        self.edge_start = self.in_start if self.ref is None else starts(self.arity)
        # (node j's edges: edge_start[j] on, arity[j] of them; edges are in node order)
        self._dst: np.ndarray | None = None

    @property
    def n_out(self) -> np.ndarray:
        """Per node, its number of outputs (their type ids are out_tid[out_start[j]:][:n_out[j]])."""
        if self._n_out is None:
            self._n_out = np.ones(len(self.out_tid), np.int64)
        return self._n_out

    @property
    def out_start(self) -> np.ndarray:
        if self._out_start is None:
            self._out_start = np.arange(len(self.out_tid), dtype=np.int64)
        return self._out_start

    def out0(self, j: int) -> int:
        """The type id of node j's output 0, or -1 where it has none."""
        if self.one_output:
            return int(self.out_tid[j])
        return int(self.out_tid[self._out_start[j]]) if self._n_out[j] else -1

    @property
    def dst(self) -> np.ndarray:
        """Per edge, its consumer (made on first use: the hot paths read `at_consumer` instead)."""
        if self._dst is None:
            self._dst = self.at_consumer(np.arange(len(self.arity), dtype=np.int64))
        return self._dst

    def at_consumer(self, per_node: np.ndarray) -> np.ndarray:
        """Per edge, its consumer's entry of a per-node array (a run per node: no look-up per edge)."""
        return np.repeat(per_node, self.arity)

    def src_nodes(self, src: np.ndarray | None = None) -> np.ndarray:
        """Producers (of all edges, or of `src`) as positions to index per-node arrays by: a graph input's
        edge reads the last node, so only for edges a mask keeps to producing nodes (inner edges)."""
        return np.minimum(self.src if src is None else src, max(len(self.arity) - 1, 0))

    def _from_columns(self, table: GraphColumns, n: int) -> None:
        """op, op_names, known and with_attrs from the graph's columns, without visiting the nodes."""
        op, self.op_names = table.codes("op")  # codes in order of first appearance
        self.op = op.astype(np.intp)  # (numpy casts any other index array once per look-up it indexes)
        reading = {name for name in self.op_names if flops_reads_attrs(name)}
        known_id, known = table.codes("known")
        self.known = np.full(n, bool(known[0])) if len(known) == 1 else np.array([bool(k) for k in known], bool)[known_id]
        self.all_known = all(map(bool, known))
        attrs = table.attrs
        # the loader's codes of the attribute dicts (passes.columns.attr_codes: equal code, equal dict), if any
        self.attr_codes = table.extra.get(("attrs", "codes"))
        if self.attr_codes is not None:  # (and attributes set), by code: no dict read per node
            code, reps = self.attr_codes
            set_ = np.array([bool(r) for r in reps] + [False], bool)[:-1]
            maybe = np.flatnonzero(self.op_mask(reading)) if reading else np.zeros(0, np.int64)
            self.with_attrs = maybe[set_[code[maybe]]].tolist()   # (codes read for those nodes only)
            return
        maybe = np.flatnonzero(self.op_mask(reading)).tolist() if reading else []
        # (and attributes set): nodes without share one empty dict in a loaded graph, told apart by identity
        # first, without reading 10^5 dicts scattered in memory
        empty = next((a for a in map(attrs.__getitem__, maybe[:64]) if not a), None)
        if empty is not None:
            maybe = list(compress(maybe, map(is_not, map(attrs.__getitem__, maybe), repeat(empty))))
        self.with_attrs = list(compress(maybe, map(attrs.__getitem__, maybe)))

    def op_mask(self, names) -> np.ndarray:
        """Per node: whether its op name is one of `names` (an opaque op of that name too: `& known` for
        registry ops only)."""
        codes = [k for k, o in enumerate(self.op_names) if o in names]
        if len(codes) > 4:  # a look-up per node (no sort)
            return np.array([o in names for o in self.op_names] + [False], bool)[self.op]
        mask = np.zeros(len(self.op), bool)
        for k in codes:  # (for a few ops, a comparison of codes per op is cheaper than a look-up per node)
            mask |= self.op == k
        return mask

    def known_mask(self, names) -> np.ndarray:
        """Per node: whether it is a registry op named in `names` (op_mask & known, without the pass over
        the nodes where every op is known)."""
        mask = self.op_mask(names)
        return mask if self.all_known else mask & self.known

    def tid(self, t: TensorType) -> int:
        k = self._tid.get(id(t))
        if k is None:
            k = self._tid[id(t)] = len(self.types)
            self.types.append(t)
        return k


def inputs_negative(src: np.ndarray, n: int) -> np.ndarray:
    """Producers with graph input i as -1 - i (the public form of Edge and the cost strategy), in place."""
    np.subtract(n - 1, src, out=src, where=src >= n)
    return src
