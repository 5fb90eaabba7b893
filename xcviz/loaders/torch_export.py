"""torch.export programs (.pt2 files and live ExportedPrograms) -> Graph: placeholders become inputs (weights
with their values, named by their fully qualified names), aten calls become registry ops via the aten table."""
from __future__ import annotations

import operator
import os

from ..errors import XcvizError
from ..ir import Graph, Node, TensorType, Value, canonical_dtype, format_ref, relabel
from .torch_trust import import_torch, program_for_graph  # (reading, and which reader a file gets)

WEIGHT_KINDS = ("PARAMETER", "BUFFER", "CONSTANT_TENSOR")


# ---- types ----------------------------------------------------------------------------------------------
def _dtype(t) -> str | None:
    return canonical_dtype(str(t).removeprefix("torch."))


def _dim(d, names: dict) -> int | str:
    if isinstance(d, int):
        return d
    expr = d.node.expr
    if expr.is_Integer:
        return int(expr)
    if names:
        import sympy

        expr = expr.xreplace({s: sympy.Symbol(names[s.name]) for s in expr.free_symbols if s.name in names})
    return str(expr)


def tensor_type(v, names: dict) -> TensorType:
    shape = getattr(v, "shape", None)
    if shape is None:
        return TensorType()
    shape = tuple(shape)
    if all(type(d) is int for d in shape):
        return TensorType(shape, _dtype(v.dtype))
    return TensorType(tuple(_dim(d, names) for d in shape), _dtype(v.dtype))


def _out_types(val, names: dict) -> list[TensorType] | None:
    """The node's output types, None when it produces no tensor (shape arithmetic, assertions)."""
    if isinstance(val, (list, tuple)):
        types = [tensor_type(v, names) if v is not None else TensorType() for v in val]
        return types if any(hasattr(v, "shape") for v in val) else None
    return [tensor_type(val, names)] if hasattr(val, "shape") else None


# ---- the graph ------------------------------------------------------------------------------------------
def graph_from_program(ep, source: str | None = None, dim_names: dict | None = None) -> Graph:
    """The program's graph as an xcviz Graph (not yet finalized). `dim_names`: symbol -> the name to show."""
    import numpy as np
    import torch

    from ..ops.aten import Call, Const, NotMapped, Ref
    from ..ops.aten.adapters import translate
    from .torch_decompose import decompose_graph, functionalize_graph, live_nodes, why_undecomposed

    names = dim_names or {}
    if not isinstance(ep, torch.export.ExportedProgram):  # a .pt2 read by xcviz's reader: rewrite safely here
        functionalize_graph(ep.graph)
        decompose_graph(ep.graph)
    sig = ep.graph_signature
    specs = {s.arg.name: s for s in sig.input_specs if hasattr(s.arg, "name")}
    nodes_fx = list(ep.graph.nodes)
    node_names = {n.name for n in nodes_fx}
    ref: dict[str, str] = {}
    types: dict[str, TensorType] = {}
    inputs: list[Value] = []
    for n in nodes_fx:
        if n.op != "placeholder":
            continue
        spec, t = specs.get(n.name), tensor_type(n.meta.get("val"), names)
        kind = spec.kind.name if spec is not None else "USER_INPUT"
        if kind == "USER_INPUT":
            if t.shape is None:
                raise XcvizError(f"input {n.name!r} is not a tensor ({type(n.meta.get('val')).__name__})", where=source,
                                 hint="export with tensor inputs only")
            inputs.append(Value(n.name, t))
            ref[n.name] = n.name
        elif kind in WEIGHT_KINDS:
            fqn = spec.target
            tensor = ep.state_dict[fqn] if fqn in ep.state_dict else ep.constants[fqn]
            name = fqn if fqn not in node_names else n.name
            data = tensor if isinstance(tensor, np.ndarray) else _weight_array(tensor)  # (archive: numpy)
            inputs.append(Value(name, t, data=np.asarray(data)))
            ref[n.name] = name
        else:
            raise XcvizError(f"input {n.name!r} is a {kind.lower()}, which xcviz does not read", where=source,
                             hint="export a module without custom objects or effect tokens")
        types[ref[n.name]] = t
    inputs.sort(key=lambda v: v.data is not None)  # the user's inputs first, then weights (as for ONNX)

    nodes: list[Node] = []
    used = set(node_names) | {v.name for v in inputs}

    def arg(v):
        if isinstance(v, torch.fx.Node):
            return Ref(ref[v.name]) if v.name in ref else v.name  # a symbolic size: not a tensor
        if isinstance(v, (list, tuple)):
            return [arg(x) for x in v]
        if isinstance(v, (torch.dtype,)):
            return _dtype(v)
        if isinstance(v, (torch.device, torch.layout, torch.memory_format)):
            return str(v)
        return v

    def const_node(base: str, value) -> str:
        name, k = f"{base}_const", 1
        while name in used:
            name, k = f"{base}_const{k}", k + 1
        used.add(name)
        arr = np.asarray(value)
        nodes.append(Node(name=name, op="const", op_type="const", attrs={"value": arr, "dtype": str(arr.dtype)},
                          outputs=[TensorType(tuple(arr.shape), canonical_dtype(str(arr.dtype)))]))
        return name

    for n in nodes_fx:
        if n.op != "call_function":
            continue
        if n.target is operator.getitem:
            src, k = n.args
            if src.name in ref and k == 0 and not isinstance(src.meta.get("val"), (list, tuple)):
                continue
            ref[n.name] = format_ref(src.name, int(k))
            types[ref[n.name]] = tensor_type(n.meta.get("val"), names)
            continue
        outs = _out_types(n.meta.get("val"), names)
        if outs is None:
            continue
        ref[n.name] = n.name
        for k, t in enumerate(outs):
            types[format_ref(n.name, k)] = t
        schema = getattr(n.target, "_schema", None)
        qual = schema.name if schema is not None else getattr(n.target, "__name__", str(n.target))
        ns, _, opname = qual.partition("::")
        args = _schema_args(schema, n.args, n.kwargs) if schema is not None else list(n.args)
        call = Call(opname, [arg(a) for a in args], outs, types)
        # the module path: shown, and the node's layer (ir.scopes); never Node.scope, which is also an XLA scope,
        # a clustering barrier
        stack = n.meta.get("nn_module_stack") or {}
        module = (next(reversed(stack.values()))[0] if stack else "") or None  # the root module's path is ''
        where = f"{source or 'program'}: node {n.name!r} ({ns}.{opname}" + (f" in {module})" if module else ")")
        note = None
        try:
            if ns != "aten":
                raise KeyError(opname)
            spec = translate(call)
        except KeyError:
            if ns == "aten":
                note = f"aten.{opname} is not in xcviz's op table; {why_undecomposed(n.target)}"
            else:
                note = f"custom op {ns}::{opname}"
        except NotMapped as e:
            note = f"aten.{opname}: {e}"
        if note is not None:
            tensors = [a for a in _flat(call.args) if isinstance(a, Ref)]
            nodes.append(Node(name=n.name, op=f"{ns}.{opname}", op_type=f"{ns}.{opname}", inputs=tuple(tensors),
                              outputs=outs, known=False, note=note, where=where, module=module))
            continue
        refs = []
        for j, v in enumerate(spec.inputs):
            refs.append(const_node(n.name, v.value) if isinstance(v, Const) else "" if v is None else v)
        while refs and refs[-1] == "":
            refs.pop()
        nodes.append(Node(name=n.name, op=spec.op, op_type=spec.op, inputs=tuple(refs), attrs=dict(spec.attrs),
                          outputs=outs, where=where, module=module))

    outputs, output_names = _outputs(ep, ref)
    nodes = live_nodes(nodes, outputs)
    name = os.path.basename(source).split(".")[0] if source else type(ep).__name__
    from .torch_calls import record_calls

    return Graph(name=name or "program", inputs=inputs, nodes=nodes, outputs=outputs, source=source,
                 output_names=output_names, aten_calls=record_calls(nodes_fx, ref))


def _weight_array(tensor):
    """A weight's values as NumPy; a meta tensor (a model built without memory, as `xcviz census` builds big
    ones) as zeros of its shape that take no memory (a broadcast view of one element)."""
    import numpy as np

    if not getattr(tensor, "is_meta", False):
        return tensor.detach().cpu().numpy()
    import torch

    try:
        dtype = torch.zeros((), dtype=tensor.dtype).numpy().dtype
    except (TypeError, RuntimeError):  # bfloat16 and friends have no NumPy dtype
        dtype = np.float32
    return np.broadcast_to(np.zeros((), dtype), tuple(tensor.shape))


def _flat(values):
    for v in values:
        if isinstance(v, list):
            yield from _flat(v)
        else:
            yield v


def _schema_args(schema, args, kwargs) -> list:
    """Arguments in schema order with defaults filled in (keyword-only ones included)."""
    out = []
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            out.append(args[i])
        elif a.name in kwargs:
            out.append(kwargs[a.name])
        elif a.has_default_value():
            out.append(a.default_value)
        else:
            out.append(None)
    return out


def _outputs(ep, ref: dict) -> tuple[list[str], dict[str, str]]:
    """The program's user outputs in order (mutated buffers left out), with their names where a ref differs."""
    out_node = next(n for n in ep.graph.nodes if n.op == "output")
    values = out_node.args[0] if isinstance(out_node.args[0], (list, tuple)) else [out_node.args[0]]
    specs = ep.graph_signature.output_specs
    outputs, names = [], {}
    for v, spec in zip(values, specs):
        if spec.kind.name != "USER_OUTPUT" or not hasattr(v, "name") or v.name not in ref:
            continue
        outputs.append(ref[v.name])
        if ref[v.name] != v.name:
            names[ref[v.name]] = v.name
    return outputs, names


def symbol_names(ep, dynamic_shapes) -> dict[str, str]:
    """Symbol -> the name of the torch.export.Dim it stands for, matched through the user inputs' shapes."""
    if not dynamic_shapes:
        return {}
    user = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder"}
    specs = list(dynamic_shapes.values()) if isinstance(dynamic_shapes, dict) else list(dynamic_shapes)
    out: dict[str, str] = {}
    for name, spec in zip(user, specs):
        shape = getattr(vals.get(name), "shape", None)
        axes = spec.items() if isinstance(spec, dict) else enumerate(spec or ())
        for axis, dim in axes:
            if shape is None or dim is None or axis >= len(shape) or isinstance(shape[axis], int):
                continue
            expr = shape[axis].node.expr
            if expr.is_Symbol and getattr(dim, "__name__", None):
                out[expr.name] = dim.__name__
    return out


def from_torch(obj, example_args=None, dynamic_shapes=None, *, example_kwargs=None, decompose: bool = False,
               dims=None) -> Graph:
    """An nn.Module (exported here with torch.export.export, strict=False) or an ExportedProgram as a finalized
    Graph; `decompose` runs ep.run_decompositions() first (core ATen ops only)."""
    torch = import_torch()
    from ..passes.prepare import prepare

    if isinstance(obj, torch.export.ExportedProgram):
        ep = obj
    elif isinstance(obj, torch.nn.Module):
        if example_args is None and example_kwargs is None:
            raise XcvizError("exporting a module needs example inputs", hint="from_torch(model, (x,))")
        args = tuple(example_args) if isinstance(example_args, (list, tuple)) else (example_args,)
        try:
            ep = torch.export.export(obj, args, kwargs=example_kwargs, dynamic_shapes=dynamic_shapes, strict=False)
        except Exception as e:
            raise XcvizError(f"torch.export failed: {type(e).__name__}: {e}".splitlines()[0][:300],
                             hint="see torch.export's documentation on what a module may do") from None
    else:
        raise XcvizError(f"from_torch takes an nn.Module or an ExportedProgram, not {type(obj).__name__}")
    if decompose:
        ep = ep.run_decompositions()
    else:
        from .torch_decompose import decompose_unknown

        ep = decompose_unknown(ep)
    graph = relabel(graph_from_program(ep, None, symbol_names(ep, dynamic_shapes)),
                    name=type(obj).__name__ if isinstance(obj, torch.nn.Module) else "program")
    return prepare(graph, onnx=True, dims=dims)


def load_program(path: str, dims=None, max_file_bytes: int | None = None, trust_pickle: bool = False,
                 limits=None):
    """(the program, its finalized Graph) of a .pt2 file, for commands that need both: xcviz's reader's
    program with a GraphModule over its graph (torch.export.load's only with `trust_pickle`)."""
    from . import DEFAULT_MAX_FILE_BYTES, read_file
    from .budget import Limits
    from ..passes.prepare import prepare

    if not path.lower().endswith(".pt2"):
        raise XcvizError("not a torch.export program", where=path, hint="this command reads .pt2 files written by "
                         "torch.export.save")
    max_file_bytes = max_file_bytes or DEFAULT_MAX_FILE_BYTES
    read_file(path, max_file_bytes)  # (the existence and size checks every load makes)
    ep = program_for_graph(path, trust_pickle, limits or Limits(max_file_bytes, source=path))
    if not hasattr(ep, "graph_module"):
        torch = import_torch(path)
        ep.graph_module = torch.fx.GraphModule(torch.nn.Module(), ep.graph)
    return ep, prepare(graph_from_program(ep, path), onnx=True, dims=dims)
