"""Control flow (ONNX Loop, If and Scan): the bodies are kept as subgraph attributes and run natively by interpretation.

A body attribute is an `ir.Body`: a value of the IR that reads as its label ('<subgraph NAME #hash>'; equal
labels mean equal bodies) and carries the body as a Graph, built once by the loader (`.graph`), the model's
opsets and its outer-scope names. The loader appends those outer-scope tensors to the node's inputs, so the
dependency is an edge of the graph like any other. Running a body needs the executor, a layer above this one:
the runtime passes its runner down in the op's attributes (control_body.run_body).
"""
from __future__ import annotations

import numpy as np

from .arrays import Unsupported, present
from ..ir import Body
from .control_body import body_inputs, outer_feeds, run_body, scan_opset
from .registry import BODY_CONTROL, CONTROL_FLOW, FUNCTIONAL, Entries, plus_groups
from .values import as_value

OPS = Entries()  # this family's entries, in order (xcviz.ops.build_registry puts them in the table)
op = OPS.op


def loop(xp, a, *args):
    n = int(a.get("_n_inputs", len(args)))
    own, outer = list(args[:n]) + [None] * max(0, 2 - n), args[n:]
    body = a.get("body")
    feeds_outer = outer_feeds(a, outer)
    trips = int(np.asarray(own[0]).reshape(-1)[0]) if present(own[0]) else None
    cond = bool(np.asarray(own[1]).reshape(-1)[0]) if present(own[1]) else True
    state = list(own[2:n])
    scans: list[list] = []
    i = 0
    while (trips is None or i < trips) and cond:
        feeds = {**feeds_outer, **body_inputs(body, [np.array(i, np.int64), np.array(cond), *state])}
        outs = run_body(a, body, feeds)
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


def if_(xp, a, cond, *outer):
    branch = a.get("then_branch") if bool(np.asarray(cond).reshape(-1)[0]) else a.get("else_branch")
    outs = run_body(a, branch, outer_feeds(a, outer))
    return tuple(outs) if len(outs) != 1 else outs[0]


def scan(xp, a, *args):
    """ONNX Scan (opset >= 9): states carried through the body, scan inputs sliced along their axes (either
    direction), the body's scan outputs stacked along theirs."""
    body = a.get("body")
    n_in = int(a.get("_n_inputs", len(args)))
    own, outer = list(args[:n_in]), args[n_in:]
    if scan_opset(body) < 9:
        return scan8(a, own, outer_feeds(a, outer))
    m = int(a.get("num_scan_inputs", 0))
    n = n_in - m
    states, xs = own[:n], [np.asarray(x) for x in own[n:]]
    in_axes = list(a.get("scan_input_axes") or [0] * m)
    in_dirs = list(a.get("scan_input_directions") or [0] * m)
    steps = xs[0].shape[in_axes[0] % xs[0].ndim] if xs else 0
    feeds_outer = outer_feeds(a, outer)
    scans: list[list] = []
    for t in range(steps):
        slices = [np.take(x, steps - 1 - t if d else t, axis=ax % x.ndim) for x, ax, d in zip(xs, in_axes, in_dirs)]
        outs = run_body(a, body, {**feeds_outer, **body_inputs(body, [*states, *slices])})
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


def scan8(a, own: list, feeds_outer: dict):
    """ONNX Scan of opset 8: batch axis 0, sequence axis 1, an optional sequence_lens (first input); each batch
    row runs its own length, its scan outputs zero-padded to the longest."""
    body = a.get("body")
    m = int(a.get("num_scan_inputs", 0))
    lens, rest = own[0], own[1:]
    n = len(rest) - m
    states, xs = [np.asarray(v) for v in rest[:n]], [np.asarray(x) for x in rest[n:]]
    dirs = list(a.get("directions") or [0] * m)
    batch, steps = (xs[0].shape[0], xs[0].shape[1]) if xs else (states[0].shape[0] if states else 0, 0)
    lens = np.asarray(lens).reshape(-1).astype(np.int64) if present(lens) else np.full(batch, steps, np.int64)
    finals, scans = [[] for _ in states], []
    for b in range(batch):
        st = [s[b] for s in states]
        rows: list[list] = []
        for t in range(int(lens[b])):
            slices = [x[b, int(lens[b]) - 1 - t if d else t] for x, d in zip(xs, dirs)]
            outs = run_body(a, body, {**feeds_outer, **body_inputs(body, [*st, *slices])})
            st = [np.asarray(v) for v in outs[:n]]
            for k, v in enumerate(outs[n:]):
                if len(rows) <= k:
                    rows.append([])
                rows[k].append(np.asarray(v))
        for k, v in enumerate(st):
            finals[k].append(v)
        scans.append(rows)
    n_out = int(a.get("_num_outputs", n)) - n
    shapes = [next((r[k][0] for r in scans if len(r) > k and r[k]), None) for k in range(n_out)]
    stacked = []
    for k, first in enumerate(shapes):
        if first is None:
            raise Unsupported("Scan of opset 8 whose every sequence is empty (no output shape to pad)")
        out = np.zeros((batch, steps, *first.shape), first.dtype)
        for b, rows in enumerate(scans):
            if len(rows) > k and rows[k]:
                out[b, :len(rows[k])] = np.stack(rows[k])
        stacked.append(out)
    out = [np.stack(f) for f in finals] + stacked
    return tuple(out) if len(out) != 1 else out[0]


def _lowering(name: str):
    """The op's JAX lowering (control_jax), imported when first traced: the op table imports no jax."""
    def fn(xp, a, *args):
        from . import control_jax

        return getattr(control_jax, name)(xp, a, *args)
    return fn


def _declared(body) -> list:
    """The body's declared output types (TensorType; unknown where it gives none), read by the loader."""
    return list(body.output_types) if isinstance(body, Body) else []


def _full(t) -> bool:
    return t.shape is not None and all(isinstance(d, int) for d in t.shape) and t.dtype is not None


def infer_control(ctx) -> list:
    """The file's types, completed where the body proves them: a loop-carried value whose body output is
    declared with the very type it came in with keeps it (a fixed-shape While), If branches declared alike
    give that type; stacked outputs get the constant trip count in front."""
    outs = list(ctx.outputs) if ctx.outputs else []
    outs += [None] * (ctx.num_outputs - len(outs))
    from ..ir import TensorType

    outs = [t if t is not None else TensorType() for t in outs]
    if "then_branch" in ctx.attrs:
        then_t, else_t = _declared(ctx.attrs.get("then_branch")), _declared(ctx.attrs.get("else_branch"))
        pairs = [(k, a) for k, (a, b) in enumerate(zip(then_t, else_t)) if _full(a) and a == b]
    elif "body" in ctx.attrs:
        n = int(ctx.attrs.get("_n_inputs", len(ctx.inputs)))
        body_t = _declared(ctx.attrs.get("body"))
        states = ctx.inputs[2:n]
        pairs = [(k, t) for k, t in enumerate(states) if _full(t) and 1 + k < len(body_t) and body_t[1 + k] == t]
        trips = ctx.const(0) if ctx.consts else None
        if trips is not None and np.asarray(trips).size == 1:
            for k, t in enumerate(body_t[1 + len(states):]):
                if _full(t):
                    pairs.append((len(states) + k, TensorType((int(np.asarray(trips).reshape(-1)[0]), *t.shape), t.dtype)))
    else:
        return outs
    for k, t in pairs:
        if k < len(outs) and not _full(outs[k]):
            outs[k] = t
    return outs


# XLA compiles these as one While / Conditional when their bodies compile (clustering/bodies.py decides per
# node, as TF's IsCompilableWhile/If do); their FLOPs are the body's, which the cost model does not unroll.
cf = dict(groups=(CONTROL_FLOW, FUNCTIONAL), num_outputs=None, flops=lambda ctx, outs: None)
op("loop", "Loop", **plus_groups(cf, BODY_CONTROL), infer=infer_control, impl=loop, jax_impl=_lowering("loop"),
   static_inputs=(0, 1),
   doc="ONNX Loop: natively one iteration at a time; under XLA a While (lax.while_loop), or lax.scan when it "
       "stacks scan outputs (constant trip count)")
op("if", "If", **plus_groups(cf, BODY_CONTROL), infer=infer_control, min_inputs=1, impl=if_, jax_impl=_lowering("if_"),
   doc="ONNX If: natively the branch its condition picks; under XLA a Conditional (lax.cond)")
op("scan", "Scan", **plus_groups(cf, BODY_CONTROL), min_inputs=1, impl=scan, jax_impl=_lowering("scan"),
   attrs={"num_scan_inputs": 0},
   doc="ONNX Scan: states through the body, inputs sliced and outputs stacked along their axes (opset 8: batched, "
       "with sequence_lens); under XLA lax.scan")
