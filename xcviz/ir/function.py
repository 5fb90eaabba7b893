"""A TensorFlow library function as an attribute value of the IR (the body of While / If / Case and the callee
of PartitionedCall): `TFFunction`.

Built once by the TF loader (loaders.tensorflow.functions.wrap_functions) and never changed. It reads as its
name (str(), repr(), a report's attribute text) and two are equal when their names are (one GraphDef's
library names each function once). The text IR writes it `function<"NAME">`; the FunctionDef it carries is
the loader's (one read back from text has none: running it says so, in one line)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Mapping

from .types import FrozenDict


@dataclass(frozen=True, eq=False)
class TFFunction:
    """`name` the function's name in the library, `fdef` its FunctionDef (None when read back from text),
    `library` {name: FunctionDef} of the GraphDef it came from (for the calls inside it)."""

    name: str
    fdef: object = None
    library: Mapping = field(default_factory=FrozenDict)
    # the loader's shape inference of a call (loaders.tensorflow.functions.call_types: fn(function, arg types)
    # -> output types or None), for a call the file gives no types; not part of the value
    typer: Callable | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if type(self.library) is not FrozenDict:  # (the loader hands one FrozenDict to all its functions)
            object.__setattr__(self, "library", FrozenDict(self.library or {}))

    @property
    def kept(self) -> bool:
        """Whether the loader gave the function's definition (one read back from text names it only)."""
        return self.fdef is not None

    def output_types(self, arg_types: list) -> list | None:
        """Its outputs' types when called with inputs of these types (the loader's `typer`, once per input
        types); None without one."""
        if self.typer is None:
            return None
        key = tuple(arg_types)
        if key not in self.typed:
            self.typed[key] = self.typer(self, list(arg_types))
        return self.typed[key]

    @functools.cached_property
    def typed(self) -> dict:
        """output_types' answers by input types (a cache, not part of the value)."""
        return {}

    @functools.cached_property
    def run_state(self) -> dict:
        """What is built from this function once and kept (runtime.tf_functions: its Graph, built on its first
        call, as Graph.run_state keeps a graph's compiled runs; cost.tf_control: its graph typed per caller's
        input types); not part of the value."""
        return {}

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:  # as the name's (messages and the report quote an attribute by its repr)
        return repr(self.name)

    def __eq__(self, other) -> bool:
        return isinstance(other, TFFunction) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("function", self.name))
