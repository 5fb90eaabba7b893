"""JAX lowerings of ONNX Loop, If and Scan: lax.while_loop / lax.scan / lax.cond over the body's own JAX lowerings.

The body runs through the runtime's runner with use_jax, so every body op is traced with its own entry's
lowering; values that are concrete (constants, a condition passed through) fold natively, which is how a
Loop with stacked outputs learns statically that its condition stays true. What XLA cannot express (a
carried value changing shape, branches of different shapes, a data-dependent trip count for stacked
outputs) is refused with the same words clustering uses (clustering/bodies_static.py).
"""
from __future__ import annotations

import numpy as np

from .arrays import Unsupported, present
from .control_body import input_names, outer_feeds, run_body, scan_opset


def _concrete(v) -> bool:
    return isinstance(v, (np.ndarray, np.generic))


def _scalar(xp, v, dtype):
    return xp.reshape(xp.asarray(v), ()).astype(dtype)


def _fixed(xp, new, old, what: str):
    """A carried value after one step: same shape as before (XLA While), the carried dtype."""
    new = xp.asarray(new)
    if tuple(new.shape) != tuple(np.shape(old)):
        raise Unsupported(f"{what} changes shape from {list(np.shape(old))} to {list(new.shape)} across iterations "
                          "(an XLA While carries fixed shapes)")
    return new.astype(xp.asarray(old).dtype)


MAX_UNROLL = 256  # a constant trip count up to this many iterations may be unrolled into the trace


def loop(xp, a, *args):
    """lax.while_loop (no stacked outputs) or lax.scan (stacked outputs, constant trip count); where the body
    needs a static iteration number (a slice at `i`), a constant trip count is unrolled instead, as XLA
    does for loops it can count."""
    try:
        return _loop(xp, a, *args)
    except Unsupported as e:
        n = int(a.get("_n_inputs", len(args)))
        own = list(args[:n]) + [None] * max(0, 2 - n)
        if not (present(own[0]) and _concrete(own[0]) and (not present(own[1]) or _concrete(own[1]))):
            raise
        if int(np.asarray(own[0]).reshape(-1)[0]) > MAX_UNROLL:
            raise
        return _unrolled(xp, a, own, n, args[n:], e)


def _unrolled(xp, a, own: list, n: int, outer_args, why: Exception):
    body, outer = a.get("body"), outer_feeds(a, outer_args)
    names = input_names(body)
    trips = int(np.asarray(own[0]).reshape(-1)[0])
    cond = bool(np.asarray(own[1]).reshape(-1)[0]) if present(own[1]) else True
    state = list(own[2:n])
    scans: list[list] = []
    i = 0
    while i < trips and cond:
        outs = run_body(a, body, {**outer, **dict(zip(names, [np.array(i, np.int64), np.array(cond), *state]))}, True)
        if not _concrete(outs[0]):
            raise why
        cond = bool(np.asarray(outs[0]).reshape(-1)[0])
        state = list(outs[1:1 + len(state)])
        for k, v in enumerate(outs[1 + len(state):]):
            if len(scans) <= k:
                scans.append([])
            scans[k].append(xp.asarray(v))
        i += 1
    n_scan = int(a.get("_num_outputs", len(state))) - len(state)
    if n_scan and not scans:
        raise why
    out = state + [xp.stack(s) for s in scans]
    return tuple(out) if len(out) != 1 else out[0]


def _loop(xp, a, *args):
    from jax import lax

    n = int(a.get("_n_inputs", len(args)))
    own = list(args[:n]) + [None] * max(0, 2 - n)
    body, outer = a.get("body"), outer_feeds(a, args[n:])
    names = input_names(body)
    state = [xp.asarray(s) for s in own[2:n]]
    n_scan = int(a.get("_num_outputs", len(state))) - len(state)

    def step(i, cond, st):
        outs = run_body(a, body, {**outer, **dict(zip(names, [i, cond, *st]))}, True)
        new = [_fixed(xp, v, s, f"loop-carried value {names[2 + k]!r}") for k, (v, s) in
               enumerate(zip(outs[1:1 + len(st)], st))]
        return outs[0], new, list(outs[1 + len(st):])

    if n_scan == 0:
        trips = _scalar(xp, own[0], np.int64) if present(own[0]) else None
        c0 = _scalar(xp, own[1], np.bool_) if present(own[1]) else xp.asarray(True)

        def cond_fn(carry):
            i, c, _ = carry
            return c if trips is None else xp.logical_and(c, i < trips)

        def body_fn(carry):
            i, c, st = carry
            c2, new, _ = step(i, c, list(st))
            return i + 1, _scalar(xp, c2, np.bool_), tuple(new)

        _, _, final = lax.while_loop(cond_fn, body_fn, (xp.asarray(0, np.int64), c0, tuple(state)))
        out = list(final)
        return tuple(out) if len(out) != 1 else out[0]
    # stacked outputs: their length is the trip count, so it must be a constant and the condition stay true
    if not (present(own[0]) and _concrete(own[0])) or (present(own[1]) and not _concrete(own[1])):
        raise Unsupported("Loop scan outputs need a constant trip count and condition under XLA "
                          "(their length would depend on the data)")
    trips = int(np.asarray(own[0]).reshape(-1)[0])
    if present(own[1]) and not bool(np.asarray(own[1]).reshape(-1)[0]):
        trips = 0

    def f(st, i):
        c2, new, scans = step(i, np.array(True), list(st))
        if not (_concrete(c2) and bool(np.all(c2))):
            raise Unsupported("Loop scan outputs with a condition the body may turn false: their length would "
                              "depend on the data")
        return tuple(new), tuple(xp.asarray(v) for v in scans)

    final, ys = lax.scan(f, tuple(state), xp.arange(trips, dtype=np.int64))
    out = list(final) + list(ys)
    return tuple(out) if len(out) != 1 else out[0]


def if_(xp, a, cond, *outer_args):
    import jax
    from jax import lax

    feeds = outer_feeds(a, outer_args)
    then_b, else_b = a.get("then_branch"), a.get("else_branch")
    if _concrete(cond):  # decided at trace time: only the branch taken is traced
        outs = run_body(a, then_b if bool(np.asarray(cond).reshape(-1)[0]) else else_b, feeds, True)
        return tuple(outs) if len(outs) != 1 else outs[0]

    def branch(b):
        return lambda: tuple(xp.asarray(v) for v in run_body(a, b, feeds, True))
    st, se = jax.eval_shape(branch(then_b)), jax.eval_shape(branch(else_b))
    for k, (x, y) in enumerate(zip(st, se)):
        if x.shape != y.shape or x.dtype != y.dtype:
            raise Unsupported(f"If branches give output {k} different types: then {x.dtype}{list(x.shape)}, "
                              f"else {y.dtype}{list(y.shape)} (an XLA Conditional returns one shape)")
    outs = lax.cond(_scalar(xp, cond, np.bool_), branch(then_b), branch(else_b))
    return tuple(outs) if len(outs) != 1 else outs[0]


def _scan_steps(xp, a, body, outer: dict, states: list, xs: list, n: int):
    """lax.scan of the body over xs (already time-major): (final states, stacked scan outputs)."""
    from jax import lax

    names = input_names(body)

    def f(st, sl):
        outs = run_body(a, body, {**outer, **dict(zip(names, [*st, *sl]))}, True)
        new = [_fixed(xp, v, s, f"scan state {names[k]!r}") for k, (v, s) in enumerate(zip(outs[:n], st))]
        return tuple(new), tuple(xp.asarray(v) for v in outs[n:])

    final, ys = lax.scan(f, tuple(xp.asarray(s) for s in states), tuple(xs))
    return list(final), list(ys)


def scan(xp, a, *args):
    body = a.get("body")
    n_in = int(a.get("_n_inputs", len(args)))
    own, outer = list(args[:n_in]), outer_feeds(a, args[n_in:])
    if scan_opset(body) < 9:
        return _scan8(xp, a, own, outer)
    m = int(a.get("num_scan_inputs", 0))
    n = n_in - m
    in_axes = list(a.get("scan_input_axes") or [0] * m)
    in_dirs = list(a.get("scan_input_directions") or [0] * m)
    xs = []
    for x, ax, d in zip(own[n:], in_axes, in_dirs):
        x = xp.asarray(x)
        x = xp.moveaxis(x, ax % x.ndim, 0)
        xs.append(x[::-1] if d else x)
    final, ys = _scan_steps(xp, a, body, outer, own[:n], xs, n)
    out_axes = list(a.get("scan_output_axes") or [0] * len(ys))
    out_dirs = list(a.get("scan_output_directions") or [0] * len(ys))
    stacked = []
    for y, ax, d in zip(ys, out_axes, out_dirs):
        y = y[::-1] if d else y
        stacked.append(xp.moveaxis(y, 0, ax % y.ndim))
    out = final + stacked
    return tuple(out) if len(out) != 1 else out[0]


def _scan8(xp, a, own: list, outer: dict):
    """Opset-8 Scan: one lax.scan per batch row (the batch is static); sequence_lens must be a constant."""
    lens, rest = own[0], own[1:]
    m = int(a.get("num_scan_inputs", 0))
    n = len(rest) - m
    if present(lens) and not _concrete(lens):
        raise Unsupported("Scan of opset 8 with sequence_lens computed at run time (per-row lengths would "
                          "decide shapes)")
    dirs = list(a.get("directions") or [0] * m)
    xs = [xp.asarray(x) for x in rest[n:]]
    batch, steps = int(xs[0].shape[0]), int(xs[0].shape[1])
    lens = np.asarray(lens).reshape(-1) if present(lens) else np.full(batch, steps)
    finals, outs = [], []
    for b in range(batch):
        length = int(lens[b])
        seq = [x[b, :length][::-1] if d else x[b, :length] for x, d in zip(xs, dirs)]
        fin, ys = _scan_steps(xp, a, a.get("body"), outer, [xp.asarray(s)[b] for s in rest[:n]], seq, n)
        finals.append(fin)
        outs.append([xp.pad(y, [(0, steps - length)] + [(0, 0)] * (y.ndim - 1)) for y in ys])
    out = [xp.stack([f[k] for f in finals]) for k in range(n)] + \
        [xp.stack([o[k] for o in outs]) for k in range(len(outs[0]) if outs else 0)]
    return tuple(out) if len(out) != 1 else out[0]
