"""One node's shape rule: apply its op's rule, merge with the declared types, remember constant values."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..errors import XcvizError
from ..ir import DTYPE_SIZES, Node, TensorType, node_where
from ..ops import REGISTRY, SHAPE_CONSUMER, SOURCE
from ..ops.rules import Ctx, ShapeError, fmt
from .values import TYPE_VALUE_OPS, type_value

# ops whose values later rules may read (reshape targets, ...): their results are remembered as constants
CONST_RECORDING = frozenset(opdef.name for opdef in REGISTRY if opdef.folds) | TYPE_VALUE_OPS


def apply_rule(node: Node, opdef, types: list[TensorType], cvals: list, n_out: int,
               source: str | None) -> tuple[list[TensorType], bool]:
    """The node's `n_out` output types: its op's rule on `types` (and constant inputs `cvals`) merged
    with what the file declares; and whether the rule read a constant."""
    given = list(node.outputs) + [TensorType()] * (n_out - len(node.outputs))
    ctx = Ctx(types, {**opdef.attrs, **node.attrs}, cvals, given, n_out)
    try:
        sym = opdef.sym_infer
        inferred = sym(ctx) if sym is not None and any(v is not None for v in cvals) else None
        if inferred is None:
            inferred = opdef.infer(ctx)
    except ShapeError as e:
        raise XcvizError(str(e), where=node_where(node, source), hint="fix the input shapes or the node's attributes") from None
    except (TypeError, ValueError, IndexError, KeyError, ZeroDivisionError, OverflowError) as e:
        raise XcvizError(f"cannot apply {node.op_type} to inputs {', '.join(map(str, types))}: {e}",
                         where=node_where(node, source), hint="check the node's attributes and input shapes") from None
    inferred = list(inferred) + [TensorType()] * (n_out - len(inferred))
    guessed = _value_unknown(opdef, types, cvals)
    return [merge(inferred[k], given[k], node, k, source, guessed) for k in range(n_out)], ctx.read_consts


def _value_unknown(opdef, types: list[TensorType], cvals: list) -> bool:
    """Whether a shape-deciding input (Reduce's axes, Split's sizes, ...) is given whose value is not known here
    (a graph input): the rule could only guess the output shape, so a declared one is taken over it, as
    onnxruntime's checker does, rather than refusing a valid model."""
    return any(k < len(types) and types[k].shape is not None and (k >= len(cvals) or cvals[k] is None)
               for k in opdef.static_inputs)


def merge(inferred: TensorType, given: TensorType, node: Node, k: int, source: str | None,
          guessed: bool = False) -> TensorType:
    """The inferred type refined by the declared one; a declared shape that disagrees is an error (unless the
    rule `guessed`: then the declared shape stands where they disagree)."""
    if given.shape is None and given.dtype is None:
        return inferred
    shape = inferred.shape
    if given.shape is not None:
        if shape is None or (guessed and len(shape) != len(given.shape)):
            shape = given.shape
        elif len(shape) != len(given.shape):
            raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                             where=node_where(node, source), hint="fix the declared shape or the inputs")
        else:
            dims = []
            for a, b in zip(shape, given.shape):
                if isinstance(a, int) and isinstance(b, int) and a != b:
                    if guessed:  # the rule's guess gives way to what the file says
                        dims.append(b)
                        continue
                    raise XcvizError(f"output {k} is declared {fmt(given.shape)} but {node.op_type} produces {fmt(shape)}",
                                     where=node_where(node, source), hint="fix the declared shape or the inputs")
                dims.append(a if isinstance(a, int) or (isinstance(b, str) and not _placeholder(a)) else b)
            shape = tuple(dims)
    dtype = inferred.dtype or given.dtype
    kind = inferred if type(inferred) is not TensorType else given  # a seq<>/opt<> type (ir.containers) stays one
    return TensorType(shape, dtype) if type(kind) is TensorType else replace(kind, shape=shape, dtype=dtype)


def _placeholder(d) -> bool:
    """A name a rule makes up for a size it cannot tell ('?', 'range', 'd0'): a declared name is better."""
    return d == "?" or d == "range" or (d[:1] == "d" and d[1:].isdigit())


def record_const(node: Node, opdef, types: list[TensorType], consts: dict, source: str | None) -> None:
    """Remember the values of shape and const nodes: later rules may read them (reshape targets, ...)."""
    if opdef.name in TYPE_VALUE_OPS and types and types[0].shape is not None:
        # a shape is a constant even when symbolic dims stay names (Shape's start/end applied)
        consts[node.name] = type_value(opdef.name, {**opdef.attrs, **node.attrs}, types[0])
    # the others by role, not name: TF's tf.Shape and tf.Const fold the same way
    elif opdef.folds and SHAPE_CONSUMER in opdef.groups and types and types[0].shape is not None:
        dims = types[0].shape
        consts[node.name] = np.array(list(dims), dtype=object if any(isinstance(d, str) for d in dims) else np.int64)
    elif opdef.folds and SOURCE in opdef.groups and node.attrs.get("value") is not None:
        dt = node.outputs[0].dtype if node.outputs else None
        if dt is not None and dt not in DTYPE_SIZES:  # e.g. value: {} or [null] makes a NumPy object array
            raise XcvizError(f"const value has no tensor dtype (NumPy reads it as {dt})", where=node_where(node, source),
                             hint="value: a number, or nested lists of numbers of one shape; dtype: float32, ...")
        try:
            consts[node.name] = np.asarray(node.attrs["value"])
        except (TypeError, ValueError):
            pass
