"""How many times a while loop runs at most, read from its induction variable, as XLA's while-loop analysis
reads it (xla/service/while_loop_analysis.cc, ComputeWhileLoopTripCountUpperBound): a counter that starts at a
constant and steps by a constant every iteration, compared with a constant limit in the loop's condition.

The condition may join the comparison with anything else by AND (a greedy decoder: `i < max_len and not
done`), or gate it by an If whose other branch is false (torch.onnx's scripted loops): that can only end the
loop earlier, so the count stays an upper bound. Negations and casts of a boolean are seen through.

Two loops read this way:
- ONNX Loop: the body's first output is the condition, computed after the body from the iteration's inputs;
  the counter is the iteration number (its first body input) or a carried value whose body output adds a
  constant to it. The first iteration runs whatever the condition says (the node's own condition input is
  taken as true: an upper bound).
- TensorFlow While: the condition function runs before each iteration, on the loop variables; the body
  function's outputs are the next variables.
A limit may be a constant of the body, of any enclosing graph, or a loop variable the body hands back
unchanged whose initial value is a constant."""
from __future__ import annotations

import math

import numpy as np

from ..ir import Graph, parse_ref
from ..ops import REGISTRY

# per comparison (OpDef.loop_role), as `a OP b`: (whether b is the smaller side, whether equality holds)
_ORDER = {"<": (False, False), "<=": (False, True), ">": (True, False), ">=": (True, True)}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}
MAX_TRIPS = 1 << 40   # a bound this large says nothing a cost can use


def _op(nd) -> str | None:
    """What the node computes in a condition (OpDef.loop_role): "<", "&", "+", "=", "const"...; None: nothing
    read through."""
    opdef = REGISTRY.ops.get(nd.op) if nd.known else None
    return opdef.loop_role if opdef is not None else None


class Scope:
    """A graph's constants: its Const nodes and inputs with data; a loop variable passed through unchanged
    with a constant start (`fixed`); and, for a name it reads from outside (`links`: a body's name for it ->
    the enclosing graph's), its enclosing scope's."""

    def __init__(self, graph: Graph, parent: "Scope | None" = None, formal: frozenset = frozenset(),
                 fixed: dict | None = None, links: dict | None = None):
        self.graph, self.parent, self.formal, self.fixed = graph, parent, formal, fixed or {}
        self.links = links or {}
        self.inputs = {v.name: v for v in graph.inputs}

    @classmethod
    def of_body(cls, node, body: Graph, parent: "Scope", formal: tuple = (), fixed: dict | None = None) -> "Scope":
        """The scope of a Loop's or an If's body graph, its outer reads linked to the node's inputs."""
        own = int(node.attrs.get("_n_inputs", len(node.inputs)))
        links = dict(zip(node.attrs.get("_outer") or (), node.inputs[own:]))
        return cls(body, parent, frozenset(formal), fixed, links)

    def node(self, ref: str):
        """The node of this graph that makes `ref` (None: an input, or not made here)."""
        j = self.graph.index.get(parse_ref(ref).node)
        return self.graph.nodes[j] if j is not None else None

    def const(self, ref: str):
        """The value `ref` holds when it is a constant, else None."""
        if ref in self.fixed:
            return self.fixed[ref]
        nd = self.node(ref)
        if nd is not None:
            role = _op(nd)
            if role not in ("=", "const") or parse_ref(ref).index or (role == "=" and not nd.inputs):
                return None
            inner = [self.const(nd.inputs[0])] if role == "=" else []   # (an identity or a cast of a constant)
            if inner and inner[0] is None:
                return None
            opdef = REGISTRY.ops[nd.op]
            try:
                return np.asarray(opdef.impl(np, {**opdef.attrs, **nd.attrs}, *inner))
            except Exception:  # noqa: BLE001 - a constant xcviz cannot read is no constant here
                return None
        v = self.inputs.get(ref)
        if v is not None and v.data is not None:
            return np.asarray(v.data)
        if self.parent is not None and ref not in self.formal:
            return self.parent.const(self.links.get(ref, ref))
        return None

    def scalar(self, ref: str) -> float | None:
        c = self.const(ref)
        if c is None or c.size != 1 or c.dtype.kind not in "iuf":
            return None
        return c.reshape(-1)[0].item()


def onnx_loop_trips(graph: Graph, node) -> int | None:
    """At most how many iterations an ONNX Loop node of `graph` runs, by its induction variable (None: none
    found)."""
    sub = node.attrs.get("body")
    if sub is None or getattr(sub, "graph", None) is None:
        return None
    body, formal = sub.graph, tuple(sub.inputs)
    own = int(node.attrs.get("_n_inputs", len(node.inputs)))
    outer = Scope(graph)
    carried = list(zip(formal[2:], node.inputs[2:own], body.outputs[1:]))
    fixed = {name: outer.const(init) for name, init, out in carried if out == name and init}
    scope = Scope.of_body(node, body, outer, formal, {k: v for k, v in fixed.items() if v is not None})
    counters = {formal[0]: (0, 1)} if formal else {}    # the iteration number: 0, 1, 2...
    for name, init, out in carried:
        counter = _counter(scope, outer.scalar(init) if init else None, name, out)
        if counter:
            counters[name] = counter
    m = _first_false(scope, body.outputs[0], counters, False) if body.outputs else None
    return None if m is None else max(1, m + 1)   # (the condition after iteration k reads its start's values)


def tf_while_trips(cond: Graph, body: Graph, inits: list, outer: Scope) -> int | None:
    """At most how many iterations a TF While runs: its `cond` and `body` function graphs, the loop variables'
    initial values `inits` (refs of the While's graph, whose constants `outer` reads)."""
    names, outs = [v.name for v in body.inputs], list(body.outputs)
    if len(names) != len(inits) or len(outs) != len(inits) or len(cond.inputs) != len(inits):
        return None
    starts = [outer.scalar(r) if r else None for r in inits]
    fixed = {}
    body_scope = Scope(body)
    counters = {}
    cond_names = [v.name for v in cond.inputs]
    for k, (name, out) in enumerate(zip(names, outs)):
        if _passes(body_scope, out, name) and inits[k]:
            c = outer.const(inits[k])
            if c is not None:
                fixed[cond_names[k]] = c
        counter = _counter(body_scope, starts[k], name, out)
        if counter:
            counters[cond_names[k]] = counter
    scope = Scope(cond, None, frozenset(cond_names), fixed)
    return None if not cond.outputs else _first_false(scope, cond.outputs[0], counters, False)


def _passes(scope: Scope, out: str, name: str) -> bool:
    """Whether body output `out` is its input `name` unchanged (through Identity nodes)."""
    while out != name:
        nd = scope.node(out)
        if nd is None or _op(nd) != "=" or not nd.inputs:
            return False
        out = nd.inputs[0]
    return True


def _counter(scope: Scope, start, name: str, out: str) -> tuple | None:
    """(start, step) of a loop variable `name` whose next value `out` adds a constant to it, else None."""
    if start is None or isinstance(start, bool):
        return None
    nd = scope.node(out)
    while nd is not None and _op(nd) == "=" and nd.inputs:
        nd = scope.node(nd.inputs[0])
    if nd is None or _op(nd) not in ("+", "-") or len(nd.inputs) != 2:
        return None
    a, b = nd.inputs
    if _passes(scope, a, name):
        step = scope.scalar(b)
    elif _op(nd) == "+" and _passes(scope, b, name):
        step = scope.scalar(a)
    else:
        return None
    if step is None:
        return None
    step = -step if _op(nd) == "-" else step
    return (start, step) if step != 0 else None


def _first_false(scope: Scope, ref: str, counters: dict, negate: bool) -> int | None:
    """The first j = 0, 1, 2... at which predicate `ref` (negated when `negate`) is false, where each counter
    holds start + j * step; None where the predicate is not read as such a bound."""
    nd = scope.node(ref)
    if nd is None:
        return None
    op, ins = _op(nd), list(nd.inputs)
    if op == "=" and ins:   # (an identity, or a cast of a comparison's boolean: it keeps its truth)
        return _first_false(scope, ins[0], counters, negate)
    if op == "!" and ins:
        return _first_false(scope, ins[0], counters, not negate)
    if (op == "&" and not negate) or (op == "|" and negate):   # false as soon as either side is
        found = [m for m in (_first_false(scope, r, counters, negate) for r in ins) if m is not None]
        return min(found) if found else None
    if nd.op == "if" and not negate and ins:
        return _if_bound(scope, nd, parse_ref(ref).index, counters)
    if op in _ORDER and len(ins) == 2:
        return _comparison(scope, _NEGATED[op] if negate else op, ins, counters)
    return None


def _if_bound(scope: Scope, nd, k: int, counters: dict) -> int | None:
    """An If whose output `k` is false in one branch is true only when its condition picks the other."""
    for branch, negate in (("else_branch", False), ("then_branch", True)):
        b = nd.attrs.get(branch)
        g = getattr(b, "graph", None)
        if g is None or k >= len(g.outputs):
            continue
        value = Scope.of_body(nd, g, scope).const(g.outputs[k])
        if value is not None and value.size == 1 and not bool(value.reshape(-1)[0]):
            return _first_false(scope, nd.inputs[0], counters, negate)
    return None


def _comparison(scope: Scope, op: str, ins: list, counters: dict) -> int | None:
    """The first j at which `a OP b` fails, one side a counter (plus a constant), the other a constant."""
    flip, equal = _ORDER[op]
    small, large = (ins[1], ins[0]) if flip else (ins[0], ins[1])   # holds while small < large (<= if `equal`)
    for x, limit, sign in ((small, large, 1), (large, small, -1)):   # (a counter on the large side counts down)
        term, bound = _term(scope, x, counters), scope.scalar(limit)
        if term is None or bound is None:
            continue
        start, step, bound = sign * term[0], sign * term[1], sign * bound
        if step <= 0:   # it moves away from its limit: no bound
            return None
        d = bound - start
        m = max(0, math.floor(d / step) + 1 if equal else math.ceil(d / step))
        return m if m <= MAX_TRIPS else None
    return None


def _term(scope: Scope, ref: str, counters: dict) -> tuple | None:
    """(value at j = 0, step per j) of `ref` when it is a counter, or a counter plus a constant."""
    if ref in counters:
        return counters[ref]
    nd = scope.node(ref)
    if nd is None:
        return None
    op = _op(nd)
    if op == "=" and nd.inputs:
        return _term(scope, nd.inputs[0], counters)
    if op in ("+", "-") and len(nd.inputs) == 2:
        a, b = nd.inputs
        for var, c in ((a, b), (b, a)) if op == "+" else ((a, b),):
            t, k = _term(scope, var, counters), scope.scalar(c)
            if t is not None and k is not None:
                return (t[0] + (k if op == "+" else -k), t[1])
    return None
