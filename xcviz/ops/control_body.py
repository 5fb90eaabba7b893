"""Control-flow bodies as op attributes (ir.Body): running one through the runtime's runner, and body input names.

Running a body needs the executor, a layer above the op table: the runtime hands its runner to every op it
evaluates, in the op's attributes under BODY_RUNNER (runtime.node.eval_node). An op that runs a body calls
`run_body(a, body, feeds)` with the attributes it was given; nothing is installed at import."""
from __future__ import annotations

from ..ir.body import BODY_RUNNER, Body
from .arrays import Unsupported


def runner(a):
    """The runtime's body runner among the op's attributes (`.run(body, feeds, use_jax)`, `.call(fn, args,
    use_jax)`); one clear line when the op was not called by xcviz's runtime."""
    r = a.get(BODY_RUNNER)
    if r is None:
        raise Unsupported("control flow runs only under xcviz's runtime")
    return r


def run_body(a, body, feeds: dict, use_jax: bool = False) -> list:
    """Run `body` on `feeds` (its inputs and outer-scope names) with the runner in the op's attributes `a`;
    with use_jax the body's nodes run their JAX lowerings on traced values (inside lax.while_loop, ...)."""
    if not isinstance(body, Body) or not body.kept:
        raise Unsupported("the body of this node was not kept (load the model with xcviz's ONNX loader)")
    return runner(a).run(body, feeds, use_jax)


def scan_opset(body) -> int:
    """The default-domain opset a Scan's model imports (8: the batched Scan with sequence_lens)."""
    return body.default_opset if isinstance(body, Body) else 99


def outer_feeds(a, extra) -> dict:
    """Outer-scope values by name: the node's inputs past its own, in the order the loader appended them."""
    return dict(zip(a.get("_outer") or (), extra))


def body_inputs(body: Body, values: list) -> dict:
    return dict(zip(input_names(body), values))


def input_names(body: Body) -> tuple:
    return body.inputs
