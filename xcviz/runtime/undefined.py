"""Elements no implementation defines: integers cast from NaN, ±Inf or out-of-range floats, and what follows from them.

C, NumPy and XLA each give such a cast a different value (NumPy INT_MIN, XLA saturates or 0), so comparing XLA
with the NumPy reference there compares two arbitrary numbers. The masks follow the native values through the
nodes: elementwise ops carry a mask element by element (Where by its condition), any other op with an undefined
input element makes its whole output undefined (which elements it reaches is the op's business).
"""
from __future__ import annotations

import numpy as np

from ..ir import format_ref

WHY = "integers cast from non-finite or out-of-range floats (undefined: XLA and NumPy differ), not compared"


def _cast_mask(x, y) -> np.ndarray | None:
    """Where a float -> integer cast of `x` into `y` has no defined value."""
    if not isinstance(x, np.ndarray) or not isinstance(y, np.ndarray) or x.dtype.kind != "f" or y.dtype.kind not in "iu":
        return None
    info = np.iinfo(y.dtype)
    with np.errstate(invalid="ignore"):
        xf = x.astype(np.float64)
        bad = ~np.isfinite(xf) | (xf < float(info.min)) | (xf >= float(info.max) + 1.0)
    return bad if bad.any() else None


def undefined_masks(nodes, env: dict) -> dict[str, np.ndarray]:
    """ref -> boolean mask of the undefined elements, for the outputs of `nodes` (in order) whose values `env`
    holds; refs with no undefined element are left out."""
    from ..ops import ELEMENTWISE, REGISTRY

    masks: dict[str, np.ndarray] = {}
    for node in nodes:
        outs = [format_ref(node.name, k) for k in range(len(node.outputs))]
        ins = [masks.get(r) if r else None for r in node.inputs]
        if node.op == "cast" and node.inputs and node.inputs[0]:
            m = _cast_mask(env.get(node.inputs[0]), env.get(outs[0]))
            if ins[0] is not None:
                m = ins[0] if m is None else m | ins[0]
            if m is not None:
                masks[outs[0]] = m
            continue
        if all(m is None for m in ins):
            continue
        opdef = REGISTRY.ops.get(node.op) if node.known else None
        for ref in outs:
            y = env.get(ref)
            if not isinstance(y, np.ndarray):
                continue
            m = _follow(node.op, opdef is not None and ELEMENTWISE in opdef.groups, ins, env, node, y.shape)
            if m.any():  # (Where may pick only defined elements)
                masks[ref] = m
    return masks


def _follow(op: str, elementwise: bool, ins: list, env: dict, node, shape) -> np.ndarray:
    try:
        if op == "where":
            cond = np.broadcast_to(np.asarray(env[node.inputs[0]], bool), shape)
            pick = [np.zeros(shape, bool) if m is None else np.broadcast_to(m, shape) for m in ins[1:3]]
            out = np.where(cond, pick[0], pick[1])
            return out | np.broadcast_to(ins[0], shape) if ins[0] is not None else out
        if elementwise:
            out = np.zeros(shape, bool)
            for m in ins:
                if m is not None:
                    out = out | np.broadcast_to(m, shape)
            return out
    except (ValueError, KeyError):
        pass  # shapes that do not broadcast: the whole output, as for any other op
    return np.ones(shape, bool)
