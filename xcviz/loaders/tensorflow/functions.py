"""A GraphDef's function library: the call graph (recursion refused), each call's body ops, and inlining."""
from __future__ import annotations

from dataclasses import replace

import msgspec

from ...errors import XcvizError
from .graphdef import split_input

# attributes that name a function body on TF's functional ops
FUNC_ATTRS = ("f", "body", "cond", "then_branch", "else_branch", "branches")
# output argument names of multi-output ops, in order (for `node:arg:i` refs inside function bodies)
_OUT_ARGS = {"FusedBatchNormV3": ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2",
                                  "reserve_space_3"),
             "FusedBatchNorm": ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"),
             "Switch": ("output_false", "output_true"), "Merge": ("output", "value_index"),
             "TopKV2": ("values", "indices"), "Unique": ("y", "idx"),
             "StatelessRandomGetKeyCounter": ("key", "counter"),
             "StatelessRandomGetKeyCounterAlg": ("key", "counter", "alg"),
             "TensorListPopBack": ("output_handle", "tensor"), "UniqueWithCounts": ("y", "idx", "count"),
             "UniqueV2": ("y", "idx"), "ListDiff": ("out", "idx"), "MaxPoolWithArgmax": ("output", "argmax"),
             "Qr": ("q", "r"), "Svd": ("s", "u", "v"), "BroadcastGradientArgs": ("r0", "r1"),
             "SoftmaxCrossEntropyWithLogits": ("loss", "backprop"), "TopK": ("values", "indices")}


def called(node_def, functions: dict) -> list[str]:
    """Names of the library functions a NodeDef calls (its op, or its function-valued attributes)."""
    out = [node_def.op] if node_def.op in functions else []
    for key in FUNC_ATTRS:
        if key in node_def.attr:
            v = node_def.attr[key]
            names = [f.name for f in v.list.func] if v.WhichOneof("value") == "list" else [v.func.name]
            out += [n for n in names if n]
    return out


def library(graph_def, source: str) -> dict:
    """{name: FunctionDef}, after checking that no function calls itself, directly or not."""
    functions = {f.signature.name: f for f in graph_def.library.function}
    state: dict[str, int] = {}  # 1: on the DFS stack, 2: done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2 or name not in functions:
            return
        if state.get(name) == 1:
            cycle = " -> ".join(path[path.index(name):] + [name])
            raise XcvizError(f"the function library has a recursive call: {cycle}", where=source,
                             hint="TensorFlow cannot run it either; check how the GraphDef was made")
        state[name] = 1
        for nd in functions[name].node_def:
            for callee in called(nd, functions):
                visit(callee, path + [name])
        state[name] = 2

    for name in sorted(functions):
        visit(name, [])
    return functions


def body_ops(name: str, functions: dict, memo: dict | None = None) -> frozenset[str]:
    """Every op a function's body runs, through nested calls (the library is known to be acyclic)."""
    memo = {} if memo is None else memo
    if name not in memo:
        ops: set[str] = set()
        for nd in functions[name].node_def if name in functions else ():
            ops.add(nd.op)
            for callee in called(nd, functions):
                ops |= body_ops(callee, functions, memo)
        memo[name] = frozenset(ops)
    return memo[name]


DT_RESOURCE = 20
# ops whose inputs include a resource handle (a variable, a TensorArray, a stack, an RNG state)
RESOURCE_INPUT_OPS = frozenset({
    "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp", "VarIsInitializedOp",
    "VariableShape", "DestroyResourceOp", "ResourceGather", "ResourceGatherNd", "ResourceScatterAdd",
    "ResourceScatterSub", "ResourceScatterMul", "ResourceScatterDiv", "ResourceScatterMin", "ResourceScatterMax",
    "ResourceScatterUpdate", "ResourceScatterNdUpdate", "ResourceScatterNdAdd", "ResourceStridedSliceAssign",
    "RngReadAndSkip", "RngSkip", "StatefulUniform", "StatefulStandardNormalV2", "StatefulUniformInt",
    "StatefulUniformFullInt", "StatefulTruncatedNormal"})


def body_resource_ops(name: str, functions: dict, memo: dict | None = None) -> frozenset[str]:
    """The ops of a function's body (through nested calls) that take a resource input: a resource argument,
    a VarHandleOp of the body, or an op that only reads handles (RecursiveCompilabilityChecker refuses them
    inside called functions unless the device clusters resource ops unsafely)."""
    memo = {} if memo is None else memo
    if name in memo:
        return memo[name]
    fdef = functions.get(name)
    found: set[str] = set()
    if fdef is not None:
        handles = {a.name for a in fdef.signature.input_arg if a.type == DT_RESOURCE}
        handles |= {nd.name for nd in fdef.node_def if nd.op == "VarHandleOp"}
        for nd in fdef.node_def:
            sources = {split_input(r)[0].split(":")[0] for r in nd.input if not r.startswith("^")}
            if nd.op in RESOURCE_INPUT_OPS or sources & handles:
                found.add(nd.op)
            for callee in called(nd, functions):
                found |= body_resource_ops(callee, functions, memo)
    memo[name] = frozenset(found)
    return memo[name]


def body_ref(ref: str, ops: dict[str, str], args: dict[str, str], prefix: str) -> str:
    """A FunctionDef input ('x', 'n:out:1', '^n') -> a graph ref with the call's prefix."""
    base, ctrl = split_input(ref)
    if ctrl:
        return "^" + (args.get(base) or prefix + base)
    parts = ref.split(":")
    if len(parts) == 1:
        return args[parts[0]] if parts[0] in args else prefix + parts[0]
    node = parts[0]
    if len(parts) > 2 and not parts[2].isdigit():
        raise XcvizError(f"function input {ref[:200]!r}: output index {parts[2][:40]!r} is not a number",
                         hint="the file is corrupted or crafted")
    k = int(parts[2]) if len(parts) > 2 else 0
    names = _OUT_ARGS.get(ops.get(node, ""), ())
    if parts[1] in names:
        k += names.index(parts[1])
    return prefix + node if k == 0 else f"{prefix}{node}:{k}"


def inline(node_def, fdef, inputs: list[str], new_node) -> tuple[list, list[str]]:
    """The body of `fdef` as new NodeDefs named `<call>/<node>`, fed by the call's `inputs`; returns them and
    the refs of the function's outputs (in signature order)."""
    prefix = node_def.name + "/"
    args = {a.name: ref for a, ref in zip(fdef.signature.input_arg, inputs)}
    ops = {nd.name: nd.op for nd in fdef.node_def}
    out = []
    for nd in fdef.node_def:
        copy = new_node()
        copy.CopyFrom(nd)
        copy.name = prefix + nd.name
        del copy.input[:]
        for ref in nd.input:
            r = body_ref(ref, ops, args, prefix)
            copy.input.append(r)
        if not copy.device:
            copy.device = node_def.device
        out.append(copy)
    rets = [body_ref(fdef.ret[a.name], ops, args, prefix) for a in fdef.signature.output_arg]
    return out, rets


def function_graph(fdef, library: dict, source: str, arg_types: list | None = None):
    """A FunctionDef as a finalized Graph: its arguments are the graph inputs (in signature order), its
    results the outputs; function-valued attributes inside it carry the library (ir.TFFunction).
    `arg_types`: a caller's input types, over the argument shapes the FunctionDef records (known ones only)."""
    from ...passes.prepare import prepare
    from .attrs import dtype_name
    from .graphdef import nodes_to_graph
    from .protos import message_classes

    node_type = message_classes()["NodeDef"]
    ops = {nd.name: nd.op for nd in fdef.node_def}
    args = {a.name: a.name for a in fdef.signature.input_arg}
    nodes = []
    for i, a in enumerate(fdef.signature.input_arg):
        ph = node_type(name=a.name, op="Placeholder")
        dt = dtype_name(a.type) if a.type else None
        if dt and dt not in ("resource", "variant"):
            ph.attr["dtype"].type = a.type
        shapes = fdef.arg_attr[i].attr["_output_shapes"].list.shape if i in fdef.arg_attr else []
        if len(shapes) == 1 and dt not in ("resource", "variant"):
            ph.attr["shape"].shape.CopyFrom(shapes[0])
        nodes.append(ph)
    for nd in fdef.node_def:
        copy = node_type()
        copy.CopyFrom(nd)
        del copy.input[:]
        copy.input.extend(body_ref(r, ops, args, "") for r in nd.input)
        nodes.append(copy)
    rets = [body_ref(fdef.ret[a.name], ops, args, "") for a in fdef.signature.output_arg]
    graph = nodes_to_graph(nodes, fdef.signature.name, source, outputs=rets)
    order = list(args)
    graph = replace(graph, inputs=sorted(graph.inputs, key=lambda v: order.index(v.name)))
    if arg_types is not None and len(arg_types) == len(graph.inputs):
        graph = replace(graph, inputs=[replace(v, type=t) if t.shape is not None and (v.type.dtype is None or t.dtype
                                                                                   == v.type.dtype) else v
                                       for v, t in zip(graph.inputs, arg_types)])
    return prepare(wrap_functions(graph, library), allow_unknown=True)


def call_types(fn, arg_types: list) -> list | None:
    """The output types of calling library function `fn` (a TFFunction) with inputs of these types: its body's
    shape inference (ops.tf.functional reads them for a call the file gives no types; None when the body
    cannot be read)."""
    from ...errors import XcvizError
    from ...ir import TensorType, parse_ref

    try:
        body = function_graph(fn.fdef, fn.library, f"function {str(fn)!r}", arg_types)
    except (XcvizError, ValueError, TypeError, KeyError, IndexError):  # (a body read here only for its types)
        return None
    by_name = {n.name: n for n in body.nodes}
    types = {v.name: v.type for v in body.inputs}
    out = []
    for ref in body.outputs:
        name, k = parse_ref(ref)
        node = by_name.get(name)
        out.append(types.get(ref, TensorType()) if node is None else
                   (node.outputs[k] if k < len(node.outputs) else TensorType()))
    return out


def wrap_functions(graph, library: dict):
    """The graph with function-valued attributes (body, cond, then/else branches, f), which the GraphDef reader
    gives as names, as ir.TFFunction values that carry the library (one FrozenDict they share)."""
    from ...ir import FrozenDict, TFFunction

    shared = FrozenDict(library)
    nodes = []
    for node in graph.nodes:
        new = {}
        for k in FUNC_ATTRS:
            v = node.attrs.get(k)
            if type(v) is str and v in library:
                new[k] = TFFunction(v, library[v], shared, call_types)
            elif isinstance(v, list) and v and all(type(f) is str and f in library for f in v):
                new[k] = [TFFunction(f, library[f], shared, call_types) for f in v]
        nodes.append(msgspec.structs.replace(node, attrs={**node.attrs, **new}) if new else node)
    return replace(graph, nodes=nodes)
