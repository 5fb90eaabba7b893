"""The op registry: one entry per op holding everything xcviz knows about it, looked up by any of its names."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable

import numpy as np

from ..errors import XcvizError, did_you_mean
from .arrays import jnp
from .rules import Ctx, from_file
from .xla_support import verdict_fields

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
# a While / If / Loop / Scan with bodies: a cluster holding one is kept whatever its size (TF's
# has_functional_control_flow in MarkForCompilationPass: IsWhileNode() || IsIfNode())
FUNCTIONAL = "functional_control_flow"
CUSTOM = "custom"


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    aliases: tuple[str, ...] = ()
    groups: frozenset[str] = frozenset()
    devices: frozenset[str] = ALL          # devices on which XLA compiles it
    reason: str | None = None              # why XLA cannot compile it (when devices is empty)
    device_reasons: tuple[tuple[str, str], ...] = ()  # (device, why XLA cannot compile it there), per other device
    source: str = ""                       # where the verdict comes from (tf2xla kernels or the rule), in words
    attrs: dict = field(default_factory=dict)  # defaults
    infer: Callable[[Ctx], list] = from_file
    flops: Callable | None = None          # (ctx, outputs) -> int | None; None: unknown (only ops XLA never compiles)
    num_outputs: int | None = 1            # None: as many as the node declares
    min_inputs: int = 0
    max_inputs: int | None = None
    doc: str = ""
    impl: Callable | None = None           # fn(xp, attrs, *inputs) -> array | tuple, over numpy or jax.numpy
    jax_impl: Callable | None = None       # a JAX-specific lowering (lax.conv, ...) where the generic one is not it
    jax_ok: bool = True                    # False: native only (data-dependent shapes, host side effects)
    static_inputs: tuple[int, ...] = ()    # inputs that decide output shapes: compile-time constants under XLA
    positive_inputs: tuple[int, ...] = ()  # inputs that must be positive when synthesised (variances, logs)
    folds: bool = False                    # shape inference records its output as a constant (shape, const)

    @property
    def native(self) -> Callable | None:
        """The NumPy reference, called as fn(attrs, *inputs); None when xcviz cannot execute the op."""
        return None if self.impl is None else partial(self.impl, np)

    @property
    def jax(self) -> Callable | None:
        """The JAX lowering, fn(attrs, *inputs); only for ops XLA compiles somewhere and that have one."""
        if self.impl is None or not self.jax_ok or not self.devices:
            return None
        return partial(_lowered, self.jax_impl or self.impl)

    def compilable_on(self, device: str) -> bool:
        return device in self.devices

    def why_not(self, device: str) -> str:
        for d, why in self.device_reasons:
            if d == device:
                return why
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

    def __iter__(self) -> Iterable[OpDef]:
        return iter(self.ops[n] for n in sorted(self.ops))

    def __len__(self) -> int:
        return len(self.ops)


REGISTRY = Registry()


def _lowered(fn: Callable, attrs: dict, *inputs):
    return fn(jnp(), attrs, *inputs)


def op(name: str, *aliases: str, **kw) -> OpDef:
    """Declare one entry and add it to the registry."""
    groups = kw.pop("groups", ())
    kw = verdict_fields(name, kw)
    opdef = OpDef(name, tuple(aliases), frozenset([groups] if isinstance(groups, str) else groups), **kw)
    REGISTRY.add(opdef)
    return opdef
