"""Pictures by the model's own layers (ir.scopes): the scope index (one box per scope cut at a depth, coloured
by how much of it XLA compiles, repeated blocks drawn once as ×N) and one scope drawn op by op.

A box's label: its name (`layers.0 … layers.31 ×31` for a repeated block), `N ops · k clusters · f fallbacks`
and its coverage; its fill runs from the fallback red (nothing compiled) to green (all compiled). Edges
between boxes sum the tensors that cross, amber where they cross a cluster boundary. Ops that sit directly in
a scope above the cut are drawn as themselves. SVG classes: `xc_scope` (a box), `xc_scope_repeat` (a
repeated block), plus the expanded view's own (dot.py)."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Graph, Value
from ..ir.scopes import SEP, Fold, ScopeTree, cut, fold_index, parent_of
from .dot_parts import QUIET, draw_node, edge_text, penwidth, text
from .params import StoredParams, is_stored
from .tables import BOUNDARY
from .units import fmt_bytes, fmt_pct
from .view import Group, View

READABLE = 300      # nodes: above this a picture of every op is no longer read at a glance (see docs/rendering.md)
FEW_BOXES = 4       # the automatic depth is the first whose index has at least this many scope boxes
OWN_OPS = 8         # more ops than this directly in a scope above the cut are one box, not each drawn
OWN = "(ops)"       # that box's last level
MAX_SIBLINGS = 40   # more layers than this side by side under one parent are drawn in RUNS runs
RUNS = 20
RUN = " ×layers "   # (in a run's box key: `first … last ×layers N`)
SHARED = 3          # graph inputs/outputs touching more boxes than this are drawn once per box
MAX_BOXES = 400     # an index with more boxes than this is not drawn (render draws collapsed instead)


@dataclass(frozen=True)
class ScopeCut:
    """Which scope each node is drawn in: `box[i]` the box's path, None for a node drawn as itself (or not
    drawn: outside `under`), "" for a node not drawn (a folded copy's op, drawn by its first copy's)."""

    under: str
    depth: int
    box: list
    inside: list  # bool per node: under `under`


def top_depth(tree: ScopeTree, under: str = "", hidden: frozenset[int] = frozenset()) -> int:
    """The depth of the first level below `under` with more than one thing to draw (a chain of single scopes,
    `model/decoder`, is passed through); scopes holding only `hidden` nodes (parameters) do not count."""
    drawn = [0]
    for i in tree.order:
        drawn.append(drawn[-1] + (i not in hidden))

    def has(s) -> bool:
        return drawn[s.span[1]] > drawn[s.span[0]]

    scope = tree.find(under)
    while True:
        kids = [c for c in scope.children if has(c)]
        if len(kids) != 1 or any(i not in hidden for i in scope.nodes):
            return scope.depth + 1
        scope = kids[0]


def auto_depth(tree: ScopeTree, folds: tuple[Fold, ...], under: str = "",
               hidden: frozenset[int] = frozenset()) -> tuple[int, int]:
    """(depth, boxes): the depth the scope index of `under` is drawn at, the first where `under` splits into
    FEW_BOXES scopes or more (else the deepest); boxes > MAX_BOXES when that depth gives no readable index."""
    first = top_depth(tree, under, hidden)
    got = (first, 0)
    for d in range(first, min(max(first, tree.max_depth), first + 32) + 1):   # (a hostile file nests 10^4 deep)
        sc = scope_cut(tree, folds, under, d, hidden)
        got = (d, count_boxes(sc))
        # (split counted before folding: a stack of 40 identical layers is 40 parts, drawn as one box)
        if count_boxes(scope_cut(tree, (), under, d, hidden) if folds else sc, scopes_only=True) >= FEW_BOXES:
            break
    return got


def scope_cut(tree: ScopeTree, folds: tuple[Fold, ...], under: str, depth: int,
              hidden: frozenset[int] = frozenset()) -> ScopeCut:
    """Each node under `under` in its scope cut to `depth` levels; the copies of a repeated block are drawn as
    their first (fold.representative)."""
    copies = {p: f.representative for p, f in fold_index(folds).items()
              if p != f.representative and not (under == p or under.startswith(p + SEP))}  # (an opened copy stays)
    inside = [False] * len(tree.paths)
    for i in tree.descendants(under):
        inside[i] = True
    memo: dict[str, str | None] = {}

    def box_of(path: str) -> str | None:
        got = memo.get(path, "\0")
        if got != "\0":
            return got
        key = path
        # a node inside a folded copy is drawn in its block's first copy
        parts, rep = path.split(SEP), None
        for k in range(1, len(parts) + 1):
            rep = copies.get(SEP.join(parts[:k]))
            if rep is not None:
                path = SEP.join([rep, *parts[k:]])
                break
        c = cut(path, depth)
        got = None if (c.count(SEP) + 1 < depth or not c or c == under) else c  # above the cut: drawn as itself
        if got is None and rep is not None:
            got = ""   # an op directly in a folded copy, above the cut: its block's first copy's op stands for it
        memo[key] = got
        return got

    box = [("" if i in hidden else box_of(p)) if inside[i] else None for i, p in enumerate(tree.paths)]
    own: dict[str, int] = {}
    for i, b in enumerate(box):
        if b is None and inside[i]:
            own[tree.paths[i]] = own.get(tree.paths[i], 0) + 1
    many = {p for p, k in own.items() if k > OWN_OPS}
    if many:  # (the mask arithmetic beside a decoder's layers: one box of its own)
        for i, b in enumerate(box):
            if b is None and inside[i] and tree.paths[i] in many:
                box[i] = f"{tree.paths[i]}{SEP}{OWN}" if tree.paths[i] else OWN
    _ranges(box)
    return ScopeCut(under, depth, box, inside)


def _ranges(box: list) -> None:
    """Siblings past MAX_SIBLINGS boxes under one parent are drawn in runs (`blocks.0 … blocks.9`), in order:
    300 different layers in a row are 30 boxes, each opened with --scope."""
    kids: dict[str, list[str]] = {}
    for b in dict.fromkeys(b for b in box if b):
        kids.setdefault(parent_of(b), []).append(b)
    runs: dict[str, str] = {}
    for parent, names in kids.items():
        if len(names) <= MAX_SIBLINGS:
            continue
        size = -(-len(names) // RUNS)
        for k in range(0, len(names), size):
            part = names[k:k + size]
            first, last = part[0].rpartition(SEP)[2], part[-1].rpartition(SEP)[2]
            key = (f"{parent}{SEP}" if parent else "") + f"{first} … {last}{RUN}{len(part)}"
            runs.update((b, key) for b in part)
    if runs:
        box[:] = [runs.get(b, b) if b else b for b in box]


def count_boxes(sc: ScopeCut, scopes_only: bool = False) -> int:
    """How many things the index draws: scope boxes, and ops drawn as themselves (unless `scopes_only`)."""
    boxes = len({b for b in sc.box if b})
    return boxes if scopes_only else boxes + sum(1 for b, ok in zip(sc.box, sc.inside) if ok and b is None)


def _fill(coverage: float) -> str:
    """#FDE3E3 (nothing compiled) to #D9F2E3 (all compiled)."""
    lo, hi = (0xFD, 0xE3, 0xE3), (0xD9, 0xF2, 0xE3)
    return "#" + "".join(f"{round(a + (b - a) * coverage):02X}" for a, b in zip(lo, hi))


def draw_scope_index(g, graph: Graph, view: View, tree: ScopeTree, folds: tuple[Fold, ...], sc: ScopeCut,
                     params: StoredParams) -> int:
    """The boxes, the ops drawn as themselves, and the summed edges between them; returns how many boxes."""
    folded = {f.representative: f for f in folds}
    members: dict[str, list[int]] = {}
    for i, b in enumerate(sc.box):
        if b:
            members.setdefault(b, []).append(i)
    ids = {b: f"s{k}" for k, b in enumerate(members)}
    strip = _common(list(members), sc.under)
    for b, drawn in members.items():
        # the counts are one copy's (a repeated block's other copies are drawn here too)
        nodes = [i for i in drawn if tree.paths[i] == b or tree.paths[i].startswith(b + SEP)] or drawn
        clusters = {view.groups[view.group_of[i]].id for i in nodes if view.group_of[i] >= 0}
        fallbacks = sum(1 for i in nodes if view.group_of[i] < 0)
        cov = 1 - fallbacks / len(nodes)
        f = folded.get(b)
        name = b[len(strip) + 1:] if strip else b
        if b == OWN or b.endswith(SEP + OWN):
            name = f"ops of {b[:-len(OWN) - 1] or 'the top'}"
        if RUN in name:
            name, _, count = name.partition(RUN)
            name += f" ({count} layers)"
        if f is not None:
            name = (f.parent[len(strip) + 1:] + SEP if f.parent.startswith(strip + SEP) else "") + f.label
        inner = next((x for r, x in folded.items() if b.startswith(r + SEP)), None)
        lines = [name, f"{len(nodes)} op{'s' if len(nodes) != 1 else ''} · {len(clusters)} cluster"
                 f"{'s' if len(clusters) != 1 else ''} · {fallbacks} fallback{'s' if fallbacks != 1 else ''}",
                 f"coverage {fmt_pct(cov)}" + (" (each copy)" if f is not None or inner is not None else "")]
        if inner is not None:
            lines.append(f"in each of the ×{inner.count} copies of {inner.representative.rpartition(SEP)[2]}")
        if f is not None and f.differ:
            lines.append("differ: " + ", ".join(p.rpartition(SEP)[2] for p in f.differ[:4])
                         + (f" +{len(f.differ) - 4}" if len(f.differ) > 4 else ""))
        tip = [b, *lines[1:], "clusters: " + " ".join(sorted(clusters)[:12])]
        g.node(ids[b], text(*lines), shape="box3d" if f is not None else "box", style="filled,rounded",
               fillcolor=_fill(cov), color="#555555", penwidth="2" if f is not None else "1.2", tooltip=text(*tip),
               **{"class": "xc_scope" + (" xc_scope_repeat" if f is not None else "")})
    for i, (b, ok) in enumerate(zip(sc.box, sc.inside)):
        if ok and b is None and not params.hidden_node(i):
            draw_node(g, graph, view, i, "", [])
    _edges(g, graph, view, sc, ids, params)
    return len(members)


def _common(paths: list[str], under: str) -> str:
    """The scope every box lies in (at least `under`): its path is left out of the boxes' labels."""
    if not paths:
        return under
    common = paths[0].split(SEP)[:-1]
    for p in paths[1:]:
        parts = p.split(SEP)
        n = 0
        while n < min(len(common), len(parts) - 1) and common[n] == parts[n]:
            n += 1
        common = common[:n]
    got = SEP.join(common)
    return got if len(got) >= len(under) else under


def _edges(g, graph: Graph, view: View, sc: ScopeCut, ids: dict[str, str], params: StoredParams) -> None:
    inputs = {v.name: k for k, v in enumerate(graph.inputs)}
    n = len(graph.nodes)

    def end(i: int) -> tuple[str, int]:
        if not sc.inside[i]:
            return "outside", -2
        b = sc.box[i]
        return (ids[b] if b is not None else f"n{i}"), view.group_of[i]

    data: dict[tuple[str, str], list] = {}
    for j, node in enumerate(graph.nodes):
        if not sc.inside[j] or params.hidden_node(j) or sc.box[j] == "":
            continue
        dst, dk = end(j)
        for ref, pos in zip(node.inputs, graph.input_sources(j)):
            if not ref or (params.mode != "show" and is_stored(graph, ref, params, inputs)):
                continue
            if ref in inputs:
                src, sk = "inputs", -1
            else:
                if not 0 <= pos < n:
                    continue
                if sc.box[pos] == "":
                    continue
                src, sk = end(pos)
            if src == dst:
                continue
            entry = data.setdefault((src, dst), [{}, False])
            entry[0][ref] = None
            entry[1] |= sk != dk and (sk >= 0 or dk >= 0)
    for ref, parsed in zip(graph.outputs, graph.output_refs):
        pos = graph.position(parsed.node)
        if pos is not None and sc.inside[pos] and sc.box[pos] != "":
            src, _ = end(pos)
            data.setdefault((src, "outputs"), [{}, False])[0][ref] = None
    # the graph's inputs, its outputs and what lies outside the drawn scope: one node, or one per box it touches
    # when it touches more than SHARED (one node feeding 300 layers ties the layout into 300 long edges)
    ends = {"inputs": "graph inputs", "outputs": "graph outputs", "outside": f"outside {sc.under}"}
    touches = {name: sum(1 for key in data if name in key) for name in ends}
    moved: dict[tuple[str, str], list] = {}
    for (src, dst), entry in data.items():
        if src in ends and touches[src] > SHARED:
            src = f"{src}_{dst}"
        elif dst in ends and touches[dst] > SHARED:
            dst = f"{dst}_{src}"
        moved[(src, dst)] = entry
    data = moved
    for node_id in sorted({x for key in data for x in key if x.partition("_")[0] in ends}):
        base = node_id.partition("_")[0]
        g.node(node_id, text(ends[base]), shape="ellipse", style="filled", fillcolor="#EEEEEE", color=QUIET,
                   **{"class": "xc_input" if base != "outputs" else "xc_output"})
    for (src, dst), (refs, boundary) in data.items():
        types = [graph.tensor_type(r).bind(graph.dims) for r in refs]
        sizes = [t.nbytes() for t in types]
        total = None if any(b is None for b in sizes) else sum(sizes)
        label = edge_text(types[0], total) if len(refs) == 1 else f"{len(refs)} tensors · {fmt_bytes(total)}"
        attrs = {"color": BOUNDARY, "penwidth": penwidth(total), "fontcolor": "#7A5200", "class": "xc_boundary"} \
            if boundary else {"color": QUIET, "penwidth": "1", "class": "xc_plain"}
        g.edge(src, dst, label=text(label), tooltip=text(label, *list(refs)[:12]), **attrs)


def restrict(graph: Graph, view: View, nodes: tuple[int, ...], params: frozenset[int] = frozenset()) \
        -> tuple[Graph, View]:
    """The part of the picture made of `nodes` (in model order), with the parameter nodes (`params`: constants,
    variables) that feed them: what they read from elsewhere becomes inputs of its own (weights stay weights),
    the clusters keep their ids and colours, cut to these nodes."""
    keep = set(nodes)
    todo = list(nodes)
    while todo and params:
        for k in graph.input_sources(todo.pop()):
            if k in params and k not in keep:
                keep.add(k)
                todo.append(k)
    nodes = tuple(sorted(keep))
    names = {graph.nodes[i].name for i in nodes}
    given = {v.name: v for v in graph.inputs}
    inputs: dict[str, Value] = {}
    for i in nodes:
        for ref, parsed in zip(graph.nodes[i].inputs, graph.input_refs(i)):
            if not ref or parsed.node in names or ref in inputs:
                continue
            inputs[ref] = given.get(ref) or Value(ref, graph.tensor_type(ref))
    sub_nodes = [graph.nodes[i] for i in nodes]
    if any(n.control_inputs for n in sub_nodes):  # (an ordering edge from outside is left out)
        import msgspec

        sub_nodes = [msgspec.structs.replace(n, control_inputs=tuple(c for c in n.control_inputs if c in names))
                     if any(c not in names for c in n.control_inputs) else n for n in sub_nodes]
    outputs = [r for r, parsed in zip(graph.outputs, graph.output_refs) if parsed.node in names]
    used_outside = {r.node for j in range(len(graph.nodes)) if j not in keep for r in graph.input_refs(j) if r}
    outputs += [nd.name for nd in sub_nodes if nd.name in used_outside and nd.name not in outputs]
    sub = Graph(graph.name, tuple(inputs.values()), sub_nodes, tuple(outputs), graph.source, graph.dims)
    new_of = {i: k for k, i in enumerate(nodes)}
    groups, group_of = [], [-1] * len(nodes)
    for grp in view.groups:
        mine = [new_of[i] for i in grp.members if i in keep]
        if mine:
            for k in mine:
                group_of[k] = len(groups)
            groups.append(Group(grp.id, mine, grp.color, grp.label, grp.highlight))
    pick = [view.code[i] for i in nodes], [view.reason[i] for i in nodes], [view.device[i] for i in nodes]
    return sub, View(view.title, groups, group_of, *pick, caption=view.caption)


def scope_index_dot(graph: Graph, view: View, tree: ScopeTree, folds: tuple[Fold, ...], under: str, depth: int,
                    params: StoredParams) -> str:
    """The scope index of `under` ("" for the whole model) at `depth` levels, as DOT text."""
    from .dot import new_digraph

    sc = scope_cut(tree, folds, under, depth, params.nodes if params.mode != "show" else frozenset())
    title = f"{view.title}\n{'scope ' + under if under else 'top scopes'}, {depth} level{'s' if depth != 1 else ''} deep" \
            f" · {len(tree.descendants(under)):,} ops · --scope PATH draws one"
    g = new_digraph("xcviz", count_boxes(sc), title)
    draw_scope_index(g, graph, view, tree, folds, sc, params)
    return g.source
