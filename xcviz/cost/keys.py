"""Cost keys: nodes with equal (op, attributes, input and output types) cost the same, so each key is costed once."""
from __future__ import annotations

import math
from collections.abc import Iterable
from itertools import chain, repeat

import numpy as np

from ..ir import Graph
from ..ir.attrs import attrs_key
from ..ops import LISTS, REGISTRY
from ..ops.rules import Ctx
from .control import CONTROL, control_cost
from .params import CONSTANT_OPS
from .view import CostView


LIST_OPS = REGISTRY.names(LISTS)   # TensorList ops: their handles (a variant, no dtype) move no bytes
SLOTS = 8               # nodes with more inputs or outputs get a cost key of their own (rare; keeps keys small)


def _dense(code: np.ndarray, radix: int) -> tuple[np.ndarray, int]:
    """Renumber codes in [0, radix) to [0, m), m the number of distinct ones."""
    if radix <= 4 * len(code) + 4096:
        # (a table over [0, radix) whose pages are written only where a code is: zeros and empty arrays are
        # mapped lazily, so a sparse radix of millions costs the codes' pages, not a running sum over all)
        seen = np.zeros(radix, bool)
        seen[code] = True
        used = np.flatnonzero(seen)
        rank = np.empty(radix, np.int64)
        rank[used] = np.arange(len(used))
        return rank[code], len(used)
    uniq, inverse = np.unique(code, return_inverse=True)
    return inverse.reshape(-1), len(uniq)


def group_ids(columns: Iterable[tuple[np.ndarray, int]], n: int, bound: int | None = None) -> tuple[np.ndarray, int]:
    """One dense id per distinct row of the columns (each with its radix): a mixed-radix number per row,
    renumbered before it could overflow int64. (Each column is read before the next is asked for; `bound`,
    if known, is at least the product of the radices: below 2**31 the numbers are int32, half the memory
    traffic.)"""
    code, radix = np.zeros(n, np.int32 if bound is not None and bound < 2**31 else np.int64), 1
    for col, r in columns:
        if r <= 1:
            continue
        if radix * r > 2**62:
            code, radix = _dense(code, radix)
        code *= r   # (in place: no array made per column)
        code += col
        radix *= r
    return _dense(code, radix)


def _slots(tids: np.ndarray, start: np.ndarray, count: np.ndarray):
    """Per node, 1 + the type id of its s-th input (output), or 0 where it has none: one column per s up
    to SLOTS, each made in the same buffer (group_ids adds each up before the next is made)."""
    n = len(count)
    if not n or not len(tids):
        return
    if len(tids) == n and (count == 1).all():  # (one each, in node order: the usual outputs)
        yield tids + 1
        return
    col = np.empty(n, tids.dtype)
    for s in range(min(int(count.max()), SLOTS)):
        # node j's s-th is tids[start[j] + s]: taken from tids[s:] at start, clipped where j has none
        np.take(tids[s:], start, out=col, mode="clip")
        col += 1
        col *= count > s
        yield col


def cost_keys(graph: Graph, flat: CostView) -> tuple[np.ndarray, list[int]]:
    """Per node the id of its cost key, and one node per key.

    FLOPs and bytes are pure functions of (op, known, scalar attributes, input and output types); big graphs
    repeat a few hundred keys, so each is costed once. Types count by identity (see CostView), attributes only
    where the op's FLOP rule reads them; a node with non-scalar ones (or more than SLOTS inputs or outputs)
    is a key of its own."""
    attrs = flat.columns.attrs
    n = len(attrs)
    wide = [count for count in (flat.arity, None if flat.one_output else flat.n_out) if n and count is not None
            and int(count.max()) > SLOTS]
    alone = np.logical_or.reduce([count > SLOTS for count in wide]) if wide else np.zeros(n, bool)
    akey, count = attribute_codes(attrs, flat.with_attrs, alone, flat.attr_codes)
    radix = len(flat.types) + 1  # type id + 1; 0 = no such input/output
    # (every op known: a column of one value, which changes neither the keys nor their order, is left out)
    columns = [(flat.op, len(flat.op_names))] + ([] if flat.all_known else [(flat.known.astype(np.int64), 2)])
    columns.append((akey, count))
    if alone.any():
        columns.append((np.where(alone, np.arange(1, n + 1), 0), n + 1))
    outs = [flat.out_tid + 1] if flat.one_output else _slots(flat.out_tid, flat.out_start, flat.n_out)
    slots = chain(_slots(flat.tid_of, flat.edge_start, flat.arity), outs)
    n_slots = sum(min(int(c.max()) if n else 0, SLOTS) for c in (flat.arity, None if flat.one_output else flat.n_out)
                  if c is not None) + flat.one_output
    bound = math.prod(r for _, r in columns) * radix ** n_slots
    sig, m = group_ids(chain(columns, zip(slots, repeat(radix))), n, bound)   # (the s-th input, output of each node)
    rep = np.empty(m, np.int64)
    rep[sig] = np.arange(n)  # any node of a key (they all cost the same)
    return sig, rep.tolist()


def attribute_codes(attrs: list, rows: list[int], alone: np.ndarray,
                    loaded: tuple | None = None) -> tuple[np.ndarray, int]:
    """Per node, a code of its attributes by attrs_key (0: none, or not read; `rows`: the nodes whose are
    read), and how many codes; a node whose attributes have no key (a container value) is set `alone`.
    `loaded`: the loader's (code per node, a dict per code) of passes.columns.attr_codes, whose equal codes are
    equal dicts (a float zero or an unhashable one has a code of its own): attrs_key then runs per code.
    Else dicts are first told apart at C speed by their items and value types; attrs_key runs once per
    distinct such dict, and per node only where a float zero or NaN could make equal items differ in it."""
    code = np.zeros(len(attrs), np.int64)
    table: dict = {}
    if loaded is not None:
        rows_a = np.array(rows, np.int64)
        lcode, reps = loaded
        have = lcode[rows_a]
        keys = {c: attrs_key(reps[c] or {}) for c in np.flatnonzero(np.bincount(have, minlength=len(reps))).tolist()}
        to = np.zeros(len(reps), np.int64)
        for c, key in keys.items():
            to[c] = -1 if key is None else table.setdefault(key, len(table) + 1)
        per = to[have]
        alone[rows_a[per < 0]] = True
        code[rows_a] = np.maximum(per, 0)
        return code, len(table) + 1
    dicts = list(map(attrs.__getitem__, rows))
    try:
        seen: dict = {}
        first = list(map(seen.setdefault, zip(map(tuple, map(dict.items, dicts)),
                                               map(tuple, map(map, repeat(type), map(dict.values, dicts)))),
                         range(len(dicts))))
    except TypeError:  # an unhashable value: one by one
        seen, first = {}, []
    if len(seen) == len(dicts) or not seen:   # (nothing shared: one by one)
        one_by_one = range(len(dicts))
    else:
        rep_code = {}
        one_by_one = []
        for f in seen.values():
            d = dicts[f]
            if any(type(v) is float and (v == 0 or v != v) for v in d.values()):  # -0.0 == 0.0; nan != nan
                rep_code[f] = -1
                continue
            key = attrs_key(d)
            rep_code[f] = -2 if key is None else table.setdefault(key, len(table) + 1)
        per = np.fromiter(map(rep_code.__getitem__, first), np.int64, len(first))
        rows_a = np.array(rows, np.int64)
        alone[rows_a[per == -2]] = True
        code[rows_a] = np.maximum(per, 0)
        one_by_one = np.flatnonzero(per == -1).tolist()
    for i in one_by_one:
        key = attrs_key(dicts[i])
        if key is None:
            alone[rows[i]] = True
        else:
            code[rows[i]] = table.setdefault(key, len(table) + 1)
    return code, len(table) + 1


def costs_per_key(graph: Graph, flat: CostView, reps: list[int], runs: dict | None = None) -> list[tuple]:
    """(FLOPs, bytes read and written, bytes written (0 where unknown)) of each key's node, as the per-node
    rules give them; `runs`, when given, gets each Loop/If/Scan key's (iterations, dispatches) where its body
    can be costed (cost.control), from the same costing of the body."""
    dims = graph.dims
    ops = REGISTRY.ops
    starts = flat.edge_start
    out = []
    cols = flat.columns
    for k, j in enumerate(reps):
        op, known, attrs = cols.op[j], cols.known[j], cols.attrs[j]
        start = int(starts[j])
        types = [flat.types[t].bind(dims) for t in flat.tid_of[start:start + int(flat.arity[j])].tolist()]
        outs = [t.bind(dims) for t in cols.results[cols.rid[j]]]
        opdef = ops.get(op) if known else None
        # a list's handle (a variant: no dtype) is a reference, its op moves the item; an Identity of one moves nothing
        handles = opdef is not None and (op in LIST_OPS or (op == "tf.Identity" and types and types[0].dtype is None))
        total: int | None = 0
        for t in (*types, *outs):
            b = 0 if handles and t.dtype is None else t.nbytes()
            total = None if b is None or total is None else total + b
        written = sum(t.nbytes() or 0 for t in outs)
        flops = None
        if opdef is not None and op in CONTROL:  # the body's cost times its trips (cost.control)
            flops, body_bytes, _, key_runs = control_node_cost(graph, graph.nodes[j])  # (rare: one node object each)
            if runs is not None and key_runs is not None:
                runs[k] = key_runs
            # an unknown body leaves the node's own bytes (its FLOPs are what is unknown)
            total = total + body_bytes if body_bytes is not None and total is not None else total
        elif opdef is not None and opdef.flops is not None:
            ctx = Ctx(types, {**opdef.attrs, **attrs}, [], outs, len(outs))
            try:
                flops = opdef.flops(ctx, outs)
                steps = opdef.steps(ctx, outs) if opdef.steps is not None and runs is not None else None
            except Exception:  # noqa: BLE001 - a cost rule never fails a run; the FLOPs are just unknown
                flops = steps = None
            if steps is not None:   # a recurrence: its steps' kernels and calls (the entry's `steps` fact)
                runs[k] = steps
        out.append((flops, total, written))
    return out


def control_node_cost(graph: Graph, node) -> tuple:
    """(FLOPs, bytes, why unknown, runs) of a Loop, If or Scan node: its body costed as a graph (cost.control)."""
    return control_cost(graph, node, graph_cost)


def graph_cost(g: Graph) -> tuple:
    """Sum of every node's FLOPs and bytes (cost.keys), or the first node that makes it unknown; and the runs
    (iterations, dispatches): the ops it runs (a constant is held, not run; a loop counts its own)."""
    flat = CostView(g)
    sig, reps = cost_keys(g, flat)
    per_key = costs_per_key(g, flat, reps)
    flops = nbytes = iterations = dispatches = 0
    for j, k in enumerate(sig.tolist()):
        f, b, _ = per_key[k]
        nd = g.nodes[j]
        if f is None or b is None:
            return None, None, f"body node {nd.name!r} ({nd.op_type}) has {'no FLOP count' if f is None else 'unknown bytes'}", None
        flops, nbytes = flops + f, nbytes + b
        if nd.known and nd.op in CONTROL:
            it, d = control_node_cost(g, nd)[3]
            iterations, dispatches = iterations + it, dispatches + d
        elif not (nd.known and nd.op in CONSTANT_OPS):
            dispatches += 1
    return flops, nbytes, None, (iterations, dispatches)
