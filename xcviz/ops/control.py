"""Control flow (ONNX Loop, If and Scan): the bodies are kept as subgraph attributes and run natively by interpretation.

A body attribute is a `Subgraph`: a string ('<subgraph NAME #hash>', so printing, JSON and attribute
interning treat it as a value, and equal strings mean equal bodies) that also carries the serialized
GraphProto, the model's opsets and its outer-scope names. The loader appends those outer-scope tensors to the
node's inputs, so the dependency is an edge of the graph like any other. Running a body needs the loader and
the executor, layers above this one: the runtime installs the runner (`set_runner`).
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .arrays import Unsupported, present
from .registry import CONTROL_FLOW, op
from .values import as_value


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
    """fn(subgraph, feeds: {name: array}) -> list of output arrays (installed by the runtime)."""
    _RUNNER[:] = [fn]


def _run(body, feeds: dict) -> list:
    if not isinstance(body, Subgraph):
        raise Unsupported("the body of this node was not kept (load the model with xcviz's ONNX loader)")
    if not _RUNNER:
        raise Unsupported("control flow runs only under xcviz's runtime")
    return _RUNNER[0](body, feeds)


def _outer_feeds(a, extra) -> dict:
    """Outer-scope values by name: the node's inputs past its own, in the order the loader appended them."""
    return dict(zip(a.get("_outer") or (), extra))


def loop(xp, a, *args):
    n = int(a.get("_n_inputs", len(args)))
    own, outer = list(args[:n]) + [None] * max(0, 2 - n), args[n:]
    body = a.get("body")
    feeds_outer = _outer_feeds(a, outer)
    trips = int(np.asarray(own[0]).reshape(-1)[0]) if present(own[0]) else None
    cond = bool(np.asarray(own[1]).reshape(-1)[0]) if present(own[1]) else True
    state = list(own[2:n])
    scans: list[list] = []
    i = 0
    while (trips is None or i < trips) and cond:
        feeds = {**feeds_outer, **_body_inputs(body, [np.array(i, np.int64), np.array(cond), *state])}
        outs = _run(body, feeds)
        cond = bool(np.asarray(outs[0]).reshape(-1)[0])
        state = [as_value(v) for v in outs[1:1 + len(state)]]
        for k, v in enumerate(outs[1 + len(state):]):
            if len(scans) <= k:
                scans.append([])
            scans[k].append(np.asarray(v))
        i += 1
        if trips is None and i > 10_000_000:
            raise Unsupported("Loop ran 10^7 iterations without its condition turning false")
    n_scan = int(a.get("_num_outputs", len(state))) - len(state)
    stacked = [np.stack(s) if s else np.zeros((0,), np.float32) for s in scans] + \
        [np.zeros((0,), np.float32)] * max(0, n_scan - len(scans))
    out = state + stacked
    return tuple(out) if len(out) != 1 else out[0]


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


def if_(xp, a, cond, *outer):
    branch = a.get("then_branch") if bool(np.asarray(cond).reshape(-1)[0]) else a.get("else_branch")
    outs = _run(branch, _outer_feeds(a, outer))
    return tuple(outs) if len(outs) != 1 else outs[0]


def scan(xp, a, *args):
    """ONNX Scan (opset >= 9): states carried through the body, scan inputs sliced along their axes (either
    direction), the body's scan outputs stacked along theirs."""
    body = a.get("body")
    n_in = int(a.get("_n_inputs", len(args)))
    own, outer = list(args[:n_in]), args[n_in:]
    if isinstance(body, Subgraph) and dict(body.opset).get("", dict(body.opset).get("ai.onnx", 99)) < 9:
        raise Unsupported("Scan of opset 8 (batched, with sequence_lens)")
    m = int(a.get("num_scan_inputs", 0))
    n = n_in - m
    states, xs = own[:n], [np.asarray(x) for x in own[n:]]
    in_axes = list(a.get("scan_input_axes") or [0] * m)
    in_dirs = list(a.get("scan_input_directions") or [0] * m)
    steps = xs[0].shape[in_axes[0] % xs[0].ndim] if xs else 0
    feeds_outer = _outer_feeds(a, outer)
    scans: list[list] = []
    for t in range(steps):
        slices = [np.take(x, steps - 1 - t if d else t, axis=ax % x.ndim) for x, ax, d in zip(xs, in_axes, in_dirs)]
        outs = _run(body, {**feeds_outer, **_body_inputs(body, [*states, *slices])})
        states = [np.asarray(v) for v in outs[:n]]
        for k, v in enumerate(outs[n:]):
            if len(scans) <= k:
                scans.append([])
            scans[k].append(np.asarray(v))
    out_axes = list(a.get("scan_output_axes") or [0] * len(scans))
    out_dirs = list(a.get("scan_output_directions") or [0] * len(scans))
    stacked = [np.stack(s[::-1] if d else s, axis=ax) for s, ax, d in zip(scans, out_axes, out_dirs)]
    out = states + stacked
    return tuple(out) if len(out) != 1 else out[0]


native_only = dict(devices=frozenset(), jax_ok=False)
op("loop", "Loop", **native_only, groups=CONTROL_FLOW, num_outputs=None, impl=loop,
   reason="XLA would compile it as a functional While, but xcviz does not lower Loop bodies yet (they run natively)",
   doc="ONNX Loop: its body runs natively, one iteration at a time (trip count and/or condition)")
op("if", "If", **native_only, groups=CONTROL_FLOW, num_outputs=None, min_inputs=1, impl=if_,
   reason="XLA would compile it as a functional If, but xcviz does not lower If branches yet (they run natively)",
   doc="ONNX If: the branch its condition picks runs natively")
op("scan", "Scan", **native_only, groups=CONTROL_FLOW, num_outputs=None, min_inputs=1, impl=scan,
   attrs={"num_scan_inputs": 0},
   reason="XLA would compile it as a functional While, but xcviz does not lower Scan bodies yet (they run natively)",
   doc="ONNX Scan (opset >= 9): states through the body, inputs sliced and outputs stacked along their axes")
