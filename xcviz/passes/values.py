"""Value propagation: the values of small integer tensors (shape vectors) through the ops that compute them.

Exported models compute their reshape targets at run time: Shape -> Gather -> Unsqueeze -> Concat ->
Reshape, Range(0, Shape[1]), ConstantOfShape(Shape(x)), ... Shape inference keeps a node's value when every
input it reads has one and the result is small (MAX_ELEMENTS): then the rules that read values (Reshape,
Expand, Slice, ConstantOfShape, Range, Tile) give exact shapes. Symbolic dimensions stay symbolic: a value
is an int64 array, or an object array whose entries are ints and canonical expression strings
(xcviz.ir.symbolic), computed with the op's own NumPy reference on Sym entries where that is exact, and
with the op's own value rule where it is not (OpDef.sym_value: casts, integer division, comparisons,
min/max; ops.sym_values).
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType
from ..ir.symbolic import Sym
from ..ops import REGISTRY, TYPE_VALUE, VALUE_RULE
from ..ops.sym_values import is_symbolic

MAX_ELEMENTS = 64  # values kept per tensor: shape vectors and indices, never weights

# ops whose value follows from their inputs' values (the registry's names)
VALUE_OPS = REGISTRY.names(VALUE_RULE)
# ops whose value follows from their input's type alone
TYPE_VALUE_OPS = REGISTRY.names(TYPE_VALUE)


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
                rule = opdef.sym_value
                return from_sym(rule(attrs, *args) if rule is not None else opdef.native(attrs, *args))
            if opdef.native is None:
                return None
            res = np.asarray(opdef.native(attrs, *args))
    except Exception:  # noqa: BLE001 - a value that cannot be computed is simply not known
        return None
    return res if res.size <= MAX_ELEMENTS and res.dtype != object else None
