"""verify(graph): the invariants every built graph keeps, and the checks the loader runs to establish them.

Unique node and input names; every reference defined before its use (topological order, hence acyclic),
naming an output that exists; known ops with their arity and attribute types; tensors whose element count
fits 64 bits and an optional limit. The loader runs these checks in stages on a graph being built (some
on arrays, for big graphs); `verify` runs them all on a finished graph, after any pass, and in tests."""
from __future__ import annotations

import numpy as np

from .errors import XcvizError, did_you_mean
from .ir import Graph, Node, TensorType, node_where, parse_ref, short
from .passes.columns import NodeColumns
from .ops import REGISTRY

INT64_MAX = 2**63 - 1


def verify(graph: Graph, *, max_elements: int | None = None) -> Graph:
    """Check every invariant of a built graph (see the module docstring); the graph itself, or XcvizError."""
    for node in graph.nodes:
        if node.known:
            opdef = REGISTRY.ops.get(node.op)
            if opdef is None:
                raise XcvizError(f"op {node.op!r} is not a canonical op name", where=node_where(node, graph.source),
                                 hint="build graphs with passes.prepare.prepare, which resolves op names")
            check_arity(node, opdef, graph.source)
            if node.attrs:
                check_attr_types(node, opdef.attrs, graph.source)
    counts = [max(len(node.outputs), 1) for node in graph.nodes]
    preds = check_refs(graph, counts, NodeColumns(graph))
    if preds is not None:
        for j, p in enumerate(preds):
            if any(i >= j for i in p):
                cyc = find_cycle(preds, graph)
                if cyc:
                    raise cycle_error(graph, cyc)
                node = graph.nodes[j]
                raise XcvizError("node uses a value defined after it", where=node_where(node, graph.source),
                                 hint="nodes must be in topological order")
    c = graph.columns
    check_elements(graph, max_elements, c.rid, c.results)
    return graph


def check_arity(node: Node, opdef, source: str | None) -> None:
    n_in = len(node.inputs)
    if n_in < opdef.min_inputs or (opdef.max_inputs is not None and n_in > opdef.max_inputs):
        want = (f"{opdef.min_inputs}" if opdef.max_inputs == opdef.min_inputs
                else f"{opdef.min_inputs}..{opdef.max_inputs if opdef.max_inputs is not None else 'n'}")
        raise XcvizError(f"{node.op_type} takes {want} inputs, got {n_in}",
                         where=node_where(node, source), hint=opdef.doc or "see `xcviz ops`")


def check_attr_types(node: Node, defaults: dict, source: str | None) -> None:
    """Each attribute the op declares has a value of its default's type (or None)."""
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


def check_refs(graph: Graph, counts: list[int], cols: NodeColumns) -> list[list[int]] | None:
    """Unique names, and every reference names a node output in range or a graph input; returns
    predecessor lists, or None when the nodes are known to be in topological order already. With
    `cols.proven` (the loader found the names unique, none '' and none an input's) no name index is made."""
    if cols.proven and _inputs_unique(graph) and _refs_plain_and_ordered(graph, counts, cols) \
            and _outputs_found(graph, counts):
        return None
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
    if not _refs_plain_and_ordered(graph, counts, cols):
        return _check_node_refs(graph, counts, input_names)
    _check_graph_outputs(graph, counts, input_names)
    return None


def _inputs_unique(graph: Graph) -> bool:
    return len({v.name for v in graph.inputs}) == len(graph.inputs)


def _outputs_found(graph: Graph, counts: list[int]) -> bool:
    """_check_graph_outputs passes, found without a name index for a few outputs (searched from the end,
    where outputs mostly are); False: let it look (and say what is wrong)."""
    if graph.indexed or len(graph.outputs) > 16:
        return False
    inputs = {v.name for v in graph.inputs}
    names = graph.nodes.column("name")
    last = len(names) - 1
    rev = None
    for ref, (name, k) in zip(graph.outputs, graph.output_refs):
        if ref in inputs:
            continue
        if rev is None:
            rev = names[::-1]
        try:
            i = last - rev.index(name)
        except ValueError:
            return False
        if k >= counts[i]:
            return False
    return True


def _refs_plain_and_ordered(graph: Graph, counts: list[int], cols: NodeColumns) -> bool:
    """True when every data input is an empty ref, a graph input, or output 0 of an earlier node with
    outputs (and there are no control inputs): the common case, checked on arrays. Anything else (a
    ':k' ref, a bad ref, an unordered graph) is left to the node-by-node checks and their messages."""
    n = len(graph.nodes)
    if (not cols.proven and graph.position("") is not None) or any(cols.control):
        return False
    src = cols.src_array
    dst = np.repeat(np.arange(n, dtype=np.int64), cols.lens_array)
    missing = np.flatnonzero(src < 0)
    if len(missing) and any([cols.refs[k] for k in missing.tolist()]):  # only '' (absent) may be missing
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
    for ref, (name, k) in zip(graph.outputs, graph.output_refs):
        if ref in input_names:
            continue
        i = idx.get(name)
        if i is None or k >= counts[i]:
            raise XcvizError(f"graph output {ref!r} does not exist", where=graph.source,
                             hint=did_you_mean(name, idx) or "list node names under `outputs:`")


def find_cycle(preds: list[list[int]], graph: Graph) -> list[str]:
    """Names along one cycle (for the error message), found iteratively; [] when there is none."""
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


def cycle_error(graph: Graph, cyc: list[str]) -> XcvizError:
    where = node_where(graph.node(cyc[0]), graph.source) if cyc else graph.source
    return XcvizError("the graph has a cycle: " + " -> ".join(cyc + cyc[:1]), where=where or graph.source,
                      hint="a computation graph must be a DAG; break the loop or use a Loop op")


def check_elements(graph: Graph, max_elements: int | None, rid: np.ndarray, results: list[list[TensorType]]) -> None:
    """Every tensor's element count (with the graph's bound dims) fits a 64-bit count and, when given,
    `max_elements`; the first input, else the first node, that breaks it is named. `rid`/`results`: the
    nodes' outputs as the graph's columns share them, so that each distinct result is looked at once."""
    limit = INT64_MAX if max_elements is None else min(max_elements, INT64_MAX)
    dims = graph.dims
    for v in graph.inputs:
        count = v.type.numel(dims)
        if count is not None and count > limit:
            raise _too_many(v.type, count, max_elements, f"{graph.source}: input {short(v.name)}")
    bad = [r for r, outs in enumerate(results) if any(_over(t, dims, limit) for t in outs)]
    if bad:
        node = graph.nodes[int(np.flatnonzero(np.isin(rid, bad))[0])]
        t = next(t for t in node.outputs if _over(t, dims, limit))
        raise _too_many(t, t.numel(dims), max_elements, node_where(node, graph.source))


def _over(t: TensorType, dims, limit: int) -> bool:
    if t.shape is None or not t.shape:
        return False
    count = t.numel(dims)
    return count is not None and count > limit


def _too_many(t: TensorType, count: int, max_elements: int | None, where: str) -> XcvizError:
    if count > INT64_MAX:
        return XcvizError(f"tensor {t} has {count:,} elements, more than a 64-bit count can hold", where=where,
                          hint="fix the shape (or the --dim binding) of this tensor")
    return XcvizError(f"tensor {t} has {count:,} elements, over the limit of {max_elements:,}", where=where,
                      hint="fix the shape, bind smaller dims with --dim, or raise --max-elements")
