"""Control-flow bodies as op attributes: the Subgraph value, the runner the runtime installs, and body input names."""
from __future__ import annotations

from typing import Callable

from .arrays import Unsupported


class Subgraph(str):
    """A body: reads as its name and content hash; `.proto` the GraphProto bytes, `.opset` (domain, version)
    pairs, `.outer` the outer-scope tensor names it (or a body nested in it) reads."""

    proto: bytes
    opset: tuple
    outer: tuple

    def __new__(cls, label: str, proto: bytes, opset: tuple, outer: tuple):
        s = super().__new__(cls, label)
        s.proto, s.opset, s.outer = proto, opset, outer
        return s


_RUNNER: list[Callable] = []


def set_runner(fn: Callable) -> None:
    """fn(subgraph, feeds: {name: array}, use_jax: bool) -> list of output arrays (installed by the runtime);
    with use_jax the body's nodes run their JAX lowerings on traced values (inside lax.while_loop, ...)."""
    _RUNNER[:] = [fn]


def _run(body, feeds: dict, use_jax: bool = False) -> list:
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


def _outer_feeds(a, extra) -> dict:
    """Outer-scope values by name: the node's inputs past its own, in the order the loader appended them."""
    return dict(zip(a.get("_outer") or (), extra))


def _body_inputs(body: Subgraph, values: list) -> dict:
    return dict(zip(_input_names(body), values))


_NAMES: dict[str, tuple] = {}


def _input_names(body: Subgraph) -> tuple:
    names = _NAMES.get(body)
    if names is None:
        import onnx

        g = onnx.GraphProto()
        g.ParseFromString(body.proto)
        inits = {t.name for t in g.initializer}
        names = _NAMES[body] = tuple(i.name for i in g.input if i.name not in inits)
    return names
