"""A control-flow body as an attribute value of the IR (ONNX Loop / If / Scan / SequenceMap): `Body`.

Built once by the loader and never changed. A body reads as its label ('<subgraph NAME #hash>'), which is
also what makes two bodies equal: the hash is that of the body's bytes, so equal labels mean equal bodies
(an exporter's many identical If branches are one). The text IR writes it `body<"LABEL">`; the graph it
carries is the loader's (a body read back from text has none: running it says so, in one line)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from .types import FrozenDict

# The attribute under which the runtime hands an op that runs bodies its runner (runtime.node.BodyRunner:
# `.run(body, feeds, use_jax)`, `.call(function, args, use_jax)`); ops.control_body reads it.
BODY_RUNNER = "_bodies"


@dataclass(frozen=True, eq=False)
class Body:
    """`graph` the body as a finalized Graph (None when it did not load: `error` says why), `opset` the model's
    (domain, version) pairs, `inputs` its formal input names, `output_types` the types its file declares for
    its outputs, `outer` the outer-scope tensor names it (or a body nested in it) reads, `declared` each
    node's output types as the file gave them (for a retyped copy, cost.control), `proto` its GraphProto
    bytes (what onnxruntime would take: xcviz itself never parses them again)."""

    label: str
    graph: object = None
    opset: tuple = ()
    inputs: tuple = ()
    output_types: tuple = ()
    outer: tuple = ()
    declared: Mapping = field(default_factory=FrozenDict)
    proto: bytes = b""
    error: Exception | None = None

    def __post_init__(self) -> None:
        put = object.__setattr__
        for name in ("opset", "inputs", "output_types", "outer"):
            if type(getattr(self, name)) is not tuple:
                put(self, name, tuple(getattr(self, name)))
        if type(self.declared) is not FrozenDict:
            put(self, "declared", FrozenDict({k: tuple(v) for k, v in (self.declared or {}).items()}))

    def __str__(self) -> str:
        return self.label

    def __repr__(self) -> str:  # as the label's (messages and the report quote an attribute by its repr)
        return repr(self.label)

    def __eq__(self, other) -> bool:
        return isinstance(other, Body) and other.label == self.label

    def __hash__(self) -> int:
        return hash(("body", self.label))

    @property
    def kept(self) -> bool:
        """Whether the loader built the body (or tried, and kept its error); a body read back from text names
        the body only, as a node read without its subgraph would."""
        return self.graph is not None or self.error is not None

    def body(self):
        """The body's Graph; the loader's error when it did not load."""
        if self.graph is None:
            from ..errors import XcvizError

            if self.error is not None:
                raise self.error
            raise XcvizError(f"body {self.label} was not built (a body read back from text has no graph)",
                             hint="load the model file itself to run its control flow")
        return self.graph

    @property
    def default_opset(self) -> int:
        """The default-domain opset the body's model imports (99 when it names none)."""
        opsets = dict(self.opset)
        return int(opsets.get("", opsets.get("ai.onnx", 99)))
