"""The op registry: one row per op, with aliases, rules, and XLA support per device."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..errors import XcvizError, did_you_mean
from .rules import Ctx, from_file

DEVICES = ("cpu", "gpu", "tpu")
ALL = frozenset(DEVICES)

# Behaviour groups: passes ask "is it in the set", never match op names.
ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
LAYOUT = "layout"
SOURCE = "source"            # produces a tensor from nothing (const, placeholder)
SHAPE_CONSUMER = "shape_consumer"  # reads only the shape of its input (TF phase 0)
ZERO_SIZE = "zero_size"      # counts 0 toward a cluster's effective size (Const, Identity)
NOOP = "noop"
CONTROL_FLOW = "control_flow"
CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    aliases: tuple[str, ...] = ()
    groups: frozenset[str] = frozenset()
    devices: frozenset[str] = ALL          # devices on which XLA compiles it
    reason: str | None = None              # why XLA cannot compile it (when devices is empty)
    attrs: dict = field(default_factory=dict)  # defaults
    infer: Callable[[Ctx], list] = from_file
    flops: Callable | None = None          # (ctx, outputs) -> int | None
    num_outputs: int | None = 1            # None: as many as the node declares
    min_inputs: int = 0
    max_inputs: int | None = None
    doc: str = ""
    # Execution (filled by xcviz.ops.impl): JAX lowering and NumPy reference.
    jax: Callable | None = None
    native: Callable | None = None

    def compilable_on(self, device: str) -> bool:
        return device in self.devices

    def why_not(self, device: str) -> str:
        return self.reason or f"no XLA kernel on {device}"


class Registry:
    def __init__(self) -> None:
        self.ops: dict[str, OpDef] = {}
        self._by_name: dict[str, OpDef] = {}
        self._by_lower: dict[str, OpDef] = {}

    def add(self, opdef: OpDef) -> None:
        if opdef.name in self.ops:
            raise ValueError(f"duplicate op {opdef.name}")
        self.ops[opdef.name] = opdef
        for n in (opdef.name, *opdef.aliases):
            if n in self._by_name and self._by_name[n] is not opdef:
                raise ValueError(f"alias {n} of {opdef.name} already names {self._by_name[n].name}")
            self._by_name[n] = opdef
            self._by_lower.setdefault(n.lower(), opdef)

    def get(self, name: str) -> OpDef | None:
        """Exact spelling first (ONNX and TF names are case-sensitive), then case-insensitive."""
        return self._by_name.get(name) or self._by_lower.get(name.lower())

    def lookup(self, name: str, where: str | None = None) -> OpDef:
        op = self.get(name)
        if op is None:
            raise XcvizError(
                f"unknown op {name!r}",
                hint=did_you_mean(name, [*self._by_name, *self.ops]) or "see `xcviz ops`; use --allow-unknown or --supported-ops FILE for ops of other frameworks",
                where=where,
            )
        return op

    def names(self) -> list[str]:
        return sorted(self.ops)

    def __iter__(self) -> Iterable[OpDef]:
        return iter(self.ops[n] for n in sorted(self.ops))

    def __len__(self) -> int:
        return len(self.ops)


REGISTRY = Registry()


def op(name: str, *aliases: str, **kw) -> OpDef:
    """Declare one row and add it to the registry."""
    groups = kw.pop("groups", ())
    opdef = OpDef(name, tuple(aliases), frozenset([groups] if isinstance(groups, str) else groups), **kw)
    REGISTRY.add(opdef)
    return opdef
