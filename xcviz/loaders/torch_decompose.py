"""Rewrites of torch.export programs before and after translation: the aten ops outside xcviz's table, and only
those, decomposed by torch's default table (live programs and .pt2 graphs alike), and dead calls dropped."""
from __future__ import annotations

from ..ir import Node


def _unknown(ep) -> set:
    """The aten overloads of the program outside xcviz's op table."""
    from ..ops.aten.adapters import ADAPTERS

    out = set()
    for n in ep.graph.nodes:
        schema = getattr(n.target, "_schema", None) if n.op == "call_function" else None
        if schema is not None and schema.name.startswith("aten::") and schema.name[6:] not in ADAPTERS:
            out.add(n.target)
    return out


def decompose_unknown(ep):
    """ep with every aten op outside xcviz's table decomposed by torch's default table (run_decompositions),
    the ops xcviz has rows for kept as they are; ep itself when there is none, or torch cannot decompose them."""
    import torch

    unknown = _unknown(ep)
    mutating = any(n.op == "call_function" and _writes_self(n.target) for n in ep.graph.nodes)
    table = torch.export.default_decompositions()
    if not mutating and not any(o in table for o in unknown):
        return ep  # (in-place writes: run_decompositions functionalizes them into scatters, whatever the table)
    from ..ops.aten.adapters import ADAPTERS

    for o in list(table.keys()):
        if o not in unknown and o.name().split("::")[-1].split(".")[0] in ADAPTERS:
            del table[o]  # (xcviz runs it as it is: one row, not its decomposition)
    try:
        return ep.run_decompositions(table)
    except Exception:  # noqa: BLE001 - a decomposition torch cannot trace leaves those ops unknown, said per node
        return ep


def why_undecomposed(target) -> str:
    """Why an aten op outside the table is still there: torch cannot decompose it, or not at these shapes."""
    import torch

    if target in torch.export.default_decompositions():
        return "torch decomposes it, but not here (symbolic shapes, or the decomposition failed to trace)"
    return "torch's default decompositions do not cover it"


def decompose_graph(graph) -> None:
    """In place, on an FX graph rebuilt from a .pt2's JSON (nothing unpickled): each call of an aten op outside
    xcviz's table whose inputs have static shapes is replaced by its decomposition from torch's default table,
    traced by torch's own code on fake tensors made from the shapes and dtypes the file states. What cannot be
    decomposed so (symbolic shapes, no decomposition, a failing trace) stays as it is: unknown, with its note."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx

    from ..ops.aten.adapters import ADAPTERS

    targets = [n for n in graph.nodes if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
               and n.target.namespace == "aten" and n.target._schema.name[6:] not in ADAPTERS]
    if not targets:
        return
    table = torch.export.default_decompositions()
    for n in targets:
        fn = table[n.target] if n.target in table else None  # (the table's .get does not look up: index it)
        if fn is None or not hasattr(n.meta.get("val"), "shape"):
            continue  # (multi-output ops are left whole: their getitem users would need rewiring)
        tensors = [a for a in n.all_input_nodes]
        vals = [a.meta.get("val") for a in tensors]
        if any(v is None or not all(type(d) is int for d in v.shape) for v in vals):
            continue
        try:
            with FakeTensorMode(allow_non_fake_inputs=False) as mode:
                fakes = [mode.from_tensor(torch.empty(tuple(v.shape), dtype=v.dtype)) for v in vals]

                def call(*ts, _n=n, _fn=fn):
                    env = dict(zip(_n.all_input_nodes, ts))
                    args = torch.fx.node.map_arg(_n.args, env.__getitem__)
                    kwargs = torch.fx.node.map_arg(_n.kwargs, env.__getitem__)
                    return _fn(*args, **kwargs)

                sub = make_fx(call, decomposition_table=table, tracing_mode="fake")(*fakes).graph
        except Exception:  # noqa: BLE001 - a decomposition torch cannot trace here: the op stays unknown
            continue
        _inline(graph, n, sub, tensors)


def _inline(graph, node, sub, inputs) -> None:
    """Replace `node` by the nodes of `sub` (placeholders bound to `inputs`), their metadata as make_fx left it."""
    env, out = {}, None
    placeholders = [p for p in sub.nodes if p.op == "placeholder"]
    env.update(zip(placeholders, inputs))
    with graph.inserting_before(node):
        for s in sub.nodes:
            if s.op == "placeholder":
                continue
            if s.op == "output":
                out = torch_map(s.args[0], env)
                break
            new = graph.node_copy(s, lambda a: env[a])
            new.meta["nn_module_stack"] = node.meta.get("nn_module_stack", {})
            env[s] = new
    if out is None or isinstance(out, (list, tuple)):
        return
    node.replace_all_uses_with(out)
    graph.erase_node(node)


def torch_map(value, env):
    import torch

    return torch.fx.node.map_arg(value, env.__getitem__)


def live_nodes(nodes: list[Node], outputs: list[str]) -> list[Node]:
    """The nodes some output depends on. torch.export keeps dead pure calls (HF models build masks they never
    use); ONNX exporters drop them, and TF's graph pruning would: a cluster of dead code is no cluster."""
    from ..ir import parse_ref

    need = {parse_ref(o)[0] for o in outputs}
    keep = []
    for n in reversed(nodes):
        if n.name in need:
            keep.append(n)
            need.update(parse_ref(i)[0] for i in n.inputs if i)
    return keep[::-1]


def functionalize_graph(graph) -> None:
    """In place, on an FX graph rebuilt from a .pt2's JSON: each in-place aten call (`copy_`, `fill_`,
    `masked_fill_`, ...; torch.export's default IR keeps them on intermediates, as BART's shift_tokens_right)
    becomes its out-of-place overload, and a write into a slice or select view of a tensor becomes a
    slice_scatter / select_scatter of that tensor, through chains of views. Later readers of the written tensor
    read the new value, as torch's functionalization would make them (run_decompositions does it for live
    programs). An in-place write into another kind of view stays and is refused by the table."""
    import torch

    aten = torch.ops.aten
    order = {n: i for i, n in enumerate(graph.nodes)}
    for m in list(graph.nodes):
        target = m.target
        if m.op != "call_function" or not isinstance(target, torch._ops.OpOverload) or not m.args:
            continue
        if not _writes_self(target):
            continue
        functional = getattr(getattr(aten, target._schema.name[6:-1], None), target._overloadname, None)
        if functional is None:
            continue
        m.target = functional
        _readers_see(graph, order, m, m.args[0], m)


def _writes_self(target) -> bool:
    """An in-place method (`x.add_(y)`): it writes its first argument. (Ops that update other arguments,
    batch norm's running statistics, are read as the table reads them.)"""
    import torch

    if not isinstance(target, torch._ops.OpOverload):
        return False
    args = target._schema.arguments
    return bool(args) and args[0].alias_info is not None and args[0].alias_info.is_write \
        and target._schema.name.endswith("_")


def _readers_see(graph, order, after, old, new) -> None:
    """Every reader of `old` placed after `after` reads `new`; if `old` is a view, its base gets the write."""
    import torch

    aten = torch.ops.aten
    for user in list(old.users):
        if user is not new and order.get(user, -1) > order[after]:
            user.replace_input_with(old, new)
    view = old.target if old.op == "call_function" else None
    if view not in (aten.slice.Tensor, aten.select.int):
        return
    base = old.args[0]
    with graph.inserting_after(new):
        if view is aten.slice.Tensor:
            rest = list(old.args[1:]) + [None] * (4 - len(old.args[1:]))
            dim, start, end, step = rest[0] if rest[0] is not None else 0, rest[1], rest[2], rest[3] or 1
            scattered = graph.call_function(aten.slice_scatter.default, (base, new, dim, start, end, step))
        else:
            scattered = graph.call_function(aten.select_scatter.default, (base, new, *old.args[1:3]))
    scattered.meta["val"] = base.meta.get("val")
    scattered.meta["nn_module_stack"] = new.meta.get("nn_module_stack", {})
    order[scattered] = order[new] + 0.5
    _readers_see(graph, order, after, base, scattered)
