"""Control-flow bodies as op attributes: the Subgraph value, the runner the runtime installs, and body input names."""
from __future__ import annotations

from typing import Callable

from .arrays import Unsupported


class Subgraph(str):
    """A body, built once by the loader: reads as its name and content hash; `.graph` the body as a finalized
    Graph (None when it did not load: `.error` says why), `.inputs` its formal input names, `.output_types` the
    types its file declares for its outputs, `.declared` each node's output types as the file gave them (for a
    retyped copy, cost.control), `.opset` the model's (domain, version) pairs, `.outer` the outer-scope tensor
    names it (or a body nested in it) reads, `.proto` its GraphProto bytes (what onnxruntime would take: xcviz
    itself never parses them again)."""

    proto: bytes
    opset: tuple
    outer: tuple
    inputs: tuple
    output_types: tuple
    graph: object
    error: Exception | None
    declared: dict

    def __new__(cls, label: str, proto: bytes, opset: tuple, outer: tuple, *, inputs: tuple = (),
                output_types: tuple = (), graph=None, error: Exception | None = None, declared: dict | None = None):
        s = super().__new__(cls, label)
        s.proto, s.opset, s.outer = proto, opset, outer
        s.inputs, s.output_types, s.graph, s.error, s.declared = inputs, output_types, graph, error, declared or {}
        return s

    def body(self):
        """The body's Graph; the loader's error when it did not load."""
        if self.graph is None:
            raise self.error or Unsupported(f"body {self} was not built")
        return self.graph


_RUNNER: list[Callable] = []


def set_runner(fn: Callable) -> None:
    """fn(subgraph, feeds: {name: array}, use_jax: bool) -> list of output arrays (installed by the runtime);
    with use_jax the body's nodes run their JAX lowerings on traced values (inside lax.while_loop, ...)."""
    _RUNNER[:] = [fn]


def run_body(body, feeds: dict, use_jax: bool = False) -> list:
    if not isinstance(body, Subgraph):
        raise Unsupported("the body of this node was not kept (load the model with xcviz's ONNX loader)")
    if not _RUNNER:
        raise Unsupported("control flow runs only under xcviz's runtime")
    return _RUNNER[0](body, feeds, use_jax)


def scan_opset(body) -> int:
    """The default-domain opset a Scan's model imports (8: the batched Scan with sequence_lens)."""
    if not isinstance(body, Subgraph):
        return 99
    opsets = dict(body.opset)
    return int(opsets.get("", opsets.get("ai.onnx", 99)))


def outer_feeds(a, extra) -> dict:
    """Outer-scope values by name: the node's inputs past its own, in the order the loader appended them."""
    return dict(zip(a.get("_outer") or (), extra))


def body_inputs(body: Subgraph, values: list) -> dict:
    return dict(zip(input_names(body), values))


def input_names(body: Subgraph) -> tuple:
    return body.inputs
