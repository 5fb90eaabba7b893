"""Shape, dtype and FLOP rules shared by many op entries; op-specific rules live beside their entries."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..ir import Dim, Shape, TensorType


class ShapeError(Exception):
    """An op's inputs contradict its rule; the shape pass adds file and node."""


@dataclass
class Ctx:
    """What a rule sees of one node: input types, attributes (defaults filled), constant inputs."""

    inputs: list[TensorType]
    attrs: dict
    consts: list[object | None] = field(default_factory=list)  # numpy arrays for constant inputs
    outputs: list[TensorType] = field(default_factory=list)     # types given in the file (may be unknown)
    num_outputs: int = 1
    read_consts: bool = False  # set when the rule looked at a constant: its result may depend on values


    def shape(self, i: int = 0) -> Shape | None:
        return self.inputs[i].shape if i < len(self.inputs) else None

    def dtype(self, i: int = 0) -> str | None:
        return self.inputs[i].dtype if i < len(self.inputs) else None

    def const(self, i: int):
        self.read_consts = True
        return self.consts[i] if i < len(self.consts) else None

    def rank(self, i: int = 0) -> int | None:
        s = self.shape(i)
        return None if s is None else len(s)


def fmt(shape: Shape | None) -> str:
    return "?" if shape is None else "x".join(str(d) for d in shape) or "scalar"


def numel(shape: Shape | None) -> int | None:
    if shape is None or any(isinstance(d, str) for d in shape):
        return None
    return math.prod(shape)


def norm_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def broadcast(a: Shape | None, b: Shape | None) -> Shape | None:
    if a is None or b is None:
        return None
    out: list[Dim] = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif isinstance(x, str) or isinstance(y, str):
            out.append(x if isinstance(y, str) else y)
        else:
            raise ShapeError(f"shapes {fmt(a)} and {fmt(b)} do not broadcast")
    return tuple(reversed(out))


# ---- shape rules -------------------------------------------------------------------------
def same(ctx: Ctx) -> list[TensorType]:
    return [TensorType(ctx.shape(0), ctx.dtype(0))]


def from_file(ctx: Ctx) -> list[TensorType]:
    """Data-dependent or opaque ops: the file's own output types are the only truth."""
    return list(ctx.outputs) if ctx.outputs else [TensorType()] * ctx.num_outputs


# ---- FLOP rules: (ctx, outputs) -> int | None --------------------------------------------------
def input_flops(per_element: int = 1):
    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        n = numel(ctx.shape(0))
        return None if n is None else per_element * n
    return rule


def output_flops(per_element: int = 1):
    def rule(ctx: Ctx, out: list[TensorType]) -> int | None:
        n = numel(out[0].shape) if out else None
        return None if n is None else per_element * n
    return rule


def zero_flops(ctx: Ctx, out: list[TensorType]) -> int:
    return 0
