"""The aten adapter table (aten name -> the adapter that makes its call one registry op), built once by one
explicit function, as ops.build_registry builds the op table: every adapter module's declared rows (its
ADAPTED, see aten.Adapters), in the order of MODULES, into one read-only table. No import fills it: which
modules' adapters it holds, and in which order, is written here, and a name declared twice is refused."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable, Mapping

from . import Call, Spec, core, grad, layout, rnn, table

# the adapter modules, in the order their rows go in the table (the order decides nothing but the table's
# insertion order: a name belongs to one adapter; build_adapters refuses a second)
MODULES = (rnn, layout, table, core, grad)


@dataclass(frozen=True)
class AdapterTable:
    """`adapters`: aten name -> adapter (Call -> Spec); `targets`: aten name -> the registry op it becomes (for
    `xcviz ops --aten`). Both read-only."""

    adapters: Mapping[str, Callable[[Call], Spec]]
    targets: Mapping[str, str]


def build_adapters(modules=MODULES) -> AdapterTable:
    """The adapter table, built once: every module's declared adapters, in order, then read-only."""
    adapters: dict[str, Callable[[Call], Spec]] = {}
    targets: dict[str, str] = {}
    for module in modules:
        for names, target, fn in module.ADAPTED.rows:
            for name in names:
                if name in adapters:
                    raise ValueError(f"aten adapter {name} declared twice (in {module.__name__} and before it)")
                adapters[name], targets[name] = fn, target
    return AdapterTable(MappingProxyType(adapters), MappingProxyType(targets))


TABLE = build_adapters()
ADAPTERS = TABLE.adapters   # aten name -> adapter
TARGETS = TABLE.targets     # aten name -> registry op


def translate(call: Call) -> Spec:
    """The registry op, inputs and attrs for one aten call; KeyError when the op is not in the table,
    NotMapped when its arguments are outside what the mapping covers."""
    return ADAPTERS[call.name](call)
