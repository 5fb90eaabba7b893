"""TensorFlow's deadness analysis, as MarkForCompilationPass uses it: a predicate per node saying when its
outputs are live; two clusters whose predicates differ are never merged.

Predicates are in disjunctive normal form: a set of conjunctions, each a set of (tensor, polarity) literals
(`pred:0` true / false as a Switch routes; `idx:0==k` for output k of a _SwitchN, which Case lowers to, and
which no OR of them simplifies away, as in TF); TRUE is the one empty conjunction. Merges take the OR of their
inputs (`p & s | p & ~s` simplifies to `p`), other nodes the AND of all inputs, control inputs included.
Loops: a loop's Merges share one symbol for their frame (TF's optimistic mode gives every Merge of a frame
the same predicate); what leaves the loop through Exit has its Enters' predicate."""
from __future__ import annotations

TRUE = frozenset({frozenset()})
_MAX_TERMS = 64  # past this, a predicate becomes a fresh symbol (TF gives up the same way on huge formulas)


def _and(p: frozenset, q: frozenset) -> frozenset:
    if p == TRUE:
        return q
    if q == TRUE:
        return p
    out = set()
    for a in p:
        for b in q:
            c = a | b
            if not any((s, not v) in c for s, v in c):
                out.add(frozenset(c))
    return _simplify(out)


def _or(p: frozenset, q: frozenset) -> frozenset:
    return _simplify(set(p) | set(q))


def _simplify(terms: set) -> frozenset:
    changed = True
    while changed:
        changed = False
        for a in list(terms):
            for lit in a:
                other = (a - {lit}) | {(lit[0], not lit[1])}
                if other in terms:
                    terms.discard(a)
                    terms.discard(frozenset(other))
                    terms.add(a - {lit})
                    changed = True
                    break
            if changed:
                break
    # absorption: a term that contains another adds nothing
    kept = {a for a in terms if not any(b < a for b in terms)}
    return frozenset(kept)


def describe(p: frozenset) -> str:
    if p == TRUE:
        return "#true"
    if not p:
        return "#false"
    terms = [" & ".join(("" if v else "~") + s for s, v in sorted(t)) or "#true" for t in p]
    return " | ".join(sorted(f"({t})" if " & " in t and len(terms) > 1 else t for t in terms))


def deadness(graph, base_op) -> list[frozenset]:
    """One predicate per node of `graph` (nodes in topological order; Merge back edges already set aside).
    `base_op(node)` is the TF op name."""
    idx = graph.index
    nodes = graph.nodes
    preds: list[frozenset] = [TRUE] * len(nodes)
    ops = [base_op(n) for n in nodes]
    enter_pred: dict[str, frozenset] = {}  # frame -> its Enters' predicate

    def src(ref: str) -> tuple[int | None, int]:
        name, _, k = ref.partition(":")
        return idx.get(name), int(k) if k.isdigit() else 0

    for j, node in enumerate(nodes):
        op = ops[j]
        ins = [src(r) for r in node.inputs if r]
        ctrl = [(idx.get(c), -1) for c in node.control_inputs]

        def pred_of(i: int | None, k: int) -> frozenset:
            if i is None:
                return TRUE
            p = preds[i]
            if ops[i] == "Switch" and k in (0, 1):
                pr = nodes[i].inputs[1] if len(nodes[i].inputs) > 1 else ""
                p = _and(p, frozenset({frozenset({(_canon(pr), k == 1)})}))
            elif ops[i] == "_SwitchN":  # output k is live when output_index == k: an integer symbol, as TF makes
                pr = nodes[i].inputs[1] if len(nodes[i].inputs) > 1 else ""
                p = _and(p, frozenset({frozenset({(f"{_canon(pr)}=={k}", True)})}))
            return p

        if op == "Merge":
            if node.attrs.get("_back_edges"):
                frame = _frame_symbol(node, nodes, idx)
                p = frozenset({frozenset({(f"*{frame}", True)})})
            else:
                p = frozenset()
                for i, k in ins:
                    p = _or(p, pred_of(i, k))
                p = p if ins else TRUE  # (a Merge ignores the deadness of its control inputs)
        elif op == "Exit":
            frame = _frame_symbol(node, nodes, idx)
            p = enter_pred.get(frame, TRUE)
        else:
            p = TRUE
            for i, k in ins + ctrl:
                p = _and(p, pred_of(i, k))
            if op == "Enter":
                frame = node.attrs.get("frame_name", "")
                enter_pred[frame] = _and(enter_pred.get(frame, TRUE), p)
        if len(p) > _MAX_TERMS:
            p = frozenset({frozenset({(f"*{node.name}", True)})})
        preds[j] = p
    return preds


def _canon(ref: str) -> str:
    return ref if ":" in ref else ref + ":0"


def _frame_symbol(node, nodes, idx) -> str:
    """The frame a loop node belongs to: the frame_name of the Enter found walking its inputs up."""
    seen = set()
    todo = [node]
    while todo:
        n = todo.pop()
        if n.name in seen:
            continue
        seen.add(n.name)
        if n.op_type.endswith(".Enter"):
            return str(n.attrs.get("frame_name", ""))
        for r in (*n.inputs, *n.control_inputs, *n.attrs.get("_back_edges", ())):
            i = idx.get(r.partition(":")[0])
            if i is not None:
                todo.append(nodes[i])
    return node.name
