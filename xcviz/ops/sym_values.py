"""Values of small integer tensors whose entries are symbolic (object arrays of xcviz.ir.symbolic.Sym): the
value rules of the ops where NumPy on Sym entries is not exact (casts, integer division, comparisons, min/max),
each on its op's entry (OpDef.sym_value); the value pass (passes.values) calls them."""
from __future__ import annotations

import numpy as np

from ..ir.symbolic import Sym
from .arrays import Unsupported

BIG = 2**31 - 1    # an "until the end" bound as exporters write it (INT_MAX, INT64_MAX)


def is_symbolic(v) -> bool:
    return isinstance(v, np.ndarray) and v.dtype == object


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


def _reduce_pick(xs, op):
    out = xs[0]
    for y in xs[1:]:
        out = _elementwise(lambda p, q: _pick(p, q, op), out, y)
    return out


# Each op's value rule (OpDef.sym_value), fn(attrs, *inputs) over object arrays of Sym entries, where the op's
# NumPy reference on them would not be exact; the family files put them on their entries.
def cast(a, x):
    return x  # shape values stay integers whatever the cast (to float only for a division)


def div(a, x, y):
    return _elementwise(_sym_div, x, y)


def _sym_floor_div(x: Sym, y: Sym):
    if x.is_const and y.is_const and y.const:
        return Sym.of(x.const // y.const)
    return x.exact_div(y)  # (exact: the floor is the quotient)


def floor_div(a, x, y):
    return _elementwise(_sym_floor_div, x, y)


def minimum(a, *xs):
    return _reduce_pick(xs, "min")


def maximum(a, *xs):
    return _reduce_pick(xs, "max")


def equal(a, x, y):
    return _elementwise(lambda p, q: _compare(p, q, "equal"), x, y)


def less(a, x, y):
    return _elementwise(lambda p, q: _compare(p, q, "less"), x, y)


def greater(a, x, y):
    return _elementwise(lambda p, q: _compare(p, q, "greater"), x, y)


def absolute(a, x):
    return _elementwise(lambda p: p if p.min_value() >= 0 and all(
        c > 0 for m, c in p.terms.items() if m) else (Sym.of(abs(p.const)) if p.is_const else None), x)
