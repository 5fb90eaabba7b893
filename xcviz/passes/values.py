"""Value propagation: the values of small integer tensors (shape vectors) through the ops that compute them.

Exported models compute their reshape targets at run time: Shape -> Gather -> Unsqueeze -> Concat ->
Reshape, Range(0, Shape[1]), ConstantOfShape(Shape(x)), ... Shape inference keeps a node's value when every
input it reads has one and the result is small (MAX_ELEMENTS): then the rules that read values (Reshape,
Expand, Slice, ConstantOfShape, Range, Tile) give exact shapes. Symbolic dimensions stay symbolic: a value
is an int64 array, or an object array whose entries are ints and canonical expression strings
(xcviz.ir.symbolic), computed with the op's own NumPy reference on Sym entries where that is exact, and
with the rules below where it is not (casts, integer division, comparisons, min/max).
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from ..ir.symbolic import Sym
from ..ops import REGISTRY, TYPE_VALUE, VALUE_RULE
from ..ops.arrays import Unsupported

MAX_ELEMENTS = 64  # values kept per tensor: shape vectors and indices, never weights
BIG = 2**31 - 1    # an "until the end" bound as exporters write it (INT_MAX, INT64_MAX)

# ops whose value follows from their inputs' values (the registry's names)
VALUE_OPS = REGISTRY.names(VALUE_RULE)
# ops whose value follows from their input's type alone
TYPE_VALUE_OPS = REGISTRY.names(TYPE_VALUE)


def is_symbolic(v) -> bool:
    return isinstance(v, np.ndarray) and v.dtype == object


def to_sym(v: np.ndarray) -> np.ndarray:
    """An object array of Sym entries (ints and expression strings in, Syms out)."""
    out = np.empty(v.shape, object)
    flat = out.reshape(-1)
    for k, x in enumerate(v.reshape(-1).tolist()):
        flat[k] = Sym.of(x)
    return out


def from_sym(v) -> np.ndarray | None:
    """Back to stored form: int64 when every entry is a constant, else object with canonical strings."""
    a = np.asarray(v, dtype=object) if not isinstance(v, np.ndarray) else v
    if a.dtype != object:
        return a
    vals = []
    for x in a.reshape(-1).tolist():
        if isinstance(x, Sym):
            vals.append(x.to_dim())
        elif isinstance(x, (bool, np.bool_)):
            vals.append(bool(x))
        elif isinstance(x, (int, np.integer)):
            vals.append(int(x))
        else:
            return None  # a float or anything else: no exact value
    if all(isinstance(x, bool) for x in vals):
        return np.array(vals, bool).reshape(a.shape)
    if all(isinstance(x, int) for x in vals):
        return np.array(vals, np.int64).reshape(a.shape)
    out = np.empty(len(vals), object)
    out[:] = vals
    return out.reshape(a.shape)


def type_value(op: str, attrs: dict, t: TensorType) -> np.ndarray | None:
    """Shape (with its start/end), Size and Rank of a tensor of type t, as far as the type tells (TF's
    tf.Shape/tf.Size/tf.Rank the same). An unnamed `?` dim is a name here too (ir.symbolic.ANONYMOUS)."""
    if t.shape is None:
        return None
    dims = list(t.shape)
    op = op.removeprefix("tf.").lower()
    if op == "shape":
        dims = dims[slice(attrs.get("start"), attrs.get("end"))]
        return from_sym(np.array([Sym.of(d) for d in dims] + [None], object)[:-1]) if dims else np.zeros(0, np.int64)
    if op == "rank":
        return np.asarray(len(dims), np.int64)
    total = Sym.of(1)
    for d in dims:
        total = total * Sym.of(d)
    return from_sym(np.array(total, object))


def _compare(a: Sym, b: Sym, op: str) -> bool | None:
    """a op b for sizes, when the difference decides it whatever the bindings (names are >= 1)."""
    d = a - b
    if d.is_const:
        c = d.const
        return {"equal": c == 0, "less": c < 0, "greater": c > 0}[op]
    lo = d.min_value() if all(c > 0 for m, c in d.terms.items() if m) else None
    if lo is not None and lo > 0:
        return {"equal": False, "less": False, "greater": True}[op]
    nd = -d
    lo = nd.min_value() if all(c > 0 for m, c in nd.terms.items() if m) else None
    if lo is not None and lo > 0:
        return {"equal": False, "less": True, "greater": False}[op]
    return None


def _pick(a: Sym, b: Sym, op: str) -> Sym | None:
    """min/max of two sizes, when one is an 'until the end' bound or their difference decides it."""
    for x, y in ((a, b), (b, a)):
        if x.is_const and x.const >= BIG:
            return y if op == "min" else x
    less = _compare(a, b, "less")
    if less is None:
        return None if a != b else a
    return (a if less else b) if op == "min" else (b if less else a)


def _elementwise(fn, *xs):
    shape = np.broadcast_shapes(*(x.shape for x in xs))
    bs = [np.broadcast_to(x, shape).reshape(-1).tolist() for x in xs]
    out = np.empty(len(bs[0]) if bs else 0, object)
    for k, args in enumerate(zip(*bs)):
        r = fn(*map(Sym.of, args))
        if r is None:
            raise Unsupported("not decided symbolically")
        out[k] = r
    return out.reshape(shape)


def _sym_div(x: Sym, y: Sym):
    if x.is_const and y.is_const and y.const:
        return Sym.of(int(np.trunc(x.const / y.const)))
    return x.exact_div(y)


def _sym_floor_div(x: Sym, y: Sym):
    if x.is_const and y.is_const and y.const:
        return Sym.of(x.const // y.const)
    return x.exact_div(y)  # (exact: the floor is the quotient)


SYM_RULES = {
    "cast": lambda a, x: x,  # shape values stay integers whatever the cast (to float only for a division)
    "div": lambda a, x, y: _elementwise(_sym_div, x, y),
    "min": lambda a, *xs: _reduce_pick(xs, "min"),
    "max": lambda a, *xs: _reduce_pick(xs, "max"),
    "equal": lambda a, x, y: _elementwise(lambda p, q: _compare(p, q, "equal"), x, y),
    "less": lambda a, x, y: _elementwise(lambda p, q: _compare(p, q, "less"), x, y),
    "greater": lambda a, x, y: _elementwise(lambda p, q: _compare(p, q, "greater"), x, y),
    "abs": lambda a, x: _elementwise(lambda p: p if p.min_value() >= 0 and all(
        c > 0 for m, c in p.terms.items() if m) else (Sym.of(abs(p.const)) if p.is_const else None), x),
}


# TF's ops under their TF names (ops/tf): the same rules
SYM_RULES.update({"tf.Cast": SYM_RULES["cast"], "tf.Maximum": SYM_RULES["max"], "tf.Minimum": SYM_RULES["min"],
                  "tf.Equal": SYM_RULES["equal"], "tf.Less": SYM_RULES["less"], "tf.Greater": SYM_RULES["greater"],
                  "tf.Abs": SYM_RULES["abs"], "tf.FloorDiv": lambda a, x, y: _elementwise(_sym_floor_div, x, y)})


def _reduce_pick(xs, op):
    out = xs[0]
    for y in xs[1:]:
        out = _elementwise(lambda p, q: _pick(p, q, op), out, y)
    return out


def may_have_value(t: TensorType) -> bool:
    """Values are kept for small integer tensors only (bool masks for Where): shape vectors, never weights."""
    if t.dtype is None or t.dtype[:3] not in ("int", "uin", "boo"):
        return False
    n = t.numel()
    return n is not None and n <= MAX_ELEMENTS


def node_value(opdef, attrs: dict, types: list[TensorType], cvals: list, refs: list[str], outs: list[TensorType]):
    """The value of the node's output 0, or None when it is not known or not small. Every input the node
    names (refs; '' is an absent optional input) must have a value."""
    name = opdef.name
    if name in TYPE_VALUE_OPS:
        return type_value(name, attrs, types[0]) if types else None
    if name not in VALUE_OPS or not outs:
        return None
    if not may_have_value(outs[0]):
        return None
    if any(v is None and ref for v, ref in zip(cvals, refs)):
        return None
    args = [None if v is None else np.asarray(v) for v in cvals]
    if name in ("range", "tf.Range") and any(is_symbolic(v) for v in args):
        return None  # a symbolic number of entries: its shape says it, no value
    try:
        with np.errstate(all="ignore"):
            if any(is_symbolic(v) for v in args):
                args = [to_sym(v) if v is not None and v.dtype == object else v for v in args]
                rule = SYM_RULES.get(name)
                return from_sym(rule(attrs, *args) if rule is not None else opdef.native(attrs, *args))
            if opdef.native is None:
                return None
            res = np.asarray(opdef.native(attrs, *args))
    except Exception:  # noqa: BLE001 - a value that cannot be computed is simply not known
        return None
    return res if res.size <= MAX_ELEMENTS and res.dtype != object else None
