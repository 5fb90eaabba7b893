"""Turn a freshly read Graph into a verified one: resolve ops, check references, order, infer shapes."""
from __future__ import annotations

from itertools import chain
from operator import attrgetter
from typing import Mapping

import numpy as np

from ..errors import XcvizError, did_you_mean
from ..ir import DTYPE_SIZES, Graph, Node, TensorType, parse_ref, topo_order
from ..ops import REGISTRY
from ..ops.rules import Ctx, ShapeError, fmt


def _resolve_ops(graph: Graph, allow_unknown: bool, onnx: bool) -> None:
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
                    raise XcvizError(f"{node.op_type} takes {want} inputs, got {n_in}", where=node.where,
                                     hint=opdef.doc or "see `xcviz ops`")
                arity_ok.add((node.op_type, n_in))
            if node.attrs:
                _check_attr_types(node, opdef.attrs)
            continue
        node.known = False
        if onnx:
            node.note = node.note or f"no XLA lowering in xcviz for {node.op_type}"
        elif allow_unknown:
            node.note = f"unknown op {node.op_type}"
        else:
            REGISTRY.lookup(node.op_type, where=node.where)  # raises with a did-you-mean


_UNSEEN = object()


def _check_attr_types(node: Node, defaults: dict) -> None:
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
                             where=node.where, hint=f"e.g. {key}: {default!r}")


def _num_outputs(graph: Graph) -> list[int]:
    """How many outputs each node has: the op's fixed count, else as declared or referenced."""
    nodes = graph.nodes
    referenced: dict[int, int] = {}
    idx = graph.index
    refs = chain(chain.from_iterable(map(attrgetter("inputs"), nodes)), graph.outputs)
    for ref in [r for r in refs if ":" in r]:  # output 0 never raises a count above the minimum of 1
        name, k = parse_ref(ref)
        i = idx.get(name)
        if i is not None and k + 1 > referenced.get(i, 0):
            referenced[i] = k + 1
    fixed_of = {(name, True): opdef.num_outputs for name, opdef in REGISTRY.ops.items()}
    counts = list(map(fixed_of.get, map(attrgetter("op", "known"), nodes)))  # None: not fixed
    for i in [i for i, c in enumerate(counts) if c is None]:
        counts[i] = max(len(nodes[i].outputs), referenced.get(i, 0), 1)
    return counts


def _check_refs(graph: Graph, counts: list[int]) -> list[list[int]] | None:
    """Every reference names a node output in range or a graph input; returns predecessor lists, or None
    when the nodes are known to be in topological order already."""
    idx = graph.index
    if len(idx) != len(graph.nodes):
        seen: set[str] = set()
        for node in graph.nodes:
            if node.name in seen:
                raise XcvizError(f"duplicate node name {node.name!r}", where=node.where, hint="node names must be unique")
            seen.add(node.name)
    input_names = set()
    for v in graph.inputs:
        if v.name in input_names:
            raise XcvizError(f"duplicate graph input {v.name!r}", where=graph.source, hint="graph input names must be unique")
        input_names.add(v.name)
        if v.name in idx:
            raise XcvizError(f"{v.name!r} is both a graph input and a node", where=graph.node(v.name).where,
                             hint="rename one of them")
    if not _refs_plain_and_ordered(graph, counts, input_names):
        return _check_node_refs(graph, counts, input_names)
    _check_graph_outputs(graph, counts, input_names)
    return None


def _refs_plain_and_ordered(graph: Graph, counts: list[int], input_names: set[str]) -> bool:
    """True when every data input is an empty ref, a graph input, or output 0 of an earlier node with
    outputs (and there are no control inputs): the common case, checked on arrays. Anything else (a
    ':k' ref, a bad ref, an unordered graph) is left to the node-by-node checks and their messages."""
    nodes = graph.nodes
    if "" in graph.index or any(map(attrgetter("control_inputs"), nodes)):
        return False
    per_node = list(map(attrgetter("inputs"), nodes))
    refs = list(chain.from_iterable(per_node))
    if ":" in "".join(refs):
        return False
    src = list(map(graph.index.get, refs))
    keep = None
    if None in src:
        keep = np.ones(len(refs), bool)
        for k in [k for k, i in enumerate(src) if i is None]:
            ref = refs[k]
            if ref and ref not in input_names:
                return False
            keep[k] = False
            src[k] = -1
    src_a = np.array(src, np.int64)
    dst_a = np.repeat(np.arange(len(nodes), dtype=np.int64), np.array(list(map(len, per_node)), np.int64))
    if keep is not None:
        src_a, dst_a = src_a[keep], dst_a[keep]
    if not len(src_a):
        return True
    return bool((src_a < dst_a).all() and (np.array(counts, np.int64)[src_a] > 0).all())


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
                raise XcvizError(f"input {ref!r} is not defined", where=node.where, hint=hint)
            if i == j:
                raise XcvizError("node consumes its own output", where=node.where, hint="a graph must be acyclic")
            if k >= counts[i]:
                raise XcvizError(f"input {ref!r} asks for output {k} but {name!r} ({graph.nodes[i].op_type}) has {counts[i]}",
                                 where=node.where, hint=f"use {name}:0 .. {name}:{counts[i] - 1}")
            p.append(i)
        for ref in node.control_inputs:
            i = idx.get(ref)
            if i is None:
                raise XcvizError(f"control input {ref!r} is not a node", where=node.where,
                                 hint=did_you_mean(ref, idx) or "control inputs name nodes")
            if i == j:
                raise XcvizError("node has itself as a control input", where=node.where, hint="a graph must be acyclic")
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
        where = graph.node(cyc[0]).where if cyc else graph.source
        raise XcvizError("the graph has a cycle: " + " -> ".join(cyc + cyc[:1]), where=where or graph.source,
                         hint="a computation graph must be a DAG; break the loop or use a Loop op")
    graph.nodes = [graph.nodes[i] for i in order]
    graph._index = None
    return True


def _merge(inferred: TensorType, given: TensorType, node: Node, k: int) -> TensorType:
    if given.shape is None and given.dtype is None:
        return inferred
    shape = inferred.shape
    if given.shape is not None:
        if shape is None:
            shape = given.shape
        elif len(shape) != len(given.shape):
            raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                             where=node.where, hint="fix the declared shape or the inputs")
        else:
            dims = []
            for a, b in zip(shape, given.shape):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                                     where=node.where, hint="fix the declared shape or the inputs")
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


def infer_shapes(graph: Graph, counts: list[int] | None = None) -> None:
    """Fill every node's output types from its op's rule; file-given types must agree.

    A rule is a pure function of (op, input types, attributes, declared outputs, output count) when no
    input is a known constant, so its merged result is computed once per distinct key: big graphs repeat
    a few hundred such keys millions of times."""
    if counts is None:
        counts = _num_outputs(graph)
    idx = graph.index
    nodes = graph.nodes
    consts: dict[str, object] = {v.name: v.data for v in graph.inputs if v.data is not None}
    in_types = {v.name: v.type for v in graph.inputs}
    cache: dict[tuple, tuple] = {}
    intern = {t: t for t in in_types.values()}.setdefault
    unknown = TensorType()
    # a ref with ':' means output k of a node, unless no node name has a ':' (then it is simply not a node)
    get = idx.get if ":" not in "".join(idx) else (lambda ref: None if ":" in ref else idx.get(ref))
    opdef_of = {(name, True): opdef for name, opdef in REGISTRY.ops.items()}
    opdefs = list(map(opdef_of.get, map(attrgetter("op", "known"), nodes)))
    for i, node in enumerate(nodes):
        n_out = counts[i]
        types = []
        has_const = False
        for ref in node.inputs:
            j = get(ref)  # a node's output 0 (node and input names never clash)
            if j is not None:
                outs = nodes[j].outputs
                t = outs[0] if outs else unknown
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
            node.outputs = given[:n_out]
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
                    node.outputs = hit[0].copy()
                    if hit[2]:
                        _record_const(node, opdef, types, consts)
                    continue
        given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
        attrs = {**opdef.attrs, **node.attrs}
        cvals = [consts.get(ref) if ref else None for ref in node.inputs] if has_const else [None] * len(types)
        ctx = Ctx(types, attrs, cvals, given, n_out)
        try:
            inferred = opdef.infer(ctx)
        except ShapeError as e:
            raise XcvizError(str(e), where=node.where, hint="fix the input shapes or the node's attributes") from None
        except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
            raise XcvizError(f"cannot apply {node.op_type} to inputs {', '.join(map(str, types))}: {e}",
                             where=node.where, hint="check the node's attributes and input shapes") from None
        inferred = list(inferred) + [TensorType()] * (n_out - len(inferred))
        # interned: equal types become one object, so the identity keys above hit for the consumers too
        node.outputs = [intern(t, t) for t in (_merge(inferred[k], given[k], node, k) for k in range(n_out))]
        if key is not None:
            cache[key] = (list(node.outputs), types, opdef.name in _CONST_RECORDING)
        if opdef.name in _CONST_RECORDING:
            _record_const(node, opdef, types, consts)


_CONST_RECORDING = frozenset({"shape", "const"})


def _record_const(node: Node, opdef, types: list[TensorType], consts: dict) -> None:
    """Remember the values of shape and const nodes: later rules may read them (reshape targets, ...)."""
    if opdef.name == "shape" and types and types[0].shape is not None:
        dims = types[0].shape  # a shape is a constant even when symbolic dims stay names
        consts[node.name] = np.array(list(dims), dtype=object if any(isinstance(d, str) for d in dims) else np.int64)
    elif opdef.name == "const" and node.attrs.get("value") is not None:
        dt = node.outputs[0].dtype if node.outputs else None
        if dt is not None and dt not in DTYPE_SIZES:  # e.g. value: {} or [null] makes a NumPy object array
            raise XcvizError(f"const value has no tensor dtype (NumPy reads it as {dt})", where=node.where,
                             hint="value: a number, or nested lists of numbers of one shape; dtype: float32, ...")
        try:
            consts[node.name] = np.asarray(node.attrs["value"])
        except (TypeError, ValueError):
            pass


def finalize(graph: Graph, *, allow_unknown: bool = False, onnx: bool = False,
             dims: Mapping[str, int] | None = None) -> Graph:
    _resolve_ops(graph, allow_unknown, onnx)
    counts = _num_outputs(graph)
    preds = _check_refs(graph, counts)
    if _order(graph, preds):
        counts = None  # positions moved: count again in the new order
    infer_shapes(graph, counts)
    if dims:
        graph.dims.update(dims)
    return graph
