"""Turn a freshly read Graph into a verified one: resolve ops, check references, order, infer shapes."""
from __future__ import annotations

import os
from itertools import chain, compress
from operator import attrgetter
from typing import Mapping

import numpy as np

from ..errors import XcvizError, did_you_mean
from ..ir import DTYPE_SIZES, Graph, Node, TensorType, node_where, parse_ref, plain_positions, topo_order
from ..ops import REGISTRY
from ..ops.rules import Ctx, ShapeError, fmt


def _resolve_ops(graph: Graph, allow_unknown: bool, onnx: bool, cols: _Refs) -> None:
    """Canonical op names, arity and attribute types. Checked per distinct (op, arity) and only on nodes
    with attributes; on any doubt the node-by-node loop runs, so the first bad node is the one reported."""
    nodes = graph.nodes
    op_types = cols.op_type
    opdefs = {t: REGISTRY.get(t) for t in set(op_types)}
    if (any(cols.note) or (None in opdefs.values() and not (allow_unknown or onnx)) or cols.op != op_types
            or False in cols.known):
        _resolve_ops_each(graph, allow_unknown, onnx)
        return cols.read_ops(graph)
    for t, n_in in set(zip(op_types, cols.lens)):
        opdef = opdefs[t]
        if opdef is not None and (n_in < opdef.min_inputs or (opdef.max_inputs is not None and n_in > opdef.max_inputs)):
            _resolve_ops_each(graph, allow_unknown, onnx)
            return cols.read_ops(graph)
    try:
        for i in compress(range(len(nodes)), cols.attrs):
            opdef = opdefs[op_types[i]]
            if opdef is not None:
                _check_attr_types(nodes[i], opdef.attrs, graph.source)
    except XcvizError:
        _resolve_ops_each(graph, allow_unknown, onnx)
        return cols.read_ops(graph)
    renamed = {t for t, d in opdefs.items() if d is not None and d.name != t}
    unknown = {t for t, d in opdefs.items() if d is None}
    if renamed or unknown:
        canon = {t: opdefs[t].name for t in renamed}
        for i in [i for i, t in enumerate(op_types) if t in renamed or t in unknown]:
            node, t = nodes[i], op_types[i]
            if t in renamed:
                node.op = cols.op[i] = canon[t]
            else:
                node.known = cols.known[i] = False
                node.note = f"no XLA lowering in xcviz for {t}" if onnx else f"unknown op {t}"


def _resolve_ops_each(graph: Graph, allow_unknown: bool, onnx: bool) -> None:
    opdefs: dict[str, object] = {}  # op_type -> OpDef or None, resolved once per load (not per node)
    arity_ok: set[tuple[str, int]] = set()
    for node in graph.nodes:
        if node.note:
            opdef = None
        else:
            op_type = node.op_type
            opdef = opdefs.get(op_type, _UNSEEN)
            if opdef is _UNSEEN:
                opdef = opdefs[op_type] = REGISTRY.get(op_type)
        if opdef is not None:
            node.op = opdef.name
            n_in = len(node.inputs)
            if (node.op_type, n_in) not in arity_ok:
                if n_in < opdef.min_inputs or (opdef.max_inputs is not None and n_in > opdef.max_inputs):
                    want = (f"{opdef.min_inputs}" if opdef.max_inputs == opdef.min_inputs
                            else f"{opdef.min_inputs}..{opdef.max_inputs if opdef.max_inputs is not None else 'n'}")
                    raise XcvizError(f"{node.op_type} takes {want} inputs, got {n_in}",
                                     where=node_where(node, graph.source), hint=opdef.doc or "see `xcviz ops`")
                arity_ok.add((node.op_type, n_in))
            if node.attrs:
                _check_attr_types(node, opdef.attrs, graph.source)
            continue
        node.known = False
        if onnx:
            node.note = node.note or f"no XLA lowering in xcviz for {node.op_type}"
        elif allow_unknown:
            node.note = f"unknown op {node.op_type}"
        else:
            REGISTRY.lookup(node.op_type, where=node_where(node, graph.source))  # raises with a did-you-mean


_UNSEEN = object()


def _check_attr_types(node: Node, defaults: dict, source: str | None) -> None:
    for key, value in node.attrs.items():
        default = defaults.get(key)
        if default is None or value is None:
            continue
        ok = True
        if isinstance(default, bool) or isinstance(default, int):
            ok = isinstance(value, (int, bool, np.integer))
        elif isinstance(default, float):
            ok = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
        elif isinstance(default, str):
            ok = isinstance(value, str)
        if not ok:
            raise XcvizError(f"attribute {key!r} must be {type(default).__name__}, got {type(value).__name__} {value!r}"[:300],
                             where=node_where(node, source), hint=f"e.g. {key}: {default!r}")


def _num_outputs(graph: Graph, cols: _Refs) -> list[int]:
    """How many outputs each node has: the op's fixed count, else as declared or referenced."""
    referenced: dict[int, int] = {}
    idx = graph.index
    refs = cols.refs
    colon = [r for r in chain(refs, graph.outputs) if ":" in r] if ":" in "".join(refs) + "".join(graph.outputs) else ()
    for ref in colon:  # output 0 never raises a count above the minimum of 1
        name, k = parse_ref(ref)
        i = idx.get(name)
        if i is not None and k + 1 > referenced.get(i, 0):
            referenced[i] = k + 1
    fixed_of = {name: opdef.num_outputs for name, opdef in REGISTRY.ops.items()}
    counts = list(map(fixed_of.get, cols.op))  # None: not fixed (or unknown op)
    if False in cols.known:  # an opaque op may share a name with a registry op
        for i in [i for i, k in enumerate(cols.known) if not k]:
            counts[i] = None
    declared = cols.declared
    for i in [i for i, c in enumerate(counts) if c is None]:
        counts[i] = max(len(declared[i]), referenced.get(i, 0), 1)
    return counts


_EMPTY_DICT: dict = {}  # placeholders in the columns only (never handed to a node)
_EMPTY_LIST: list = []


class _Refs:
    """The node fields the checks and shape inference read, as columns taken in one pass over the nodes
    (each pass over 10^6 node objects costs 0.1-0.2 s in cache misses alone), with every data input
    flattened.

    `src[k]` is the position of what `refs[k]` names: a node (its output 0), n + i for graph input i, or
    -1 for anything else (an empty optional input, a ':k' output, an undefined name). `op` and `known`
    are filled by _resolve_ops."""

    def __init__(self, graph: Graph) -> None:
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

    def read_ops(self, graph: Graph) -> None:
        self.op = list(map(attrgetter("op"), graph.nodes))
        self.known = list(map(attrgetter("known"), graph.nodes))


def _check_refs(graph: Graph, counts: list[int], refs: _Refs) -> list[list[int]] | None:
    """Every reference names a node output in range or a graph input; returns predecessor lists, or None
    when the nodes are known to be in topological order already."""
    idx = graph.index
    if len(idx) != len(graph.nodes):
        seen: set[str] = set()
        for node in graph.nodes:
            if node.name in seen:
                raise XcvizError(f"duplicate node name {node.name!r}", where=node_where(node, graph.source), hint="node names must be unique")
            seen.add(node.name)
    input_names = set()
    for v in graph.inputs:
        if v.name in input_names:
            raise XcvizError(f"duplicate graph input {v.name!r}", where=graph.source, hint="graph input names must be unique")
        input_names.add(v.name)
        if v.name in idx:
            raise XcvizError(f"{v.name!r} is both a graph input and a node",
                             where=node_where(graph.node(v.name), graph.source), hint="rename one of them")
    if not _refs_plain_and_ordered(graph, counts, refs):
        return _check_node_refs(graph, counts, input_names)
    _check_graph_outputs(graph, counts, input_names)
    return None


def _refs_plain_and_ordered(graph: Graph, counts: list[int], refs: _Refs) -> bool:
    """True when every data input is an empty ref, a graph input, or output 0 of an earlier node with
    outputs (and there are no control inputs): the common case, checked on arrays. Anything else (a
    ':k' ref, a bad ref, an unordered graph) is left to the node-by-node checks and their messages."""
    nodes = graph.nodes
    n = len(nodes)
    if "" in graph.index or any(refs.control):
        return False
    src = refs.src_array
    dst = np.repeat(np.arange(n, dtype=np.int64), refs.lens_array)
    missing = np.flatnonzero(src < 0)
    if len(missing) and any([refs.refs[k] for k in missing.tolist()]):  # only '' (absent) may be missing
        return False
    keep = (src >= 0) & (src < n)  # node outputs (graph inputs always come first)
    src, dst = src[keep], dst[keep]
    return bool((src < dst).all() and (np.array(counts, np.int64)[src] > 0).all()) if len(src) else True


def _check_node_refs(graph: Graph, counts: list[int], input_names: set[str]) -> list[list[int]]:
    idx = graph.index
    preds: list[list[int]] = []
    for j, node in enumerate(graph.nodes):
        p = []
        for ref in node.inputs:
            # the common case: a plain node name (not an input: the two never share a name, checked above)
            if ref and ":" not in ref and (i := idx.get(ref)) is not None and i != j and counts[i]:
                p.append(i)
                continue
            if not ref or ref in input_names:
                continue
            name, k = parse_ref(ref)
            i = idx.get(name)
            if i is None:
                hint = did_you_mean(name, list(idx) + list(input_names)) or "declare it under `inputs:` or add the node"
                raise XcvizError(f"input {ref!r} is not defined", where=node_where(node, graph.source), hint=hint)
            if i == j:
                raise XcvizError("node consumes its own output", where=node_where(node, graph.source), hint="a graph must be acyclic")
            if k >= counts[i]:
                raise XcvizError(f"input {ref!r} asks for output {k} but {name!r} ({graph.nodes[i].op_type}) has {counts[i]}",
                                 where=node_where(node, graph.source), hint=f"use {name}:0 .. {name}:{counts[i] - 1}")
            p.append(i)
        for ref in node.control_inputs:
            i = idx.get(ref)
            if i is None:
                raise XcvizError(f"control input {ref!r} is not a node", where=node_where(node, graph.source),
                                 hint=did_you_mean(ref, idx) or "control inputs name nodes")
            if i == j:
                raise XcvizError("node has itself as a control input", where=node_where(node, graph.source), hint="a graph must be acyclic")
            p.append(i)
        preds.append(p)
    _check_graph_outputs(graph, counts, input_names)
    return preds


def _check_graph_outputs(graph: Graph, counts: list[int], input_names: set[str]) -> None:
    idx = graph.index
    for ref in graph.outputs:
        if ref in input_names:
            continue
        name, k = parse_ref(ref)
        i = idx.get(name)
        if i is None or k >= counts[i]:
            raise XcvizError(f"graph output {ref!r} does not exist", where=graph.source,
                             hint=did_you_mean(name, idx) or "list node names under `outputs:`")


def _find_cycle(preds: list[list[int]], order_len: int, graph: Graph) -> list[str]:
    """Names along one cycle (for the error message), found iteratively."""
    n = len(preds)
    color = [0] * n
    for start in range(n):
        if color[start]:
            continue
        stack = [(start, iter(preds[start]))]
        color[start] = 1
        path = [start]
        while stack:
            v, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[v] = 2
                stack.pop()
                path.pop()
            elif color[nxt] == 1:
                cyc = list(reversed(path[path.index(nxt):]))  # producer -> consumer order
                k = cyc.index(min(cyc))                         # start at the first node in the file
                return [graph.nodes[i].name for i in cyc[k:] + cyc[:k]]
            elif color[nxt] == 0:
                color[nxt] = 1
                stack.append((nxt, iter(preds[nxt])))
                path.append(nxt)
    return []


def _order(graph: Graph, preds: list[list[int]] | None) -> bool:
    """Put the nodes in topological order; True if that moved any. None: known to be in order."""
    if preds is None or all(i < j for j, p in enumerate(preds) for i in p):
        return False
    order = topo_order(len(preds), preds)
    if order is None:
        cyc = _find_cycle(preds, 0, graph)
        where = node_where(graph.node(cyc[0]), graph.source) if cyc else graph.source
        raise XcvizError("the graph has a cycle: " + " -> ".join(cyc + cyc[:1]), where=where or graph.source,
                         hint="a computation graph must be a DAG; break the loop or use a Loop op")
    graph.nodes = [graph.nodes[i] for i in order]
    graph._index = None
    return True


def _merge(inferred: TensorType, given: TensorType, node: Node, k: int, source: str | None) -> TensorType:
    if given.shape is None and given.dtype is None:
        return inferred
    shape = inferred.shape
    if given.shape is not None:
        if shape is None:
            shape = given.shape
        elif len(shape) != len(given.shape):
            raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                             where=node_where(node, source), hint="fix the declared shape or the inputs")
        else:
            dims = []
            for a, b in zip(shape, given.shape):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                                     where=node_where(node, source), hint="fix the declared shape or the inputs")
                dims.append(a if isinstance(a, int) else b)
            shape = tuple(dims)
    dtype = inferred.dtype or given.dtype
    return TensorType(shape, dtype)


def _attrs_key(attrs: dict) -> tuple | None:
    """A hashable form of scalar attributes that keeps 1, 1.0 and True apart; None if any value is a container."""
    key = []
    for k, v in attrs.items():
        t = type(v)
        if t is str or t is int or t is bool or v is None:
            key.append((k, t, v))
        elif t is float:
            key.append((k, t, repr(v)))  # repr keeps -0.0 apart from 0.0
        else:
            return None
    return tuple(key)


FAST_MIN_NODES = 50_000


def _use_fast(n: int) -> bool:
    """The numba walk (infer_fast.py) for big graphs; XCVIZ_INFER=reference or =fast forces one."""
    choice = os.environ.get("XCVIZ_INFER", "auto")
    if choice == "reference" or (choice != "fast" and n < FAST_MIN_NODES):
        return False
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def infer_shapes(graph: Graph, counts: list[int] | None = None, refs: _Refs | None = None) -> tuple | None:
    """Fill every node's output types from its op's rule; file-given types must agree. Returns the fast
    path's (rid, results) (see infer_fast), None from the reference loop.

    A rule is a pure function of (op, input types, attributes, declared outputs, output count) when no
    input is a known constant, so its merged result is computed once per distinct key: big graphs repeat
    a few hundred such keys millions of times. Input types are read by position (`refs.src`) from
    `slot`, the output-0 type of every node and the type of every graph input."""
    if refs is None:
        refs = _Refs(graph)
        refs.read_ops(graph)
    if counts is None:
        counts = _num_outputs(graph, refs)
    if _use_fast(len(graph.nodes)):
        from .infer_fast import infer_shapes_fast

        return infer_shapes_fast(graph, counts, refs)
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
    src = refs.src
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
            akey = _attrs_key(attrs) if attrs else ()
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
                        _record_const(node, opdef, types, consts, source)
                        if node.name in consts:
                            const_pos.add(i)
                    continue
        given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
        attrs = {**opdef.attrs, **node.attrs}
        cvals = [consts.get(ref) if ref else None for ref in ins] if has_const else [None] * len(types)
        ctx = Ctx(types, attrs, cvals, given, n_out)
        try:
            inferred = opdef.infer(ctx)
        except ShapeError as e:
            raise XcvizError(str(e), where=node_where(node, source), hint="fix the input shapes or the node's attributes") from None
        except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
            raise XcvizError(f"cannot apply {node.op_type} to inputs {', '.join(map(str, types))}: {e}",
                             where=node_where(node, source), hint="check the node's attributes and input shapes") from None
        inferred = list(inferred) + [TensorType()] * (n_out - len(inferred))
        # interned: equal types become one object, so the identity keys above hit for the consumers too
        outs = node.outputs = [intern(t, t) for t in (_merge(inferred[k], given[k], node, k, source) for k in range(n_out))]
        slot[i] = outs[0] if outs else unknown
        if key is not None:
            cache[key] = (list(outs), types, opdef.name in _CONST_RECORDING)
        if opdef.name in _CONST_RECORDING:
            _record_const(node, opdef, types, consts, source)
            if node.name in consts:
                const_pos.add(i)


_CONST_RECORDING = frozenset(o.name for o in REGISTRY if o.folds)  # outputs recorded as constants


def _record_const(node: Node, opdef, types: list[TensorType], consts: dict, source: str | None) -> None:
    """Remember the values of shape and const nodes: later rules may read them (reshape targets, ...)."""
    if opdef.name == "shape" and types and types[0].shape is not None:
        dims = types[0].shape  # a shape is a constant even when symbolic dims stay names
        consts[node.name] = np.array(list(dims), dtype=object if any(isinstance(d, str) for d in dims) else np.int64)
    elif opdef.name == "const" and node.attrs.get("value") is not None:
        dt = node.outputs[0].dtype if node.outputs else None
        if dt is not None and dt not in DTYPE_SIZES:  # e.g. value: {} or [null] makes a NumPy object array
            raise XcvizError(f"const value has no tensor dtype (NumPy reads it as {dt})", where=node_where(node, source),
                             hint="value: a number, or nested lists of numbers of one shape; dtype: float32, ...")
        try:
            consts[node.name] = np.asarray(node.attrs["value"])
        except (TypeError, ValueError):
            pass


def finalize(graph: Graph, *, allow_unknown: bool = False, onnx: bool = False,
             dims: Mapping[str, int] | None = None) -> Graph:
    refs = _Refs(graph)
    _resolve_ops(graph, allow_unknown, onnx, refs)
    counts = _num_outputs(graph, refs)
    preds = _check_refs(graph, counts, refs)
    if _order(graph, preds):
        counts = refs = None  # positions moved: count again in the new order
    outputs = infer_shapes(graph, counts, refs)
    if refs is not None:
        from ..ir import NodeTable, RefPositions

        key = (id(graph.nodes), len(graph.nodes))
        if len(graph.nodes) >= 10_000:  # the integer edges, for clustering and costs
            graph._positions = (key, RefPositions.of(graph, refs.src_array, refs.lens_array))
        if outputs is not None:  # the columns the cost model reads, so that it need not visit 10^6 nodes
            graph._table = (key, NodeTable(refs.op, refs.known, refs.attrs, *outputs))
    if dims:
        graph.dims.update(dims)
    return graph
