"""A graph's node fields as columns in node order, with every data input flattened (made once per graph)."""
from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING

import numpy as np

from . import plain_positions

if TYPE_CHECKING:
    from . import Graph

_EMPTY_DICT: dict = {}  # placeholders in the columns only (never handed to a node)
_EMPTY_LIST: list = []


class NodeColumns:
    """The node fields the checks and shape inference read, as columns taken in one pass over the nodes
    (each pass over 10^6 node objects costs 0.1-0.2 s in cache misses alone), with every data input
    flattened.

    `src[k]` is the position of what `refs[k]` names: a node (its output 0), n + i for graph input i, or
    -1 for anything else (an empty optional input, a ':k' output, an undefined name). `op` and `known`
    follow the nodes' (see read_ops)."""

    def __init__(self, graph: "Graph") -> None:
        nodes = graph.nodes
        self._src_array = self._lens_array = None
        if graph._flat is not None:  # the loader's, made on its way through the nodes
            self.refs, self.src, self.lens, op_types, special = graph._flat
            graph._flat = None
            # nodes outside `special` are just name, op and inputs: every other field is its default
            n = len(nodes)
            self.op_type, self.op = op_types, list(op_types)
            self.note, self.known = [None] * n, [True] * n
            self.attrs, self.declared, self.control = [_EMPTY_DICT] * n, [_EMPTY_LIST] * n, [()] * n
            for i in special:
                node = nodes[i]
                self.attrs[i], self.declared[i], self.control[i] = node.attrs, node.outputs, node.control_inputs
            return
        per_node, self.op_type, self.note, self.attrs, self.declared, self.control, self.op, self.known = (
            list(map(attrgetter(f), nodes))
            for f in ("inputs", "op_type", "note", "attrs", "outputs", "control_inputs", "op", "known"))
        self.lens = list(map(len, per_node))
        self.refs = list(chain.from_iterable(per_node))
        self.src = plain_positions(graph, self.refs)

    @property
    def src_array(self) -> np.ndarray:
        if self._src_array is None:
            self._src_array = np.array(self.src, np.int64)
        return self._src_array

    @property
    def lens_array(self) -> np.ndarray:
        if self._lens_array is None:
            self._lens_array = np.array(self.lens, np.int64)
        return self._lens_array

    def read_ops(self, graph: "Graph") -> None:
        """Take `op` and `known` from the nodes again (after op resolution wrote them node by node)."""
        self.op = list(map(attrgetter("op"), graph.nodes))
        self.known = list(map(attrgetter("known"), graph.nodes))
