"""Whether a control-flow node's shapes are static enough for lax.while_loop / lax.cond / lax.scan (XLA While/Conditional).

XLA's While carries a tuple of fixed shape through every iteration and a Conditional's branches return
one shape, so a loop-carried value that grows, branches that disagree, or stacked Loop outputs whose
length depends on the data cannot compile. Only what the types prove is refused: an unknown dimension is
left to the lowering, which refuses it then with the same words.
"""
from __future__ import annotations


def _known(t) -> bool:
    return t is not None and t.shape is not None and all(isinstance(d, int) for d in t.shape) and t.dtype is not None


def _differs(a, b) -> bool:
    return _known(a) and _known(b) and (tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype)


def _fmt(t) -> str:
    return f"{t.dtype}[{','.join(map(str, t.shape))}]"


def _own_inputs(node) -> list[str]:
    n = int(node.attrs.get("_n_inputs", len(node.inputs)))
    return list(node.inputs[:n])


def carried_change(graph, refs: list[str], body, in_offset: int, out_offset: int, what: str) -> str | None:
    """The first carried value whose shape the body changes: outer type (or the body's declared input type)
    against the body's output type."""
    ins = [v for v in body.inputs if v.data is None]
    for k, ref in enumerate(refs):
        before = graph.tensor_type(ref) if ref else None
        declared = ins[in_offset + k].type if in_offset + k < len(ins) else None
        if not _known(before):
            before = declared
        if out_offset + k >= len(body.outputs):
            return None
        after = body.tensor_type(body.outputs[out_offset + k])
        if _differs(before, after):
            name = ins[in_offset + k].name if in_offset + k < len(ins) else ref
            return (f"{what} {name!r} changes shape from {_fmt(before)} to {_fmt(after)} across iterations "
                    "(an XLA While carries fixed shapes)")
    return None


def _passes_condition_through(body) -> bool:
    """The body's condition output is its condition input (through Identity) or a true constant."""
    ins = [v for v in body.inputs if v.data is None]
    if len(ins) < 2 or not body.outputs:
        return False
    ref = body.outputs[0]
    seen = 0
    while seen < 64:
        seen += 1
        if ref == ins[1].name:
            return True
        i = body.index.get(ref.split(":")[0])
        if i is None:
            return False
        n = body.nodes[i]
        if n.op == "identity" and n.inputs:
            ref = n.inputs[0]
            continue
        if n.op == "const":
            import numpy as np

            v = n.attrs.get("value")
            return v is not None and not isinstance(v, str) and bool(np.all(np.asarray(v)))
        return False
    return False


def _is_constant(graph, ref: str) -> bool:
    if not ref:
        return True
    i = graph.index.get(ref.split(":")[0])
    if i is not None:
        return graph.nodes[i].op == "const"
    return any(v.name == ref and v.data is not None for v in graph.inputs)


def static_refusal(graph, node, bodies: list) -> str | None:
    own = _own_inputs(node)
    if node.op == "loop":
        body = bodies[0]
        states = own[2:]
        why = carried_change(graph, states, body, 2, 1, "loop-carried value")
        if why:
            return why
        n_scan = len(node.outputs) - len(states)
        if n_scan > 0:
            cond_ok = (len(own) < 2 or _is_constant(graph, own[1])) and _passes_condition_through(body)
            if not (own and own[0] and _is_constant(graph, own[0]) and cond_ok):
                return ("its scan outputs would have a length that depends on the data (XLA needs a constant trip "
                        "count and a condition that stays true to stack them)")
        return None
    if node.op == "if":
        then_b, else_b = bodies[0], bodies[-1]
        for k, (a, b) in enumerate(zip(then_b.outputs, else_b.outputs)):
            ta, tb = then_b.tensor_type(a), else_b.tensor_type(b)
            if _differs(ta, tb):
                return (f"its branches give output {k} different types: then {_fmt(ta)}, else {_fmt(tb)} "
                        "(an XLA Conditional returns one shape)")
        return None
    if node.op == "scan":
        from ..ops.control import scan_opset

        if scan_opset(node.attrs.get("body")) < 9:
            if own and own[0] and not _is_constant(graph, own[0]):
                return ("Scan of opset 8 with sequence_lens computed at run time: per-row lengths would decide "
                        "its shapes")
            return None
        m = int(node.attrs.get("num_scan_inputs", 0))
        n = len(own) - m
        return carried_change(graph, own[:n], bodies[0], 0, 0, "scan state")
    return None
