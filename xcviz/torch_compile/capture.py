"""A graph Dynamo hands to a backend -> the exported aten program and its xcviz Graph, through the path of
`from_torch` (torch.export non-strict, then the aten op table): parameters and buffers become weights named by
their module path, the other placeholders inputs named by the user's variable."""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from ..errors import XcvizError
from ..ir import relabel

_PIECE = re.compile(r"\['([^']*)'\]|\.(\w+)|\[(\d+)\]")
_CONTAINERS = {"_modules", "_parameters", "_buffers"}


@dataclass
class Placeholder:
    name: str            # the FX placeholder's name in Dynamo's graph
    source: str          # Dynamo's source of the value (L['x'], L['self']._modules['fc']._parameters['weight'])
    label: str           # what xcviz calls it: x, fc.weight
    kind: str            # "input", "parameter", "buffer" or "scalar" (a SymInt or number Dynamo passes in)


@dataclass
class Captured:
    program: object                  # torch.export.ExportedProgram of the graph
    graph: object                    # its finalized xcviz Graph
    placeholders: list[Placeholder]  # Dynamo's graph inputs, in order
    aten: dict[str, str] = field(default_factory=dict)   # FX node name -> "aten.linear" (what a torch user reads)
    symbolic: bool = False           # Dynamo passed symbolic sizes (a dynamic recompilation): shapes shown at the hints
    feeds: dict[str, int] = field(default_factory=dict)     # program placeholder -> Dynamo's argument position
    mutated: dict[str, int] = field(default_factory=dict)   # mutated buffer/input (its spec target) -> position
    xname: dict[str, str] = field(default_factory=dict)     # xcviz input name -> program placeholder
    constants: dict[str, object] = field(default_factory=dict)  # program placeholder -> a lifted constant tensor


def source_name(node) -> str:
    arg = node.meta.get("grapharg")
    src = getattr(arg, "source", None)
    try:
        return src.name if isinstance(getattr(src, "name", None), str) else (src.name() if src is not None else "")
    except Exception:  # noqa: BLE001 - a source kind without a name: the placeholder's own name is used
        return ""


def _label(source: str, fallback: str) -> tuple[str, str]:
    """(label, kind) from a Dynamo source: L['self']._modules['fc']._parameters['weight'] -> fc.weight, parameter."""
    pieces = [next(g for g in m.groups() if g is not None) for m in _PIECE.finditer(source)]
    if not pieces:
        return fallback, "input"
    kind = "parameter" if "_parameters" in pieces else "buffer" if "_buffers" in pieces else "input"
    if kind != "input":
        path = [p for p in pieces[1:] if p not in _CONTAINERS]   # pieces[0]: the module's own local name
        return ".".join(path) or fallback, kind
    return ".".join(pieces), kind


def _identifier(text: str, taken: set[str]) -> str:
    name = re.sub(r"\W", "_", text).strip("_") or "arg"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "arg_" + name
    base, k = name, 1
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


def placeholders(gm, example_inputs) -> list[Placeholder]:
    import torch

    out = []
    nodes = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for n, ex in zip(nodes, example_inputs):
        label, kind = _label(source_name(n), n.name)
        if not isinstance(ex, torch.Tensor):
            kind = "scalar"
        out.append(Placeholder(n.name, source_name(n), label, kind))
    return out


def _real(t):
    """A real tensor for export: Dynamo hands fake tensors to some backends (wrapped ones); zeros of the same
    shape stand for them, which export's own fake tracing never reads."""
    import torch

    if isinstance(t, torch.SymInt):
        return int(t.node.hint) if t.node.hint is not None else 1
    if isinstance(t, torch.Tensor) and type(t).__name__ == "FakeTensor":
        return torch.zeros(t.shape, dtype=t.dtype)
    return t


def _module(gm, phs: list[Placeholder], example_inputs):
    """A module whose parameters/buffers are the graph's weight placeholders (at their module paths) and whose
    forward takes the other placeholders by the user's names, so the exported program reads as from_torch's."""
    import torch

    root = torch.nn.Module()
    user: list[int] = []
    fixed: dict[int, object] = {}
    fqn: dict[int, str] = {}
    taken: set[str] = set()
    for k, (ph, ex) in enumerate(zip(phs, example_inputs)):
        if ph.kind in ("parameter", "buffer") and isinstance(ex, torch.Tensor):
            path = [_identifier(p, set()) for p in ph.label.split(".")]
            mod = root
            for part in path[:-1]:
                if not hasattr(mod, part) or not isinstance(getattr(mod, part), torch.nn.Module):
                    if hasattr(mod, part):
                        break
                    mod.add_module(part, torch.nn.Module())
                mod = getattr(mod, part)
            leaf = path[-1]
            if hasattr(mod, leaf):  # a name clash: keep the placeholder as an input
                user.append(k)
                continue
            value = _real(ex)
            if ph.kind == "parameter" and isinstance(value, torch.nn.Parameter):
                mod.register_parameter(leaf, value)
            else:
                mod.register_buffer(leaf, value.detach() if ph.kind == "parameter" else value)
            fqn[k] = ".".join(path)
        elif ph.kind == "scalar":
            fixed[k] = _real(ex)   # a size Dynamo made symbolic: fixed at this call's value (shapes at the hints)
        else:
            user.append(k)
    names = [_identifier(phs[k].label, taken | {"self"}) for k in user]
    n_all = len(phs)

    def weight(q: str):  # read at call time: export swaps the module's tensors for fake ones while tracing
        obj = root
        for part in q.split("."):
            obj = getattr(obj, part)
        return obj

    def run(*user_args):
        args = [None] * n_all
        for k, v in zip(user, user_args):
            args[k] = v
        for k, q in fqn.items():
            args[k] = weight(q)
        for k, v in fixed.items():
            args[k] = v
        return gm(*args)

    # forward's parameters are the user's names: torch.export names the placeholders after them
    scope: dict = {}
    exec(f"def forward(self, {', '.join(names)}):\n    return _run({', '.join(names)})\n", {"_run": run}, scope)  # noqa: S102 - our own identifiers only
    root.forward = scope["forward"].__get__(root)
    return root, user, fqn


def _has_symbols(v) -> bool:
    import torch

    return isinstance(v, torch.SymInt) or (isinstance(v, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in v.shape))


def capture(gm, example_inputs, name: str = "graph") -> Captured:
    """Export Dynamo's graph (torch level) to aten and convert it as from_torch does."""
    import torch

    from ..passes.prepare import prepare
    from ..loaders.torch_export import graph_from_program

    phs = placeholders(gm, example_inputs)
    symbolic = any(ph.kind == "scalar" or _has_symbols(n.meta.get("example_value"))
                   for ph, n in zip(phs, (n for n in gm.graph.nodes if n.op == "placeholder")))
    module, user, fqn = _module(gm, phs, example_inputs)
    args = tuple(_real(example_inputs[k]) for k in user)
    try:
        ep = torch.export.export(module, args, strict=False)
    except Exception as e:  # noqa: BLE001 - torch's own message says what could not be traced
        raise XcvizError(f"{name}: torch.export of Dynamo's graph failed: {type(e).__name__}: {e}".splitlines()[0][:300],
                         hint="the graph runs as Dynamo gave it; report the model to xcviz") from None
    ep = _functional(ep, name)
    graph = relabel(graph_from_program(ep, None, {}), name=name)
    aten = {}
    for n in ep.graph.nodes:
        if n.op == "call_function":
            schema = getattr(n.target, "_schema", None)
            aten[n.name] = schema.name.replace("::", ".") if schema is not None else getattr(n.target, "__name__", str(n.target))
    cap = Captured(ep, prepare(graph, onnx=True), phs, aten, symbolic)
    _wire(cap, user, fqn)
    return cap


def _functional(ep, name: str):
    """The program with its in-place aten calls functionalized (`x += r` -> aten.add plus the readers of x reading
    the sum; buffer writes become program outputs), as torch.compile's own backends see graphs after
    aot_autograd's functionalization; the aten ops outside xcviz's table decomposed by torch's default table, as
    from_torch does; and its dead calls dropped (torch.export keeps the masks HF models build and never use)."""
    from ..loaders.torch_decompose import decompose_unknown

    try:
        ep = decompose_unknown(ep)
    except Exception as e:  # noqa: BLE001 - torch's own message says what could not be functionalized
        raise XcvizError(f"{name}: functionalizing Dynamo's graph failed: {type(e).__name__}: {e}".splitlines()[0][:300],
                         hint="the graph runs as Dynamo gave it; report the model to xcviz") from None
    gm = ep.graph_module
    if gm.graph.eliminate_dead_code():
        gm.recompile()
    return ep


def _wire(cap: Captured, user: list[int], fqn: dict[int, str]) -> None:
    """Where each program placeholder's value comes from among Dynamo's arguments, and the names xcviz gave them
    (graph_from_program names a weight by its module path unless a node already has that name)."""
    ep = cap.program
    pos_of = {q: k for k, q in fqn.items()}
    fx_names = {n.name for n in ep.graph.nodes}
    i_user = 0
    for spec in ep.graph_signature.input_specs:
        name = getattr(spec.arg, "name", None)
        kind = spec.kind.name
        if kind == "USER_INPUT":
            if name is not None:
                cap.feeds[name] = user[i_user]
                cap.xname[name] = name
            i_user += 1
        elif name is not None and spec.target in pos_of:
            cap.feeds[name] = pos_of[spec.target]
            cap.xname[spec.target if spec.target not in fx_names else name] = name
        elif kind == "CONSTANT_TENSOR" and name is not None:   # a tensor the program lifted: its own value
            cap.constants[name] = ep.constants[spec.target]
            cap.xname[spec.target if spec.target not in fx_names else name] = name
    for spec in ep.graph_signature.output_specs:
        if spec.kind.name in ("BUFFER_MUTATION", "PARAMETER_MUTATION") and spec.target in pos_of:
            cap.mutated[spec.target] = pos_of[spec.target]
        elif spec.kind.name == "USER_INPUT_MUTATION" and spec.target in cap.feeds:
            cap.mutated[spec.target] = cap.feeds[spec.target]
