"""Sizes as formulas in the free dimensions: boundary bytes D and FLOPs as polynomials, a lower bound for D,
and the boundary edges whose size cannot be known, named.

A dimension is free when a graph input has it and no --dim binds it: the user can bind it, so D and the
FLOPs are polynomials in the free dimensions (`3.1 KiB·batch·seq + 12 KiB`). A size that depends on any
other name (NonMaxSuppression's row count, a Loop's outputs, a name a rule made up) or an unknown shape is
unknown: its edge counts 0 toward the lower bound `boundary_bytes_min` (free dims at 1) and is named in
`unknown_edges`. FLOPs: each cost key's FLOP rule is evaluated on a grid of bindings of the names its types
use and fitted by a polynomial (degree <= 3 per name), checked exactly at one more binding; a rule that is
no such polynomial leaves its nodes out (counted in `flops_unknown_nodes`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import numpy as np

from ..ir import DTYPE_SIZES, Graph, TensorType
from ..ir.symbolic import Sym, format_poly
from ..ops import REGISTRY
from ..ops.rules import Ctx
from .boundary import Boundary
from .keys import cost_keys
from .view import CostView

POINTS = (3, 5, 7, 11)    # grid per name: fits degree <= 3 (a dim of 1 would broadcast; 2 may be special)
CHECK = 13                # one more binding the fit must reproduce exactly
MAX_NAMES = 3             # more free names in one node's types: its FLOPs are left unknown (4^4 evaluations)
FIRST = 5                 # unknown edges named in the report


@dataclass
class SymbolicCost:
    free_dims: list[str]
    boundary_bytes: Sym                    # over the edges of known size (bound dims substituted)
    boundary_bytes_min: int                # a lower bound of D: unknown edges 0, free dims 1
    unknown_edges: int
    unknown_edge_names: list[str] = field(default_factory=list)  # the first FIRST of them
    flops: Sym = field(default_factory=Sym)
    flops_clustered: Sym = field(default_factory=Sym)
    flops_unknown_nodes: int = 0

    def as_json(self) -> dict:
        return {"free_dims": self.free_dims, "boundary_bytes_expr": str(self.boundary_bytes),
                "boundary_bytes_min": self.boundary_bytes_min,
                "unknown_edges": {"count": self.unknown_edges, "first": self.unknown_edge_names},
                "flops_expr": str(self.flops), "flops_clustered_expr": str(self.flops_clustered)}

    def evaluate(self, dims: dict[str, int]) -> tuple[int | None, int | None]:
        """(D over known edges, FLOPs) with the free dims bound."""
        return self.boundary_bytes.evaluate(dims), self.flops.evaluate(dims)


def free_dims(graph: Graph) -> list[str]:
    """Names in the graph inputs' shapes that no --dim binds."""
    return sorted({d for v in graph.inputs if v.type.shape for d in v.type.shape
                   if isinstance(d, str) and d not in graph.dims and d.isidentifier()})


def type_bytes(t: TensorType, dims, free: set[str]) -> Sym | None:
    """Bytes of a tensor of type t as a polynomial in the free dims, or None when not knowable."""
    if t.shape is None or t.dtype is None or t.dtype not in DTYPE_SIZES:
        return None
    n = Sym.of(DTYPE_SIZES[t.dtype])
    for d in t.shape:
        n = n * Sym.of(d)
    n = n.substitute(dims) if dims else n
    return n if n.names() <= free else None


def symbolic_cost(graph: Graph, clustering) -> SymbolicCost:
    n = len(graph.nodes)
    flat = CostView(graph)
    dims, free = dict(graph.dims), set(free_dims(graph))
    cluster_of = np.fromiter(clustering.cluster_of, np.int64, n)
    edges = Boundary(graph, flat, cluster_of)
    per_type = {}
    tids = flat.tid_of[edges.e]
    counts = np.bincount(tids, minlength=len(flat.types)) if len(tids) else np.zeros(0, np.int64)
    total, known = Sym(), np.ones(len(edges), bool)
    for t in np.flatnonzero(counts).tolist():
        per_type[t] = b = type_bytes(flat.types[t], dims, free)
        if b is not None:
            total = total + b * int(counts[t])
    if len(tids):
        known[:len(tids)] = [per_type[t] is not None for t in tids.tolist()]
    for k, e in enumerate(edges.outputs):
        b = type_bytes(e.type, dims, free)
        known[len(tids) + k] = b is not None
        total = total + (b if b is not None else 0)
    unknown = np.flatnonzero(~known)
    names = [edges.edge(int(k)).tensor for k in unknown[:FIRST]]
    flops, clustered, bad = _flops(graph, flat, cluster_of, dims, free)
    return SymbolicCost(sorted(free), total, total.min_value(), len(unknown), names, flops, clustered, bad)


def _flops(graph: Graph, flat: CostView, cluster_of: np.ndarray, dims, free) -> tuple[Sym, Sym, int]:
    """Total and clustered FLOPs as polynomials, and how many nodes' FLOPs are unknown."""
    sig, reps = cost_keys(graph, flat)
    per_all = np.bincount(sig, minlength=len(reps))
    per_in = np.bincount(sig[cluster_of >= 0], minlength=len(reps))
    starts = np.cumsum(flat.arity) - flat.arity
    total, clustered, bad = Sym(), Sym(), 0
    for key, j in enumerate(reps):
        node = graph.nodes[j]
        s = int(starts[j])
        ins = [flat.types[t] for t in flat.tid_of[s:s + int(flat.arity[j])].tolist()]
        poly = _fit(node, ins, list(node.outputs), dims, free)
        if poly is None:
            bad += int(per_all[key])
            continue
        total = total + poly * int(per_all[key])
        clustered = clustered + poly * int(per_in[key])
    return total, clustered, bad


def _flops_at(opdef, attrs, ins, outs, binding) -> int | None:
    bi = [t.bind(binding) for t in ins]
    bo = [t.bind(binding) for t in outs]
    try:
        f = opdef.flops(Ctx(bi, attrs, [], bo, len(bo)), bo)
    except Exception:  # noqa: BLE001 - a cost rule never fails a run; the FLOPs are just unknown
        return None
    return f if isinstance(f, (int, np.integer)) and not isinstance(f, bool) else None


def _fit(node, ins, outs, dims, free) -> Sym | None:
    """The node's FLOPs as a polynomial in the free names its types use (None: not knowable)."""
    opdef = REGISTRY.ops.get(node.op) if node.known else None
    if opdef is None or opdef.flops is None:
        return None
    attrs = {**opdef.attrs, **node.attrs}
    used = set()
    for t in (*ins, *outs):
        if t.shape is None:
            return None
        for d in t.shape:
            if isinstance(d, str):
                used |= Sym.of(d).substitute(dims).names()
    if not used <= free or len(used) > MAX_NAMES:
        return None
    names = sorted(used)
    if not names:
        f = _flops_at(opdef, attrs, ins, outs, dims)
        return None if f is None else Sym.of(int(f))
    grid = list(product(POINTS, repeat=len(names)))
    vals = []
    for point in grid:
        f = _flops_at(opdef, attrs, ins, outs, {**dims, **dict(zip(names, point))})
        if f is None:
            return None
        vals.append(float(f))
    # tensor-product Vandermonde: monomials x1^a1 ... xk^ak, ai <= 3
    powers = list(product(range(len(POINTS)), repeat=len(names)))
    V = np.array([[np.prod([p ** e for p, e in zip(point, pw)]) for pw in powers] for point in grid], np.float64)
    coef = np.linalg.solve(V, np.array(vals))
    terms = {}
    for pw, c in zip(powers, coef.tolist()):
        c = round(c)
        if c:
            terms[tuple(sorted(x for name, e in zip(names, pw) for x in [name] * e))] = c
    poly = Sym(terms)
    check = {**dims, **{name: CHECK + i for i, name in enumerate(names)}}
    return poly if poly.evaluate(check) == _flops_at(opdef, attrs, ins, outs, check) else None


def format_bytes_expr(poly: Sym, fmt_bytes) -> str:
    """'3.1 KiB·batch·seq + 12.0 KiB': each coefficient as a size, names joined by '·'."""
    return format_poly(poly.terms, fmt_bytes, sep="·")


def format_count_expr(poly: Sym) -> str:
    return format_poly(poly.terms, str, sep="·")


def dims_from_arrays(graph: Graph, arrays: dict, where: str | None = None) -> dict[str, int]:
    """Symbolic dimensions bound by the shapes of given input arrays (as `validate --inputs` binds them);
    a rank or fixed size that disagrees with the graph, or one name given two sizes, is an error."""
    from ..errors import XcvizError

    from ..ir.symbolic import ANONYMOUS, bind_anonymous

    dims: dict[str, int] = {}
    anonymous: list[int] = []
    for v in graph.inputs:
        arr = arrays.get(v.name)
        if arr is None or v.type.shape is None:
            continue
        shape = tuple(int(n) for n in np.shape(arr))
        if len(shape) != len(v.type.shape):
            raise XcvizError(f"input {v.name!r} has shape {shape} but the graph declares {v.type}", where=where,
                             hint="give arrays of the declared rank")
        for d, n in zip(v.type.shape, shape):
            if d == ANONYMOUS:  # an unknown dim the file leaves unnamed (TF's -1/None): its own, tied to no other
                anonymous.append(n)
            elif isinstance(d, str):
                if dims.setdefault(d, n) != n:
                    raise XcvizError(f"input {v.name!r}: dimension {d!r} is {n} here but {dims[d]} in an earlier input",
                                     where=where, hint="give arrays whose shared dimensions agree")
            elif d != n:
                raise XcvizError(f"input {v.name!r} has shape {shape} but the graph declares {v.type}", where=where,
                                 hint="give arrays of the declared shape")
    return bind_anonymous(dims, anonymous)
