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
    `base_op(node)` is the TF op name.

    Loops as TF's DeadnessAnalysis::Populate: per root frame (with the frames nested in it), first the optimistic
    mode (every loop Merge of a frame gets its frame's one symbol); it converges when every Merge then reads as the
    same AndRecurrence {start,&,step} (step: its back edge's predicate without the symbol). Otherwise the
    pessimistic mode: each Merge its own symbol, then its own AndRecurrence where the step can be deduced. An
    AndRecurrence is one symbol; AND-ed with the negation of its step (an Exit: Switch:0 of LoopCond) it is its start."""
    nodes = graph.nodes
    ops = [base_op(n) for n in nodes]
    frame_of, root_of = _frames(graph, ops)
    loop_merges = [j for j, n in enumerate(nodes) if ops[j] == "Merge" and n.attrs.get("_back_edges")]
    if not loop_merges:
        return _evaluate(graph, ops, {}, {})
    idx = graph.index
    groups: dict[str, list[int]] = {}
    for j in loop_merges:
        groups.setdefault(root_of.get(frame_of[j], frame_of[j]), []).append(j)
    merge_pred: dict[int, frozenset] = {}
    recs: dict[str, tuple] = {}
    rep: dict[str, str] = {}
    for j in loop_merges:  # optimistic: one symbol per frame, the first Merge's
        rep.setdefault(frame_of[j], nodes[j].name)
        merge_pred[j] = _sym(f"{rep[frame_of[j]]}:0")
    first = _evaluate(graph, ops, merge_pred, recs)
    final = {}
    for root, members in groups.items():
        found = {j: _and_rec(graph, j, first, merge_pred[j], frame_of[j], idx) for j in members}
        by_frame: dict[str, set] = {}
        for j, r in found.items():
            by_frame.setdefault(frame_of[j], set()).add(r)
        if all(None not in rs and len(rs) == 1 for rs in by_frame.values()):
            final.update(found)
            continue
        pess = {j: _sym(f"{nodes[j].name}:0") for j in members}  # pessimistic: every Merge its own symbol
        merge_pred.update(pess)
        again = _evaluate(graph, ops, merge_pred, recs)
        for j in members:
            final[j] = _and_rec(graph, j, again, pess[j], frame_of[j], idx)
    preds_of: dict[int, frozenset] = {}
    for j in loop_merges:
        r = final.get(j)
        if r is None:
            preds_of[j] = merge_pred[j]
        else:
            name, start, step = r
            recs[name] = (start, step)
            preds_of[j] = _sym(name)
    return _evaluate(graph, ops, preds_of, recs)


def _sym(name: str) -> frozenset:
    return frozenset({frozenset({(name, True)})})


def _and_rec(graph, j: int, preds: list, symbol: frozenset, frame: str, idx) -> tuple | None:
    """(name, start, step) of loop Merge j's AndRecurrence, or None when its step cannot be deduced (TF's
    DeduceStepPredicate: the back edge's predicate is an AND holding the symbol, and nothing else holds it)."""
    node = graph.nodes[j]
    (lit,) = next(iter(symbol))
    backs = [idx.get(b.partition(":")[0]) for b in node.attrs.get("_back_edges", ())]
    if len(backs) != 1 or backs[0] is None:
        return None
    b = preds[backs[0]]
    if not b or any(lit not in t for t in b) or any((lit[0], not lit[1]) in t for t in b):
        return None
    step = _simplify({t - {lit} for t in b})
    start = frozenset()
    for r in node.inputs:
        i = idx.get(r.partition(":")[0]) if r else None
        start = _or(start, preds[i] if i is not None else TRUE)
    start = start if node.inputs else TRUE
    return f"{{{describe(start)},&,{describe(step)}}}<{frame}>", start, step


def _frames(graph, ops) -> tuple[list[str], dict[str, str]]:
    """Each node's frame ("" the root; an Enter is in the frame it enters, an Exit in its parent) and each frame's
    root frame (the outermost loop around it), as TF's BuildControlFlowInfo."""
    idx = graph.index
    frame_of: list[str] = []
    parent: dict[str, str] = {}
    for j, node in enumerate(graph.nodes):
        src = next((idx.get(r.partition(":")[0]) for r in (*node.inputs, *node.control_inputs) if r), None)
        here = frame_of[src] if src is not None and src < j else ""
        if ops[j] == "Enter":
            child = str(node.attrs.get("frame_name", ""))
            parent.setdefault(child, here)
            here = child
        elif ops[j] == "Exit":
            here = parent.get(here, "")
        frame_of.append(here)
    root_of = {}
    for f in parent:
        r = f
        while parent.get(r, "") != "":
            r = parent[r]
        root_of[f] = r
    return frame_of, root_of


def _evaluate(graph, ops, merge_pred: dict, recs: dict) -> list[frozenset]:
    """Every node's predicate, the loop Merges' given."""
    idx = graph.index
    nodes = graph.nodes
    preds: list[frozenset] = [TRUE] * len(nodes)

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

        if j in merge_pred:
            p = merge_pred[j]
        elif op == "Merge":
            p = frozenset()
            for i, k in ins:
                p = _or(p, pred_of(i, k))
            p = p if ins else TRUE  # (a Merge ignores the deadness of its control inputs)
        else:
            p = TRUE
            for i, k in ins + ctrl:
                p = _and(p, pred_of(i, k))
            if recs and op == "Exit":
                p = _leave(p, recs)
        if len(p) > _MAX_TERMS:
            p = frozenset({frozenset({(f"*{node.name}", True)})})
        preds[j] = p
    return preds


def _leave(p: frozenset, recs: dict) -> frozenset:
    """{start,&,X} & ~X is start: what leaves a loop whose only step is its condition is live as it entered."""
    out = frozenset()
    for t in p:
        term = frozenset({t})
        for lit in t:
            rec = recs.get(lit[0]) if lit[1] else None
            if rec is None:
                continue
            start, step = rec
            if len(step) == 1:
                (st,) = step
                if len(st) == 1:
                    (x,) = st
                    if (x[0], not x[1]) in t:
                        term = _and(frozenset({t - {lit, (x[0], not x[1])}}), start)
                        break
        out = _or(out, term)
    return out


def _canon(ref: str) -> str:
    return ref if ":" in ref else ref + ":0"
