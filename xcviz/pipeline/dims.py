"""Binding symbolic dimensions (--dim, --inputs): each step returns a new Graph with the bindings."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Mapping

from ..errors import XcvizError

if TYPE_CHECKING:
    from ..ir import Graph
    from .options import LoadOptions


def bind_load_dims(graph: Graph, o: LoadOptions, path: str) -> Graph:
    """The graph with the loading options' bindings: --dim (each a dimension the graph has, by name or as
    INPUT.AXIS), then the --inputs arrays' shapes, which win."""
    if o.dims:
        graph = _check_dims(graph, o.dims, path)
    if o.inputs is not None:
        graph, _ = bind_input_arrays(graph, o.inputs)
    return graph


def bind_input_arrays(graph: Graph, path: str) -> tuple[Graph, dict[str, int]]:
    """`--inputs FILE.npz`: (the graph with the symbolic dims the arrays' shapes give bound (they win over
    --dim, as in `validate`), the bindings). Arrays are only read for their shapes here."""
    from ..cost.symbolic import dims_from_arrays
    from ..ir import bind_dims
    from ..loaders.npz import read_npz

    arrays = read_npz(path)
    dims = dims_from_arrays(graph, arrays, path)
    return bind_dims(_specialize_anonymous(graph, arrays, dims), dims), dims


def _specialize_anonymous(graph: Graph, arrays: Mapping, dims: Mapping[str, int]) -> Graph:
    """The graph with each unnamed `?` axis of a given input at the array's size and its shapes inferred
    again, when those sizes differ (a 1x16x16x3 image into (?, ?, ?, 3)): each `?` is its own dimension, so
    ir.symbolic.bind_anonymous binds none of them then, and every shape made from them (a conv's `?'`) would
    stay unknown. When they agree, `?` is bound as a label like any name (bind_dims)."""
    import numpy as np

    from ..ir.symbolic import ANONYMOUS

    if ANONYMOUS in dims:
        return graph
    inputs, changed = [], False
    for v in graph.inputs:
        arr, shape = arrays.get(v.name), v.type.shape
        if arr is not None and shape is not None and ANONYMOUS in shape and len(np.shape(arr)) == len(shape):
            v = replace(v, type=replace(v.type, shape=tuple(int(n) if d == ANONYMOUS else d
                                                            for d, n in zip(shape, np.shape(arr)))))
            changed = True
        inputs.append(v)
    if not changed:
        return graph
    from ..passes.prepare import reinfer

    return reinfer(replace(graph, inputs=inputs))


def _names(types_) -> set[str]:
    return {w for t in types_ if t.shape for d in t.shape if isinstance(d, str) for w in re.findall(r"[A-Za-z_]\w*", d)}


def _at(graph: Graph) -> dict[str, str]:
    """INPUT.AXIS -> the symbol at that axis of a graph input."""
    return {f"{v.name}.{k}": d for v in graph.inputs if v.type.shape for k, d in enumerate(v.type.shape)
            if isinstance(d, str) and d.isidentifier()}


def graph_dim_names(graph: Graph) -> tuple[set[str], dict[str, str]]:
    """(the symbolic dimension names the graph's tensors use, INPUT.AXIS -> the symbol at that axis)."""
    known = _names([v.type for v in graph.inputs] + [t for node in graph.nodes for t in node.outputs])
    return known, _at(graph)


def bind_present_dims(graph: Graph, dims: Mapping[str, int]) -> tuple[Graph, list[str]]:
    """(the graph with each of `dims` it has bound (by name or INPUT.AXIS), the names it does not have)
    (sweep: one --dim for a folder of models, each bound where it applies)."""
    from ..ir import bind_dims

    known, at = graph_dim_names(graph)
    bound, skipped = {}, []
    for name, size in dims.items():
        if name in at and name not in known:
            bound[at[name]] = size
        elif name in known:
            bound[name] = size
        else:
            skipped.append(name)
    return bind_dims(graph, bound), skipped


def _check_dims(graph: Graph, dims: Mapping[str, int], path: str) -> Graph:
    """Every bound dimension must be one the graph has (a typo would otherwise be silently ignored); an
    INPUT.AXIS name binds the symbol at that axis (a saved torch program keeps `s77`, not `batch`)."""
    from ..ir import bind_dims

    known = _names(v.type for v in graph.inputs)
    if all(name in known for name in dims):
        return graph
    at = _at(graph)
    axes = [n for n in dims if n not in known and n in at]
    if axes:
        kept = {k: v for k, v in graph.dims.items() if k not in axes}
        graph = bind_dims(graph, {at[n]: graph.dims.get(n, dims[n]) for n in axes}, base=kept)
    known |= _names(t for node in graph.nodes for t in node.outputs)  # only when the inputs do not name them all
    for name in dims:
        if name not in known and name not in at:
            from ..errors import did_you_mean

            first: dict[str, str] = {}
            for where_, d in at.items():
                first.setdefault(d, where_)
            listed = ", ".join(f"{d} ({first[d]})" if d in first else d for d in sorted(known)[:10])
            raise XcvizError(f"--dim {name}: the graph has no dimension {name!r}", where=path,
                             hint=did_you_mean(name, known) or (f"its dimensions: {listed}; bind one by name or as "
                                                                "INPUT.AXIS" if known else
                                                                "the graph has no symbolic dimension"))
    return graph
