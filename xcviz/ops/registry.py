"""The op registry: one entry per op holding everything xcviz knows about it, looked up by any of its names."""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from typing import Callable, Iterable

import numpy as np

from ..errors import XcvizError, did_you_mean
from .arrays import jnp
from .rules import Ctx, from_file
from .xla_support import verdict_fields

DEVICES = ("cpu", "gpu", "tpu")
ALL = frozenset(DEVICES)


class Group(StrEnum):
    """Behaviour groups: passes ask "is it in the set", never match op names. The values are the strings JSON and
    text print."""

    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    LAYOUT = "layout"
    SOURCE = "source"                  # produces a tensor from nothing (const, placeholder)
    SHAPE_CONSUMER = "shape_consumer"  # reads only the shape of its input (TF phase 0)
    ZERO_SIZE = "zero_size"            # counts 0 toward a cluster's effective size (Const, Identity)
    NOOP = "noop"
    CONTROL_FLOW = "control_flow"
    # a While / If / Loop / Scan with bodies: a cluster holding one is kept whatever its size (TF's
    # has_functional_control_flow in MarkForCompilationPass: IsWhileNode() || IsIfNode())
    FUNCTIONAL = "functional_control_flow"
    FRAMES = "frames"                  # TF1 control flow v1 (Enter, Switch, Merge ...): runs in runtime/frames.py only
    LISTS = "lists"                    # makes or reads a TensorList: traced only inside a body that holds the list
    CUSTOM = "custom"
    BODY_CONTROL = "body_control"      # runs graph-valued attributes (ONNX Loop, If, Scan): costed by its bodies
    EXPENSIVE = "expensive"            # an elementwise op XLA's fusion does not duplicate into several consumers
    STRIDED_WINDOW = "strided_window"  # a pooling window XLA:CPU writes as pad + strided slices (loop fusions)
    MEAN = "mean"                      # a reduction that divides by its element count
    PARAMETER_SOURCE = "parameter_source"  # its value is a parameter of the model (a constant tensor)
    VOLATILE = "volatile"              # a new value on every run (random draws, host I/O): never a parameter
    VALUE_RULE = "value_rule"          # shape inference computes its value when its inputs' values are known
    TYPE_VALUE = "type_value"          # its value follows from its input's type alone (shape, size, rank)
    VARIABLE = "variable"              # a model variable or its read (TF VarHandleOp, ReadVariableOp): a picture
    #                                    draws it as a parameter, never as an op (render.params)


# the members under their short names, as the family files and passes import them
ELEMENTWISE = Group.ELEMENTWISE
REDUCTION = Group.REDUCTION
LAYOUT = Group.LAYOUT
SOURCE = Group.SOURCE
SHAPE_CONSUMER = Group.SHAPE_CONSUMER
ZERO_SIZE = Group.ZERO_SIZE
NOOP = Group.NOOP
CONTROL_FLOW = Group.CONTROL_FLOW
FUNCTIONAL = Group.FUNCTIONAL
FRAMES = Group.FRAMES
LISTS = Group.LISTS
CUSTOM = Group.CUSTOM
BODY_CONTROL = Group.BODY_CONTROL
EXPENSIVE = Group.EXPENSIVE
STRIDED_WINDOW = Group.STRIDED_WINDOW
MEAN = Group.MEAN
PARAMETER_SOURCE = Group.PARAMETER_SOURCE
VOLATILE = Group.VOLATILE
VALUE_RULE = Group.VALUE_RULE
TYPE_VALUE = Group.TYPE_VALUE
VARIABLE = Group.VARIABLE

COST_CLASSES = ("dot", "conv", "narrow_conv", "pointwise_conv", "dwconv", "elementwise", "reduce", "window", "norm", "movement", "free")
FUSION_KINDS = ("loop", "free", "library", "reduce", "two_reductions", "foldable", "broadcast")


@dataclass(frozen=True, slots=True)
class OpDef:
    name: str
    aliases: tuple[str, ...] = ()
    groups: frozenset[Group] = frozenset()
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
    # symbolic values (ir.symbolic), for the ops whose integer rules cannot take them
    sym_infer: Callable[[Ctx], list | None] | None = None  # shape rule when a shape input holds symbolic entries
    #                                        (ops.sym_shapes; None from it: `infer` decides)
    sym_value: Callable | None = None      # value rule fn(attrs, *inputs) on Sym entries, where `native` on them is
    #                                        not exact (ops.sym_values); None: `native`
    # the cost model's facts, declared with the entry where they are not the defaults
    cost_class: str = "elementwise"        # whose calibrated native and XLA timings it is costed with
    fusion: str = "loop"                   # how XLA's fusion treats it (FUSION_KINDS): a loop fusion by default
    cpu_kernels: int = 1                   # XLA:CPU kernels as a fusion root (a softmax 4, a layer norm 5)
    cpu_passes: tuple[int, int, int] | None = None  # XLA:CPU kernels before the output fusion of a normalisation:
                                                    # (short rows, rows tree-split, YNNPACK reductions)
    filter_axes: tuple[int, ...] | None = None  # a convolution's filter axes in ONNX's order (out, in, spatial...)
                                                # where its own differ (TF's HWIO: (3, 2, 0, 1))
    group_count: Callable | None = None    # a convolution's group count where its shapes imply it, not an
    #                                        attribute: fn(attrs, input shape, filter shape in ONNX's order)
    #                                        (TF's Conv2D: its input's channels over the filter's)
    steps: Callable | None = None          # a recurrence (LSTM, GRU, RNN): (ctx, outputs) -> (steps, XLA kernels,
    #                                        native calls) run in all, each paid per step (rnn.recurrence_steps)
    loop_role: str | None = None           # what it computes in a while loop's condition, as cost.trips reads
    #                                        one: "<" "<=" ">" ">=", "&" "|" "!", "+" "-", "=" (the identity, a
    #                                        cast of a boolean too), "const"

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
    """The op table: built once (ops/__init__.build_registry adds every family file's entries, in a fixed order),
    then frozen: `add` refuses, and the mappings are read-only."""

    def __init__(self) -> None:
        self.ops: dict[str, OpDef] = {}
        self._by_name: dict[str, OpDef] = {}
        self._by_lower: dict[str, OpDef] = {}
        self.frozen = False

    def freeze(self) -> None:
        """End of the build: nothing changes the table afterwards."""
        from types import MappingProxyType

        self.ops, self._by_name, self._by_lower = (MappingProxyType(dict(m)) for m in
                                                   (self.ops, self._by_name, self._by_lower))
        self.frozen = True

    def _building(self) -> None:
        if self.frozen:
            raise RuntimeError("the op table is built and frozen: declare an op in its family file (xcviz/ops/)")

    def add(self, opdef: OpDef) -> None:
        self._building()
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

    def names(self, group: Group | str | None = None, **facts) -> frozenset[str]:
        """The canonical names of the entries in `group` and with every field in `facts` equal to its value:
        how code outside ops/ asks which ops a rule applies to."""
        return frozenset(o.name for o in self.ops.values()
                         if (group is None or group in o.groups) and all(getattr(o, k) == v for k, v in facts.items()))

    def __iter__(self) -> Iterable[OpDef]:
        return iter(self.ops[n] for n in sorted(self.ops))

    def __len__(self) -> int:
        return len(self.ops)


def _lowered(fn: Callable, attrs: dict, *inputs):
    return fn(jnp(), attrs, *inputs)


def op(name: str, *aliases: str, **kw) -> OpDef:
    """One entry, with every fact about the op (see OpDef); a family file lists its entries in its OPS."""
    groups = kw.pop("groups", ())
    kw = verdict_fields(name, kw)
    if kw.get("cost_class", "elementwise") not in COST_CLASSES or kw.get("fusion", "loop") not in FUSION_KINDS:
        raise ValueError(f"op {name}: cost_class must be one of {COST_CLASSES}, fusion one of {FUSION_KINDS}")
    return OpDef(name, tuple(aliases), frozenset(Group(g) for g in ([groups] if isinstance(groups, str) else groups)),
                 **kw)


class Entries(list):
    """A family file's entries, in the order it declares them: `OPS = Entries()`, then `op = OPS.op`.
    Declaring adds to this list only; ops/__init__.build_registry puts every family's OPS in the table."""

    def op(self, name: str, *aliases: str, **kw) -> OpDef:
        entry = op(name, *aliases, **kw)
        self.append(entry)
        return entry


def plus_groups(base: dict, *groups: str) -> dict:
    """A family's shared fields (`unary`, `binary` ...) with more groups for one entry:
    `op("exp", **plus_groups(unary, EXPENSIVE), ...)`."""
    have = base.get("groups", ())
    return {**base, "groups": (*([have] if isinstance(have, str) else have), *groups)}
